package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
)

// DefaultInsurer is the insurer of a lone remote: section.
const DefaultInsurer = shopdb.DefaultInsurer

// Insurer is one insurer's integration service and how the daemon works
// with it. Its name keys its requests in quotesync's tables for the life
// of the install: renaming an insurer is a move of its rows (`quotesync
// insurers move`), not an edit of a label.
type Insurer struct {
	// Name is 1 to 32 letters, digits, "-" or "_" (shopdb.CheckInsurerName),
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

// workTypesKey says where an insurer's work types are configured.
func (ins Insurer) workTypesKey() string {
	if ins.Key == "" {
		return "shop.work_types (or the insurer's own work_types)"
	}
	return "shop.work_types or " + ins.Key + ".work_types"
}

// Names returns the names of the insurers, in order.
func (s Settings) Names() []string {
	out := make([]string, len(s.Insurers))
	for i, ins := range s.Insurers {
		out[i] = ins.Name
	}
	return out
}

// validateInsurers refuses settings without an insurer, with a name that
// cannot key state, or with one name twice.
func (s Settings) validateInsurers() error {
	if len(s.Insurers) == 0 {
		return errors.New("open the daemon: no insurer is configured: set remote: (one insurer) or remotes: (several)")
	}
	seen := map[string]bool{}
	for _, ins := range s.Insurers {
		if err := shopdb.CheckInsurerName(ins.Name); err != nil {
			return fmt.Errorf("open the daemon: %w", err)
		}
		if seen[ins.Name] {
			return fmt.Errorf("open the daemon: the insurer name %s is given twice: each insurer needs its own", ins.Name)
		}
		seen[ins.Name] = true
	}
	return nil
}

// msgAdopted is logged once when the rows written before insurers are
// given to the one configured insurer.
const msgAdopted = "rows written before insurers adopted"

// maxStrandedShown is how many requests of an insurer no longer
// configured an error names.
const maxStrandedShown = 20

// ErrStranded: live requests belong to an insurer that is no longer
// configured.
var ErrStranded = errors.New("live requests of an insurer no longer configured")

// prepareInsurers gives the rows written before insurers to the one
// configured insurer (a start that migrates: run, once), or refuses them
// when several are configured or when nothing may be written; and it
// refuses live requests of an insurer no longer configured. A database
// whose tables do not exist yet has neither.
func (d *Daemon) prepareInsurers(ctx context.Context, s Settings, o OpenOptions, log *zap.Logger) error {
	if o.Maintenance {
		return nil
	}
	if cur, _, err := d.DB.SchemaVersion(ctx); err != nil || cur == 0 {
		return err
	}
	n, err := d.DB.UnnamedRequests(ctx)
	if err != nil {
		return err
	}
	switch {
	case n > 0 && len(s.Insurers) > 1:
		return fmt.Errorf("%s in quotesync's tables were written before insurers had names, and %d insurers are configured: "+
			"say whose they are with 'quotesync insurers adopt NAME' (NAME the insurer of the remote: section they were written with; "+
			"the daemon was serving one insurer then), then start again", plural(n, "request"), len(s.Insurers))
	case n > 0 && !o.Migrate:
		return fmt.Errorf("%s in quotesync's tables were written before insurers had names: run 'quotesync once' (or start the daemon) once to give them to insurer %s",
			plural(n, "request"), s.Insurers[0].Name)
	}
	if o.Migrate && len(s.Insurers) == 1 {
		name := s.Insurers[0].Name
		got, err := d.DB.Adopt(ctx, name, map[string]string{settingStatusForm: StatusFormKey(name)})
		if err != nil {
			return fmt.Errorf("give the rows written before insurers to insurer %s: %w", name, err)
		}
		if got.Any() {
			log.Info(msgAdopted, zap.String(fieldInsurer, name), zap.Int("requests", got.Requests),
				zap.Int("events", got.Events), zap.Int("deliveries", got.Deliveries))
		}
	}
	return CheckStranded(ctx, d.DB, s.Names())
}

// CheckStranded returns an error wrapping ErrStranded that names the live
// requests (those in an open phase) of insurers not among names, and the
// fix; nil when there is none.
func CheckStranded(ctx context.Context, db *shopdb.DB, names []string) error {
	stranded, err := db.Stranded(ctx, names, openPhases(), maxStrandedShown)
	if err != nil {
		return fmt.Errorf("look for requests of insurers no longer configured: %w", err)
	}
	if len(stranded) == 0 {
		return nil
	}
	var parts []string
	for _, g := range stranded {
		ids := make([]string, len(g.Requests))
		for i, id := range g.Requests {
			ids[i] = boundText(id, maxShownID)
		}
		more := ""
		if g.Count > len(ids) {
			more = fmt.Sprintf(" and %d more", g.Count-len(ids))
		}
		parts = append(parts, fmt.Sprintf("insurer %s: %s (%s%s)", g.Insurer, plural(g.Count, "live request"), strings.Join(ids, ", "), more))
	}
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
// shopdb.ErrNotFound when none does), else with one insurer its engine.
func (d *Daemon) EngineFor(ctx context.Context, insurer, requestID string) (*Engine, error) {
	if insurer != "" {
		if e := d.EngineOf(insurer); e != nil {
			return e, nil
		}
		names := make([]string, len(d.Engines))
		for i, e := range d.Engines {
			names[i] = e.cfg.Insurer
		}
		return nil, fmt.Errorf("insurer %s is not configured (configured: %s)", insurer, strings.Join(names, ", "))
	}
	if len(d.Engines) == 1 {
		return d.Engine, nil
	}
	rows, err := d.DB.RequestsByID(ctx, requestID)
	if err != nil {
		return nil, err
	}
	switch len(rows) {
	case 0:
		return nil, fmt.Errorf("request %s: %w", requestID, shopdb.ErrNotFound)
	case 1:
		return d.EngineFor(ctx, rows[0].Insurer, requestID)
	}
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r.Insurer
	}
	return nil, fmt.Errorf("request %s: %w (%s): name the insurer", requestID, ErrAmbiguous, strings.Join(names, ", "))
}

// Retry is Engine.Retry on the engine of the request's insurer (see
// EngineFor): insurer may be "" when the id is tracked for one insurer
// only.
func (d *Daemon) Retry(ctx context.Context, insurer, requestID, note string) (before, after shopdb.Request, err error) {
	e, err := d.EngineFor(ctx, insurer, requestID)
	if err != nil {
		return shopdb.Request{}, shopdb.Request{}, err
	}
	return e.Retry(ctx, requestID, note)
}

// RequestsDB is db as the commands that show a request by its id read it
// (history, the status page): with one insurer, a view of its rows (a
// lone remote:'s is db itself); with several, db, whose reads by request
// id are the default insurer's (name one with DB.Insurer, or look an id
// up under every insurer with DB.RequestsByID). Listing reads see every
// insurer's rows either way.
func RequestsDB(db *shopdb.DB, s Settings) *shopdb.DB {
	if len(s.Insurers) == 1 && s.Insurers[0].Name != db.InsurerName() {
		return db.Insurer(s.Insurers[0].Name)
	}
	return db
}

// JobDB is db as the pass that would push job reads it: the view of the
// insurer whose request holds the job (`quotesync preview`): :insurer
// bound to its name in quote_fields and booking_date, its lines read with
// its work types (the shop's merged with its own; the shop's when it is
// no longer configured). A job no request holds is read as insurer, which
// must be configured, or as the only insurer when insurer is ""; with
// several and none named, ErrWhichInsurer. Naming another insurer than
// the holder's is an error: no pass of that insurer pushes the job.
func JobDB(ctx context.Context, db *shopdb.DB, s Settings, job, insurer string) (*shopdb.DB, error) {
	cur, latest, err := db.SchemaVersion(ctx)
	if err != nil {
		return nil, err
	}
	var h shopdb.Request
	if cur > 0 {
		// Tables an older quotesync left may lack the insurer column:
		// until they are migrated, as if no request held the job.
		if h, err = db.JobHolder(ctx, job); err != nil && cur == latest {
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
			view, _, _ := insurerView(db, s, ins)
			return view, nil
		}
	}
	return db.Insurer(insurer), nil
}
