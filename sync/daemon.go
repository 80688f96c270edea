package sync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	gosync "sync"
	"time"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/redact"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// Settings are everything the daemon is built from: each package's own
// configuration, secrets resolved. The command builds them from the YAML
// file; the demo from the example file with its own addresses; tests from
// their fixtures.
type Settings struct {
	// Insurers are the services the daemon works with, one engine each,
	// in the order of the file (at least one; a lone remote: section is
	// the insurer DefaultInsurer).
	Insurers []Insurer
	Shop     shopdb.Config
	// Sync is every engine's configuration; an insurer's Schedule and
	// Concurrency, when set, replace its own.
	Sync Config
	// Notify configures the notifiers (none by default); the write-back
	// statements are part of Shop's mapping.
	Notify NotifyConfig
	// Secrets is the process's one set of secrets: Open hands it to the
	// shop's tables, every insurer's client and token, the engines' log
	// and texts and the outbox (shared), and every token the clients send
	// joins it. nil: a set of the daemon's own, which holds the tokens
	// only.
	Secrets *redact.Secrets
}

// shared returns s with its one set of secrets in each package's
// configuration (see Settings.Secrets), made first when s has none.
func (s Settings) shared() Settings {
	s.Secrets = cmp.Or(s.Secrets, redact.New())
	s.Shop.Redact = s.Secrets
	s.Sync.Secrets = s.Secrets
	s.Notify.Secrets = s.Secrets
	s.Insurers = slices.Clone(s.Insurers)
	for i := range s.Insurers {
		s.Insurers[i].Remote.Secrets = s.Secrets
	}
	return s
}

// OpenOptions say how Open prepares the daemon.
type OpenOptions struct {
	// Migrate applies pending migrations of quotesync's state tables (run,
	// once). Without it the tables must be current; with AllowNoTables
	// they may also not exist yet (a dry run on a fresh install).
	Migrate       bool
	AllowNoTables bool
	// StateOnly assembles the daemon to change quotesync's state only
	// (`quotesync retry`): no token is read, and a call to the remote
	// fails.
	StateOnly bool
	// Maintenance assembles the daemon to settle its insurers (`quotesync
	// insurers`): the rows written before insurers are neither adopted
	// nor refused, and live requests of an insurer no longer configured
	// are not refused.
	Maintenance bool
	// Log is the daemon's logger; the engine's events are logged on it
	// (named "sync"), the MySQL driver's own diagnostics too ("mysql").
	// Default: none.
	Log *zap.Logger
	// Observers receive the engines' events after the log.
	Observers []Observer
	// ObserveCall, when set, is told about every remote call attempt and
	// the insurer it went to.
	ObserveCall func(insurer string, ci remote.CallInfo)
}

// Daemon is quotesync assembled: the shop database (its mapping, and
// quotesync's store on the same pool), and for each insurer its remote
// client and its engine. The command, the demo and the tests all build it
// with Open.
type Daemon struct {
	Shop  *shopdb.DB
	Store *store.Store
	// Engines work one insurer each, in the order of Settings.Insurers;
	// they share the pool, the single-instance lock (Run, Once) and the
	// Outbox.
	Engines []*Engine
	// Engine and Remote are the first insurer's engine and client: the
	// only ones of a lone remote: section.
	Engine *Engine
	Remote *remote.Client
	// Outbox delivers the write-back and the notifications of every
	// insurer; Run works it, Once after its passes.
	Outbox *Outbox

	obs    []Observer   // every engine's observers after its log
	fps    fingerprints // the engines' shared fingerprint read (fingerprints.go)
	states stateReads   // the engines' shared estimate-state reads (states.go)
}

// Open connects to the shop database (migrating or checking quotesync's
// state tables, adopting the rows written before insurers), refuses
// live requests of an insurer no longer configured, and builds each
// insurer's remote client and engine.
func Open(ctx context.Context, s Settings, o OpenOptions) (*Daemon, error) {
	log := cmp.Or(o.Log, zap.NewNop())
	if err := s.validateInsurers(); err != nil {
		return nil, err
	}
	s = s.shared()
	shop := s.Shop
	if shop.DriverLog == nil {
		driverLog := log.Named("mysql")
		shop.DriverLog = func(msg string) { driverLog.Warn("mysql driver", zap.String("detail", msg)) }
	}
	db, err := shopdb.Open(ctx, shop)
	if err != nil {
		return nil, fmt.Errorf("connect to the shop database: %w", err)
	}
	d := &Daemon{Shop: db, Store: store.New(db)}
	if err := d.prepareSchema(ctx, o); err != nil {
		return nil, errors.Join(err, d.Close())
	}
	sc := s.Sync.withDefaults()
	if d.Outbox, err = NewOutbox(d.Store, db, s.Notify, sc.retryBackoff(), log.Named("outbox")); err != nil {
		return nil, errors.Join(err, d.Close())
	}
	d.obs = append(slices.Clone(o.Observers), d.Outbox)
	for _, ins := range s.Insurers {
		e, client, err := d.openEngine(s, ins, o, log.Named("sync"))
		if err != nil {
			return nil, errors.Join(err, d.Close())
		}
		e.outbox = d.Outbox
		d.Engines = append(d.Engines, e)
		if d.Engine == nil {
			d.Engine, d.Remote = e, client
		}
	}
	d.Outbox.record = d.commitNotice
	// The engines are the executors of the adoption.
	if err := d.prepareInsurers(ctx, s, o); err != nil {
		return nil, errors.Join(err, d.Close())
	}
	if final, err := db.ReadFinalColumn(ctx); err == nil && !final {
		log.Named("sync").Warn(msgNoFinal, zap.String(fieldDetail, shopdb.NoFinalWarning))
	}
	d.Outbox.Now = func() time.Time { return d.Engine.Now() }
	d.Outbox.Rand = func() float64 { return d.Engine.Rand() }
	return d, nil
}

// openEngine builds the remote client and the engine of one insurer, on
// a view of the database that reads and writes its rows only.
func (d *Daemon) openEngine(s Settings, ins Insurer, o OpenOptions, log *zap.Logger) (*Engine, *remote.Client, error) {
	cfg := s.Sync
	cfg.Insurer = ins.Name
	cfg.Schedule = cmp.Or(ins.Schedule, cfg.Schedule)
	cfg.Concurrency = cmp.Or(ins.Concurrency, cfg.Concurrency)
	rc := ins.Remote
	rc.IdleConns = cmp.Or(rc.IdleConns, cfg.Concurrency, DefaultConcurrency)
	if o.ObserveCall != nil {
		name, observe := ins.Name, o.ObserveCall
		rc.Observe = func(ci remote.CallInfo) { observe(name, ci) }
	}
	tokens := ins.Tokens
	if o.StateOnly {
		tokens = noToken{}
	}
	client, err := remote.New(rc, tokens)
	if err != nil {
		return nil, nil, fmt.Errorf("remote of insurer %s: %w", ins.Name, err)
	}
	shop, _, _ := insurerView(d.Shop, s, ins)
	d.states.engines = len(s.Insurers)
	e, err := New(cfg, client, sharedStates{sharedShop{shop, &d.fps}, &d.states}, d.Store.Insurer(ins.Name), log, d.obs...)
	if err != nil {
		return nil, nil, err
	}
	return e, client, nil
}

// commitNotice records a notice the outbox found through the executor of
// its insurer's engine (Engine.commitNotice), whose observers it reaches.
func (d *Daemon) commitNotice(ctx context.Context, ev Event, out *store.Outbox) (bool, error) {
	return cmp.Or(d.EngineOf(ev.Insurer), d.Engine).commitNotice(ctx, ev, out)
}

// EngineOf returns the engine of the insurer name, nil when none is
// configured.
func (d *Daemon) EngineOf(name string) *Engine {
	for _, e := range d.Engines {
		if e.cfg.Insurer == name {
			return e
		}
	}
	return nil
}

// noToken is the token source of a daemon assembled to change state only.
type noToken struct{}

func (noToken) Token(context.Context) (string, error) {
	return "", errors.New("no token was read: this command changes quotesync's state only and calls no remote")
}

func (noToken) Invalidate() {}

// prepareSchema migrates quotesync's state tables, or only checks that
// they are current. Either way it refuses tables a newer quotesync
// migrated: reading or writing a layout this one does not know could lose
// state.
func (d *Daemon) prepareSchema(ctx context.Context, o OpenOptions) error {
	cfg := d.Shop.Config()
	if o.Migrate {
		if err := d.Store.Migrate(ctx); err != nil {
			return fmt.Errorf("migrate quotesync's state tables: %w", err)
		}
		return nil
	}
	cur, latest, err := d.Store.SchemaVersion(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("read the state schema version: %w", err)
	case cur > latest:
		return SchemaTooNew(cfg.Database, cur, latest)
	case cur == 0 && o.AllowNoTables:
		return nil
	case cur == 0:
		return fmt.Errorf("quotesync's state tables do not exist yet in %s: the first start of 'quotesync run' (or a 'quotesync once' without --dry-run) creates them", cfg.Database)
	case cur < latest:
		return SchemaTooOld(cfg.Database, cur, latest)
	}
	return nil
}

// UpgradeHint is what to do when a newer quotesync migrated the database.
const UpgradeHint = "a newer quotesync migrated this database: upgrade quotesync on this machine to that version (or newer) before running it again"

// SchemaTooNew is the error of a state schema newer than this quotesync.
func SchemaTooNew(database string, cur, latest int) error {
	return fmt.Errorf("quotesync's state tables in %s are at version %d, this quotesync knows only up to %d: %s: %w",
		database, cur, latest, UpgradeHint, store.ErrSchemaTooNew)
}

// SchemaTooOld is the error of state tables an older quotesync left, not
// migrated yet: the commands that only read them (status, history) need
// the current layout.
func SchemaTooOld(database string, cur, latest int) error {
	return fmt.Errorf("quotesync's state tables in %s are at version %d, this quotesync needs %d: run 'quotesync once' or start the daemon once to migrate them",
		database, cur, latest)
}

// Close closes the database.
func (d *Daemon) Close() error {
	if d == nil || d.Shop == nil {
		return nil
	}
	return d.Shop.Close()
}

// Lock is the single-instance lock as Run takes it (see acquire).
func (d *Daemon) Lock() LockFunc { return d.acquire }

// acquire takes the single-instance lock and, holding it, adopts the rows
// with no insurer written meanwhile, before any pass works: an older
// quotesync that held the lock while this one started (and migrated) may
// have written some, which the one configured insurer's passes would not
// see (and would take for new when listed: a second accept). They are
// given to it; with several insurers they are refused as at the start, no
// pass runs, and the lock is given up again. It costs a round trip each
// time the lock is taken, none per pass.
func (d *Daemon) acquire(ctx context.Context) (Lease, error) {
	l, err := d.Store.AcquireLock(ctx)
	if err != nil {
		return nil, err
	}
	// A panic below is recovered by the run loop's tick, which never saw
	// the lease: give the lock up, or the daemon would wait behind its own.
	defer func() {
		if v := recover(); v != nil {
			_ = l.Release()
			panic(v)
		}
	}()
	if err := d.adoptUnnamed(ctx, true); err != nil {
		return nil, errors.Join(err, l.Release())
	}
	return l, nil
}

// Once runs one pass of every engine under the single-instance lock
// (store.ErrNotLeader when another instance holds it), the insurers'
// passes at once; they are cancelled when the lock is lost. It is the
// engines' last: they keep nothing for a next pass (and read no
// shop_changed fingerprint to compare with one). It returns what the
// passes did together, and their failures, each naming its insurer when
// several are configured.
func (d *Daemon) Once(ctx context.Context) (Summary, error) {
	lock, err := d.acquire(ctx)
	if err != nil {
		return Summary{}, err
	}
	defer lock.Release()
	ctx, cancel := whileHeld(ctx, lock)
	defer cancel()
	s, err := d.each(ctx, func(ctx context.Context, e *Engine) (Summary, error) {
		p, err := e.pass(ctx, passLast)
		return p.summary, err
	})
	d.Deliver(ctx)
	return s, err
}

// Deliver works the outbox once, when a write-back or a notifier is
// configured: the deliveries a command's change queued (and those an
// earlier run left), each tried once now; what fails waits for the
// daemon, with its backoff. Once calls it after its passes, `quotesync
// retry` after its change: a running daemon is not woken by another
// process's events. Safe beside the daemon: a delivery is made under its
// row's lock, once.
func (d *Daemon) Deliver(ctx context.Context) {
	if d.Outbox != nil && d.Outbox.configured() && ctx.Err() == nil {
		d.Outbox.Work(ctx)
	}
}

// each runs pass for every engine at once and adds up what they did; the
// errors are joined, each naming its insurer when there are several. A
// panic in one engine's pass is its failure (see panics.go).
func (d *Daemon) each(ctx context.Context, pass func(ctx context.Context, e *Engine) (Summary, error)) (Summary, error) {
	sums := make([]Summary, len(d.Engines))
	errs := make([]error, len(d.Engines))
	var wg gosync.WaitGroup
	for i, e := range d.Engines {
		wg.Go(func() {
			defer func() { // a panic the pass did not recover itself
				if v := recover(); v != nil {
					errs[i] = e.recovered(v)
				}
			}()
			sums[i], errs[i] = pass(ctx, e)
		})
	}
	wg.Wait()
	var total Summary
	for i, e := range d.Engines {
		total.add(sums[i])
		if errs[i] != nil && len(d.Engines) > 1 {
			errs[i] = &InsurerError{Insurer: e.cfg.Insurer, Err: errs[i]}
		}
	}
	return total, errors.Join(errs...)
}

// InsurerError is the failure of one insurer's pass among several.
type InsurerError struct {
	Insurer string
	Err     error
}

func (e *InsurerError) Error() string { return "insurer " + e.Insurer + ": " + e.Err.Error() }

func (e *InsurerError) Unwrap() error { return e.Err }

// Plan computes what a pass of every engine would do now (see
// Engine.Plan), the insurers' actions one after another. With several
// insurers, one failing still leaves the others' plans whole: Insurers
// says which failed and why, and the error joins their InsurerErrors.
func (d *Daemon) Plan(ctx context.Context) (Plan, error) {
	var out Plan
	var errs []error
	for _, e := range d.Engines {
		p, err := e.Plan(ctx)
		out.Pending += p.Pending
		out.Tracked += p.Tracked
		out.Actions = append(out.Actions, p.Actions...)
		if len(d.Engines) > 1 {
			ip := InsurerPlan{Insurer: e.cfg.Insurer, Pending: p.Pending, Tracked: p.Tracked}
			if err != nil {
				ip.Error = err.Error()
				err = &InsurerError{Insurer: e.cfg.Insurer, Err: err}
			}
			out.Insurers = append(out.Insurers, ip)
		}
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}
