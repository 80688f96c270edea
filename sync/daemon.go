package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
)

// Settings are everything the daemon is built from: each package's own
// configuration, secrets resolved. The command builds them from the YAML
// file; the demo from the example file with its own addresses; tests from
// their fixtures.
type Settings struct {
	Remote remote.Config
	Tokens remote.TokenSource
	Shop   shopdb.Config
	Sync   Config
	// Notify configures the notifiers (none by default); the write-back
	// statements are part of Shop's mapping.
	Notify NotifyConfig
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
	// Log is the daemon's logger; the engine's events are logged on it
	// (named "sync"), the MySQL driver's own diagnostics too ("mysql").
	// Default: none.
	Log *zap.Logger
	// Observers receive the engine's events after the log.
	Observers []Observer
	// ObserveCall, when set, is told about every remote call attempt.
	ObserveCall func(remote.CallInfo)
}

// Daemon is quotesync assembled: the shop database, the remote client and
// the engine. The command, the demo and the tests all build it with Open.
type Daemon struct {
	DB     *shopdb.DB
	Remote *remote.Client
	Engine *Engine
	// Outbox delivers the write-back and the notifications; the engine's
	// Run works it, Once after its pass.
	Outbox *Outbox
}

// Open connects to the shop database (migrating or checking quotesync's
// state tables), and builds the remote client and the engine.
func Open(ctx context.Context, s Settings, o OpenOptions) (*Daemon, error) {
	log := o.Log
	if log == nil {
		log = zap.NewNop()
	}
	shop := s.Shop
	if shop.DriverLog == nil {
		driverLog := log.Named("mysql")
		shop.DriverLog = func(msg string) { driverLog.Warn("mysql driver", zap.String("detail", msg)) }
	}
	db, err := shopdb.Open(ctx, shop)
	if err != nil {
		return nil, fmt.Errorf("connect to the shop database: %w", err)
	}
	d := &Daemon{DB: db}
	if err := d.prepareSchema(ctx, o); err != nil {
		return nil, errors.Join(err, d.Close())
	}
	rc := s.Remote
	if rc.IdleConns == 0 {
		rc.IdleConns = s.Sync.Concurrency
		if rc.IdleConns == 0 {
			rc.IdleConns = DefaultConcurrency
		}
	}
	if o.ObserveCall != nil {
		rc.Observe = o.ObserveCall
	}
	tokens := s.Tokens
	if o.StateOnly {
		tokens = noToken{}
	}
	if d.Remote, err = remote.New(rc, tokens); err != nil {
		return nil, errors.Join(fmt.Errorf("remote: %w", err), d.Close())
	}
	sc := s.Sync.withDefaults()
	if d.Outbox, err = NewOutbox(db, s.Notify, sc.retryBackoff(), log.Named("outbox")); err != nil {
		return nil, errors.Join(err, d.Close())
	}
	if d.Engine, err = New(s.Sync, d.Remote, db, log.Named("sync"), append(slices.Clone(o.Observers), d.Outbox)...); err != nil {
		return nil, errors.Join(err, d.Close())
	}
	d.Engine.outbox, d.Outbox.emit = d.Outbox, d.Engine.emit
	if final, err := db.ReadFinalColumn(ctx); err == nil && !final {
		log.Named("sync").Warn(msgNoFinal, zap.String(fieldDetail, shopdb.NoFinalWarning))
	}
	d.Outbox.Now = func() time.Time { return d.Engine.Now() }
	return d, nil
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
	cfg := d.DB.Config()
	if o.Migrate {
		if err := d.DB.Migrate(ctx); err != nil {
			return fmt.Errorf("migrate quotesync's state tables: %w", err)
		}
		return nil
	}
	cur, latest, err := d.DB.SchemaVersion(ctx)
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
		return fmt.Errorf("quotesync's state tables are at version %d, this quotesync needs %d: run 'quotesync once' or start the daemon once to migrate them", cur, latest)
	}
	return nil
}

// UpgradeHint is what to do when a newer quotesync migrated the database.
const UpgradeHint = "a newer quotesync migrated this database: upgrade quotesync on this machine to that version (or newer) before running it again"

// SchemaTooNew is the error of a state schema newer than this quotesync.
func SchemaTooNew(database string, cur, latest int) error {
	return fmt.Errorf("quotesync's state tables in %s are at version %d, this quotesync knows only up to %d: %s: %w",
		database, cur, latest, UpgradeHint, shopdb.ErrSchemaTooNew)
}

// Close closes the database.
func (d *Daemon) Close() error {
	if d == nil || d.DB == nil {
		return nil
	}
	return d.DB.Close()
}

// Lock is the single-instance lock as Run takes it.
func (d *Daemon) Lock() LockFunc {
	return func(ctx context.Context) (Lease, error) {
		l, err := d.DB.AcquireLock(ctx)
		if err != nil {
			return nil, err
		}
		return l, nil
	}
}

// Once runs one pass under the single-instance lock (shopdb.ErrNotLeader
// when another instance holds it); the pass is cancelled when the lock is
// lost. It is the engine's last: it keeps nothing for a next pass (and
// reads no shop_changed fingerprint to compare with one).
func (d *Daemon) Once(ctx context.Context) (Summary, error) {
	lock, err := d.DB.AcquireLock(ctx)
	if err != nil {
		return Summary{}, err
	}
	defer lock.Release()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-lock.Lost():
			cancel()
		case <-ctx.Done():
		}
	}()
	s, err := d.Engine.lastPass(ctx)
	d.Deliver(ctx)
	return s, err
}

// Deliver works the outbox once, when a write-back or a notifier is
// configured: the deliveries a command's change queued (and those an
// earlier run left), each tried once now; what fails waits for the
// daemon, with its backoff. Once calls it after its pass, `quotesync
// retry` after its change: a running daemon is not woken by another
// process's events. Safe beside the daemon: a delivery is made under its
// row's lock, once.
func (d *Daemon) Deliver(ctx context.Context) {
	if d.Outbox != nil && d.Outbox.configured() && ctx.Err() == nil {
		d.Outbox.Work(ctx)
	}
}
