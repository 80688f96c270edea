package sync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// DefaultInsurer is the insurer of a lone remote: section.
const DefaultInsurer = shopdb.DefaultInsurer

// Insurer is one insurer's integration service and how the daemon works
// with it. Its name keys its requests in quotesync's tables for the life
// of the install: renaming an insurer is a move of its rows (`quotesync
// insurers move`), not an edit of a label.
type Insurer struct {
	// Name is 1 to 32 letters, digits, "-" or "_" (store.CheckInsurerName),
	// unique among the insurers.
	Name   string
	Remote remote.Config
	Tokens remote.TokenSource
	// TokenFrom says where the token comes from, for messages (never the
	// token).
	TokenFrom string
	// WorkTypes are the operation codes of its jobs' lines: the shop's
	// (shop.work_types) merged with its own, its entry winning for a
	// code; nil: the shop's.
	WorkTypes map[string]string
	// Key is where the insurer is configured ("remote", "remotes[1]"),
	// for messages; "" when it is not a file's.
	Key string
	// Schedule and Concurrency replace Settings.Sync's when set.
	Schedule    string
	Concurrency int
}

// Listed reports whether the insurer is an entry of remotes: (its Key
// is "remotes[N]"), whose name the file gives: messages about it name it.
func (ins Insurer) Listed() bool { return strings.HasPrefix(ins.Key, "remotes[") }

// KeyOf writes where one of the insurer's keys is configured, for
// messages: "remote.base_url", or for an entry of remotes: its place and
// its name, "remotes[0].base_url (acme)".
func (ins Insurer) KeyOf(field string) string {
	key := cmp.Or(ins.Key, "remote") + "." + field
	if ins.Listed() {
		key += " (" + ins.Name + ")"
	}
	return key
}

// workTypesKey says where an insurer's work types are configured.
func (ins Insurer) workTypesKey() string {
	if ins.Key == "" {
		return "shop.work_types (or the insurer's own work_types)"
	}
	return "shop.work_types or " + ins.Key + ".work_types"
}

// Names returns the names of the insurers, in order.
func (s Settings) Names() []string {
	return stringsOf(s.Insurers, func(ins Insurer) string { return ins.Name })
}

// validateInsurers refuses settings without an insurer, with a name that
// cannot key state, or with one name twice.
func (s Settings) validateInsurers() error {
	if len(s.Insurers) == 0 {
		return errors.New("open the daemon: no insurer is configured: set remote: (one insurer) or remotes: (several)")
	}
	seen := map[string]bool{}
	for _, ins := range s.Insurers {
		if err := store.CheckInsurerName(ins.Name); err != nil {
			return fmt.Errorf("open the daemon: %w", err)
		}
		if seen[ins.Name] {
			return fmt.Errorf("open the daemon: the insurer name %s is given twice: each insurer needs its own", ins.Name)
		}
		seen[ins.Name] = true
	}
	return nil
}

// msgAdopted is logged when rows written with no insurer are given to
// the one configured insurer: once at the first start after the upgrade,
// and again whenever an older quotesync went on writing such rows.
const msgAdopted = "rows written before insurers adopted"

// msgAdoptKept is logged when rows written with no insurer are left
// unadopted because the insurer tracks their request ids already.
const msgAdoptKept = "rows written before insurers left unadopted"

// maxStrandedShown is how many requests of an insurer no longer
// configured an error names.
const maxStrandedShown = 20

// ErrStranded: live requests belong to an insurer that is no longer
// configured.
var ErrStranded = errors.New("live requests of an insurer no longer configured")

// ErrAdoptKept: requests written with no insurer were left as they are,
// the insurer adopting them tracking requests with their ids already.
var ErrAdoptKept = errors.New("requests written without an insurer left unadopted")

// prepareInsurers adopts or refuses the rows written with no insurer
// (adoptUnnamed; a start that migrates, run or once, may adopt) and
// refuses live requests of an insurer no longer configured. A database
// whose tables do not exist yet has neither.
func (d *Daemon) prepareInsurers(ctx context.Context, s Settings, o OpenOptions) error {
	if o.Maintenance {
		return nil
	}
	if cur, _, err := d.Store.SchemaVersion(ctx); err != nil || cur == 0 {
		return err
	}
	if err := d.adoptUnnamed(ctx, o.Migrate); err != nil {
		return err
	}
	return CheckStranded(ctx, d.Store, s.Names())
}

// adoptUnnamed gives the rows written with no insurer to the one
// configured insurer, when migrate allows writing; it refuses them when
// several insurers are configured, and adoptable ones when it may not
// write. One statement when there are none.
func (d *Daemon) adoptUnnamed(ctx context.Context, migrate bool) error {
	one := ""
	if len(d.Engines) == 1 {
		one = d.Engine.cfg.Insurer
	}
	u, err := d.Store.Unnamed(ctx, one, []string{LegacyStatusFormKey})
	switch {
	case err != nil:
		return err
	case u.Requests > 0 && one == "":
		return errUnnamed(u.Requests, len(d.Engines))
	case u.Adoptable() > 0 && !migrate:
		return fmt.Errorf("%s in quotesync's tables were written before insurers had names: run 'quotesync once' (or start the daemon) once to give them to insurer %s",
			Plural(u.Adoptable(), "request"), one)
	case !u.Any() || one == "" || !migrate:
		return nil
	}
	got, err := d.Engine.adopt(ctx, d.Store)
	if err != nil {
		return err
	}
	logAdopted(d.Engine.log, d.Shop.Config().TablePrefix, one, got)
	return nil
}

// errUnnamed refuses n requests written with no insurer while several
// insurers are configured: whose they are is not for quotesync to guess.
func errUnnamed(n, insurers int) error {
	return fmt.Errorf("%s in quotesync's tables were written before insurers had names, and %d insurers are configured: "+
		"say whose they are with 'quotesync insurers adopt NAME' (NAME the insurer of the remote: section they were written with; "+
		"the daemon was serving one insurer then), then start again", Plural(n, "request"), insurers)
}

// rekey is what moves with the requests of the insurer from to the
// insurer to (a rename): its status form, and the prefix of the once keys
// of its notices, so that a notice recorded under the old name is not
// recorded again under the new one. from "" stands for the rows written
// with no insurer (an adoption): the status form found then, and the once
// keys of a lone insurer's notices (DefaultInsurer's).
func rekey(from, to string) store.Rekey {
	form, once := LegacyStatusFormKey, DefaultInsurer
	if from != "" {
		form, once = StatusFormKey(from), from
	}
	r := store.Rekey{From: from, Settings: map[string]string{form: StatusFormKey(to)}}
	if once != to {
		r.OnceKeys = map[string]string{}
		for _, kind := range []string{NoticeExpiring, NoticeAuthFailing} {
			r.OnceKeys[onceKey(kind, once, "")+":"] = onceKey(kind, to, "") + ":"
		}
	}
	return r
}

// adoptTries is how many times an adoption reads the rows again when one
// changed before it could move it (an older quotesync still writing).
const adoptTries = 3

// adopt gives the rows written with no insurer to e's insurer, through the
// executor (commitMoves: each row with an event "adopted", in one
// transaction with what rekey renames), and returns what it gave and
// the ids it left (Adopted.Kept: e's insurer tracks them already). Rows
// that change meanwhile are read again. Running it again adopts nothing.
func (e *Engine) adopt(ctx context.Context, st *store.Store) (store.Adopted, error) {
	name := e.cfg.Insurer
	rest := rekey("", name)
	for try := 1; ; try++ {
		rows, kept, err := st.Adoptable(ctx, name)
		if err != nil {
			return store.Adopted{}, fmt.Errorf("adopt the rows written before insurers: %w", err)
		}
		chs := make([]change, len(rows))
		for i, r := range rows {
			chs[i] = decideMove(r, EventAdopted, name)
		}
		_, a, err := e.commitMoves(ctx, chs, &rest)
		if try < adoptTries && (errors.Is(err, store.ErrStale) || errors.Is(err, store.ErrExists)) {
			continue
		}
		if err != nil {
			return store.Adopted{}, fmt.Errorf("adopt the rows written before insurers: %w", err)
		}
		a.Kept = kept
		return a, nil
	}
}

// logAdopted logs what an adoption at the start or at the lock gave the
// insurer name; requests left unadopted (ErrAdoptKept) are logged as an
// error, and are no failure: the insurer's passes work on its own rows of
// their ids.
func logAdopted(log *zap.Logger, prefix, name string, got store.Adopted) {
	if got.Any() {
		log.Info(msgAdopted, zap.String(fieldInsurer, name), zap.Int("requests", got.Requests),
			zap.Int("events", got.Events), zap.Int("deliveries", got.Deliveries))
	}
	if len(got.Kept) > 0 {
		log.Error(msgAdoptKept, zap.String(fieldInsurer, name), zap.Int("requests", len(got.Kept)), zap.Error(keptError(prefix, name, got.Kept)))
	}
}

// keptError explains the requests an adoption left unadopted and what to do.
func keptError(prefix, name string, kept []string) error {
	table := "`" + prefix + "requests`"
	return fmt.Errorf("%w: insurer %s tracks %s (%s) already, and rows with the same ids were written without an insurer "+
		"(the copies of a quotesync of before insurers that went on running after the upgrade). They were left as they are, "+
		"with their events and deliveries, the other rows adopted; the daemon works on insurer %s's rows only, "+
		"and a job number a copy holds stays held. Compare each copy (SELECT * FROM %s WHERE insurer = '' AND request_id = 'ID') "+
		"with 'quotesync history --insurer %s ID', settle with the insurer what the copy did that %s's row lacks (another job, an accept), "+
		"then delete the copy: the next start adopts its events", ErrAdoptKept, name, Plural(len(kept), "request"),
		shownIDs(kept[:min(len(kept), maxStrandedShown)], len(kept)), name, table, name, name)
}

// shownIDs lists ids, the first of total, for a message: each bounded,
// and how many more there are.
func shownIDs(ids []string, total int) string {
	// quotesync's own keys: no secret to redact
	s := strings.Join(stringsOf(ids, func(id string) string { return boundText(nil, id, maxShownID) }), ", ")
	if total > len(ids) {
		s += fmt.Sprintf(" and %d more", total-len(ids))
	}
	return s
}

// CheckStranded returns an error wrapping ErrStranded that names the live
// requests (those in an open phase) of insurers not among names, and the
// fix; nil when there is none.
func CheckStranded(ctx context.Context, st *store.Store, names []string) error {
	stranded, err := st.Stranded(ctx, names, openPhases(), maxStrandedShown)
	if err != nil {
		return fmt.Errorf("look for requests of insurers no longer configured: %w", err)
	}
	if len(stranded) == 0 {
		return nil
	}
	parts := stringsOf(stranded, func(g store.StrandedInsurer) string {
		return fmt.Sprintf("insurer %s: %s (%s)", g.Insurer, Plural(g.Count, "live request"), shownIDs(g.Requests, g.Count))
	})
	return fmt.Errorf("%w: %s; configured: %s. Put the insurer back under remotes:, or move its requests to its new name "+
		"('quotesync insurers move OLD NEW --force') or end them ('quotesync insurers end OLD --force')",
		ErrStranded, strings.Join(parts, "; "), strings.Join(names, ", "))
}

// LegacyStatusFormKey is the settings key of the status form auto mode
// found before insurers had names; the first start gives it to the one
// insurer (StatusFormKey).
const LegacyStatusFormKey = settingStatusForm

// StatusFormKey is the settings key under which the status form auto
// mode found for an insurer is kept (for `status` and `check`).
func StatusFormKey(insurer string) string { return settingStatusForm + "." + insurer }

// ErrAmbiguous: a request id is tracked for several insurers and the
// caller did not say which.
var ErrAmbiguous = errors.New("the request id is tracked for several insurers")

// EngineFor returns the engine of the request requestID's insurer: the one
// named (an error when it is not configured), else the only insurer
// whose rows hold the id (ErrAmbiguous, naming them, when several do;
// store.ErrNotFound when none does), else with one insurer its engine.
func (d *Daemon) EngineFor(ctx context.Context, insurer, requestID string) (*Engine, error) {
	if insurer != "" {
		if e := d.EngineOf(insurer); e != nil {
			return e, nil
		}
		return nil, fmt.Errorf("insurer %s is not configured (configured: %s)", insurer, d.names())
	}
	if len(d.Engines) == 1 {
		return d.Engine, nil
	}
	rows, err := d.Store.RequestsByID(ctx, requestID)
	if err != nil {
		return nil, err
	}
	switch len(rows) {
	case 0:
		return nil, fmt.Errorf("request %s: %w", requestID, store.ErrNotFound)
	case 1:
		return d.EngineFor(ctx, rows[0].Insurer, requestID)
	}
	names := stringsOf(rows, func(r store.Request) string { return r.Insurer })
	return nil, fmt.Errorf("request %s: %w (%s): name the insurer", requestID, ErrAmbiguous, strings.Join(names, ", "))
}

// Retry is Engine.Retry on the engine of the request's insurer (see
// EngineFor): insurer may be "" when the id is tracked for one insurer
// only.
func (d *Daemon) Retry(ctx context.Context, insurer, requestID, note string) (before, after store.Request, err error) {
	e, err := d.EngineFor(ctx, insurer, requestID)
	if err != nil {
		return store.Request{}, store.Request{}, err
	}
	return e.Retry(ctx, requestID, note)
}

// RequestsStore is st as the commands that show a request by its id read
// it (history, the status page): with one insurer, a view of its rows (a
// lone remote:'s is st itself); with several, st, whose reads by request
// id are the default insurer's (name one with Store.Insurer, or look an
// id up under every insurer with Store.RequestsByID). Listing reads see
// every insurer's rows either way.
func RequestsStore(st *store.Store, s Settings) *store.Store {
	if len(s.Insurers) == 1 && s.Insurers[0].Name != st.InsurerName() {
		return st.Insurer(s.Insurers[0].Name)
	}
	return st
}

// JobShop is shop as the pass that would push job reads it: the view of
// the insurer whose request (in st) holds the job (`quotesync preview`):
// :insurer bound to its name in quote_fields and booking_date, its lines
// read with its work types (the shop's merged with its own; the shop's
// when it is no longer configured). A job no request holds is read as
// insurer, which must be configured, or as the only insurer when insurer
// is ""; with several and none named, ErrWhichInsurer. Naming another
// insurer than the holder's is an error: no pass of that insurer pushes
// the job.
func JobShop(ctx context.Context, shop *shopdb.DB, st *store.Store, s Settings, job, insurer string) (*shopdb.DB, error) {
	cur, latest, err := st.SchemaVersion(ctx)
	if err != nil {
		return nil, err
	}
	var h store.Request
	if cur > 0 {
		// Tables an older quotesync left may lack the insurer column:
		// until they are migrated, as if no request held the job.
		if h, err = st.JobHolder(ctx, job); err != nil && cur == latest {
			return nil, err
		}
	}
	names := strings.Join(s.Names(), ", ")
	switch {
	case h.RequestID != "" && h.Insurer != "":
		if insurer != "" && insurer != h.Insurer {
			return nil, fmt.Errorf("job %s is held by request %s of insurer %s, whose passes alone push it: name %s, or no insurer", job, h.RequestID, h.Insurer, h.Insurer)
		}
		insurer = h.Insurer
	case insurer != "":
		if !slices.Contains(s.Names(), insurer) {
			return nil, fmt.Errorf("insurer %s is not configured (configured: %s)", insurer, names)
		}
	case len(s.Insurers) == 1:
		insurer = s.Insurers[0].Name
	default:
		return nil, fmt.Errorf("job %s: %w (configured: %s)", job, ErrWhichInsurer, names)
	}
	for _, ins := range s.Insurers {
		if ins.Name == insurer {
			view, _, _ := insurerView(shop, s, ins)
			return view, nil
		}
	}
	return shop.Insurer(insurer), nil
}
