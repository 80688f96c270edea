package sync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/redact"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// CheckItem is one line of the checklist `quotesync check` prints.
type CheckItem struct {
	Status string // CheckOK, CheckFail, CheckWarn or CheckSkip
	Name   string
	Detail string // may hold several lines
}

// Verdicts of a CheckItem.
const (
	CheckOK   = "ok"
	CheckFail = "FAIL"
	CheckWarn = "warn"
	CheckSkip = "skip"
	// CheckInfo is information that needs no action (it never fails the
	// check).
	CheckInfo = "info"
)

// checkTimeout bounds each network step of the checks.
const checkTimeout = 30 * time.Second

// maxCheckPending bounds how many pending requests Check looks up in the
// shop (a short query each).
const maxCheckPending = 200

// Check runs the checks a daemon needs to pass before it can work, without
// writing anything anywhere: the database login, quotesync's state schema,
// every mapping query (prepared, and run read-only where it reads), for
// each insurer a read-only call to its service with its token, the work
// types of the estimates quotesync would push next and the status change
// form; and that no insurer left out of the configuration has live
// requests. With several insurers each insurer's lines name it, and the
// statements that could tell insurers apart with :insurer and do not are
// listed (information, not a failure); a lone insurer of remotes: is
// named on the lines of its service (remote, status change).
func Check(ctx context.Context, s Settings) []CheckItem {
	s = s.shared()
	c := checks{secrets: s.Secrets}
	c.several = len(s.Insurers) > 1
	db, st := c.database(ctx, s)
	if db != nil {
		defer db.Close()
	}
	pending := make([][]remote.Request, len(s.Insurers))
	for i, ins := range s.Insurers {
		pending[i] = c.remote(ctx, ins)
	}
	if db == nil {
		return c.items
	}
	c.insurers(ctx, db, st, s)
	for i, ins := range s.Insurers {
		view, workTypes, _ := insurerView(db, s, ins)
		c.workTypes(ctx, view, st.Insurer(ins.Name), c.name("work types", ins, false), workTypes, pending[i])
	}
	c.realRows(ctx, db, st, s)
	for _, ins := range s.Insurers {
		c.statusForm(ctx, st, ins)
	}
	c.deliveries(ctx, db, st, s.Notify)
	return c.items
}

// insurerView is db as ins's passes read it: its requests' rows and
// :insurer bound to its name, its jobs' lines read with its work types
// (the shop's merged with its own), configured under key.
func insurerView(db *shopdb.DB, s Settings, ins Insurer) (view *shopdb.DB, workTypes map[string]string, key string) {
	view = db.Insurer(ins.Name)
	if ins.WorkTypes == nil {
		return view, s.Shop.WorkTypes, "shop.work_types"
	}
	return view.WithWorkTypes(ins.WorkTypes, ins.workTypesKey()), ins.WorkTypes, ins.workTypesKey()
}

// checks collects the items.
type checks struct {
	items   []CheckItem
	several bool // several insurers: their lines name them
	// schema is the version of quotesync's tables (0: none yet), latest
	// the one this quotesync needs, schemaErr why schema is unknown.
	schema, latest int
	schemaErr      error
	secrets        *redact.Secrets // redacted from every detail as it is added
}

// stateOld reports whether quotesync's tables are an older quotesync's,
// not migrated yet: their rows are not read in this layout (the
// insurer columns are missing, say) until the next start migrates them.
func (c *checks) stateOld() bool { return c.schemaErr == nil && c.schema > 0 && c.schema < c.latest }

// stateOldWhy says why a check leaves quotesync's rows out.
func (c *checks) stateOldWhy() string {
	return fmt.Sprintf("quotesync's tables, at version %d, wait for the next start of run or once to migrate them to %d", c.schema, c.latest)
}

func (c *checks) add(status, name, format string, args ...any) {
	c.items = append(c.items, CheckItem{Status: status, Name: name, Detail: c.secrets.Redact(fmt.Sprintf(format, args...))})
}

// name is the name of a check of one insurer: the insurer's name follows
// when there are several, and for a check of the insurer's own service
// (its list call, its data, its status form) also when the file names
// the one insurer (remotes:). The checks of the shop's rows keep their
// plain name with one insurer.
func (c *checks) name(check string, ins Insurer, service bool) string {
	if !c.several && !(service && ins.Listed()) {
		return check
	}
	return check + " (" + ins.Name + ")"
}

// insurers checks quotesync's rows against the configured insurers: live
// requests of an insurer no longer configured fail (the daemon refuses to
// start), rows written before insurers are reported (the next start gives
// them to the one insurer, or needs `quotesync insurers adopt`); with
// several insurers, the statements without :insurer are listed.
func (c *checks) insurers(ctx context.Context, db *shopdb.DB, st *store.Store, s Settings) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	const name = "insurers"
	if c.stateOld() {
		if c.several {
			c.add(CheckSkip, name, "not checked: %s; run check again then (requests written before insurers had names need 'quotesync insurers adopt NAME' before the daemon starts)", c.stateOldWhy())
		}
		c.withoutInsurer(db)
		return
	}
	if err := CheckStranded(ctx, st, s.Names()); err != nil {
		c.add(CheckFail, name, "%v", err)
	} else if c.several {
		c.add(CheckOK, name, "%s configured (%s); no other insurer has live requests", Plural(len(s.Insurers), "insurer"), strings.Join(s.Names(), ", "))
	}
	one := ""
	if !c.several {
		one = s.Insurers[0].Name
	}
	switch u, err := st.Unnamed(ctx, one, nil); {
	case err != nil:
		c.add(CheckFail, name, "count the requests written before insurers: %v", err)
	case u.Requests > 0 && c.several:
		c.add(CheckFail, name, "%s written before insurers had names: say whose they are with 'quotesync insurers adopt NAME' (the insurer of the remote: section they were written with) before the daemon starts", Plural(u.Requests, "request"))
	case u.Tracked > 0:
		// Adopt leaves a copy whose id the insurer tracks already: saying
		// the next start gives it away would be untrue.
		rest := ""
		if n := u.Adoptable(); n > 0 {
			rest = fmt.Sprintf("; the next start of run or once gives the other %s to insurer %s", Plural(n, "request"), one)
		}
		c.add(CheckWarn, name, "%s written before insurers had names %s an id insurer %s tracks already (an older quotesync's copy, left as it is): compare each with 'quotesync history --insurer %s ID', settle any difference with the insurer, then delete the copy%s",
			Plural(u.Tracked, "request"), map[bool]string{true: "has", false: "have"}[u.Tracked == 1], one, one, rest)
	case u.Requests > 0:
		c.add(CheckOK, name, "%s written before insurers had names: the next start of run or once gives them to insurer %s", Plural(u.Requests, "request"), one)
	}
	c.withoutInsurer(db)
}

// withoutInsurer lists, with several insurers, the statements that do
// not use :insurer.
func (c *checks) withoutInsurer(db *shopdb.DB) {
	if !c.several {
		return
	}
	if keys := db.WithoutInsurer(); len(keys) > 0 {
		c.add(CheckInfo, ":insurer", "%s %s not use :insurer: %s the same for every insurer's requests (right when the shop does not tell its insurers apart there)",
			strings.Join(keys, ", "), map[bool]string{true: "does", false: "do"}[len(keys) == 1], map[bool]string{true: "it runs", false: "they run"}[len(keys) == 1])
	}
}

// database connects and checks the state schema and the queries; it
// returns the open database and quotesync's store on it, or nil when the
// login failed.
func (c *checks) database(ctx context.Context, s Settings) (*shopdb.DB, *store.Store) {
	octx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	db, err := shopdb.Open(octx, s.Shop)
	if err != nil {
		c.add(CheckFail, "database", "%v", err)
		c.add(CheckSkip, "state schema", "not checked: no database connection")
		c.add(CheckSkip, "shop.queries", "not checked: no database connection")
		c.add(CheckSkip, "work types", "not checked: no database connection")
		return nil, nil
	}
	tls := ""
	if s.Shop.TLSCAFile != "" {
		tls = fmt.Sprintf(" over TLS, the server's certificate verified against %s", s.Shop.TLSCAFile)
	}
	c.add(CheckOK, "database", "connected to %s%s", s.Shop.String(), tls)
	if mode, err := db.SQLMode(octx); err == nil && !shopdb.StrictMode(mode) {
		c.add(CheckWarn, "sql_mode", "the server's sql_mode (%q) is not strict: a value longer than its column is cut to fit, with a warning only. "+
			"A claim number longer than the shop's column is written cut by create_job (not refused as too_long), and write_back's values are cut too: "+
			"make those columns wide enough, or add STRICT_TRANS_TABLES to the server's sql_mode if the shop's program allows it", mode)
	}
	st := store.New(db)

	cur, latest, err := st.SchemaVersion(octx)
	c.schema, c.latest, c.schemaErr = cur, latest, err
	prefix := db.Config().TablePrefix
	switch {
	case err != nil:
		c.add(CheckFail, "state schema", "%v", err)
	case cur == 0:
		c.add(CheckOK, "state schema", "quotesync's tables (%s*) do not exist yet: the first start of run or once creates them (version %d); the database user needs CREATE, ALTER and INDEX on %s", prefix, latest, s.Shop.Database)
	case cur < latest:
		// Normal before the first start of a new version, but the
		// commands that read the tables (status, history) refuse them
		// until then, and check leaves their rows out.
		c.add(CheckWarn, "state schema", "quotesync's tables (%s*) are at version %d, this quotesync needs %d: run 'quotesync once' (or start the daemon) to migrate them; the database user needs CREATE, ALTER and INDEX on %s. Until then status and history refuse them, and check leaves out the requests they hold",
			prefix, cur, latest, s.Shop.Database)
	case cur > latest:
		c.add(CheckFail, "state schema", "version %d was written by a newer quotesync (this one knows %d): upgrade quotesync on this machine", cur, latest)
	default:
		c.add(CheckOK, "state schema", "version %d (current)", cur)
	}
	var jobs []string // EXPLAIN plans the job queries for jobs quotesync tracks
	state := ""       // the fingerprint reads quotesync's rows beside shop_changed
	if err == nil && cur == latest {
		jobs, state = c.someJobs(ctx, st), st.StateFingerprint()
	}
	c.queries(db.CheckQueries(ctx, jobs, state))
	if len(s.Shop.Queries.CreateJob) == 0 {
		c.add(CheckInfo, "shop.queries.create_job", "not set: quotesync makes no job; a request whose job find_job does not find waits "+
			"(status: waiting, reason %s: %s) and is accepted at the first pass after the shop makes the job", ReasonNoJob, Reason(ReasonNoJob).Words)
	}
	return db, st
}

// queries adds the verdict on each checked statement: its failure, or what
// was checked (with the columns it returned) and any warning.
func (c *checks) queries(qs []shopdb.QueryCheck) {
	for _, q := range qs {
		if q.Err != nil {
			c.add(CheckFail, q.Key, "%v", q.Err)
			continue
		}
		detail := q.Note
		if len(q.Columns) > 0 {
			detail += " (" + strings.Join(q.Columns, ", ") + ")"
		}
		c.add(CheckOK, q.Key, "%s", detail)
		if q.Warn != "" {
			c.add(CheckWarn, q.Key, "%s", q.Warn)
		}
	}
}

// someJobs returns up to 20 job numbers of the newest requests quotesync
// tracks, for EXPLAIN; none when they cannot be read.
func (c *checks) someJobs(ctx context.Context, st *store.Store) []string {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	rows, err := st.RequestsPage(ctx, store.PageQuery{Limit: 20})
	if err != nil {
		return nil
	}
	var jobs []string
	for _, r := range rows {
		if r.JobNumber != "" {
			jobs = append(jobs, r.JobNumber)
		}
	}
	return jobs
}

// remote lists the pending requests of an insurer with its token, with
// few retries; none when the list could not be read.
func (c *checks) remote(ctx context.Context, ins Insurer) []remote.Request {
	name, tokenFrom := c.name("remote", ins, true), ins.TokenFrom
	rc := ins.Remote
	if rc.MaxAttempts == 0 || rc.MaxAttempts > 2 {
		rc.MaxAttempts = 2
	}
	rc.BackoffInitial, rc.BackoffMax = 500*time.Millisecond, 2*time.Second
	client, err := remote.New(rc, ins.Tokens)
	if err != nil {
		c.add(CheckFail, name, "%v", err)
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*checkTimeout)
	defer cancel()
	reqs, err := client.ListRequests(ctx)
	var de *remote.DecodeError
	where := strings.TrimRight(rc.BaseURL, "/") + remote.APIRoot + "/requests"
	if err != nil && !errors.As(err, &de) {
		c.add(CheckFail, name, "%s", explainRemote(err, tokenFrom, ins.KeyOf("base_url")))
		return nil
	}
	c.add(CheckOK, name, "GET %s answered with the token: %s", where, Plural(len(reqs), "pending request"))
	if de != nil {
		c.add(CheckWarn, c.name("remote data", ins, true), "%v; quotesync skips those requests until the service fixes them", de)
	}
	return reqs
}

// explainRemote says what a failed list call means and what to do;
// baseURL is the key of the insurer's address ("remote.base_url",
// "remotes[1].base_url (acme)").
func explainRemote(err error, tokenFrom, baseURL string) string {
	switch {
	case errors.Is(err, remote.ErrUnauthorized):
		return fmt.Sprintf("%v\nthe service refused the token from %s: put the insurer's current token there (with OAuth2, check client_id and the client secret)", err, tokenFrom)
	case errors.Is(err, remote.ErrNotFound):
		return fmt.Sprintf("%v\nno such endpoint: check %s (the API is under base_url + %s)", err, baseURL, remote.APIRoot)
	case errors.Is(err, remote.ErrTemporary):
		return fmt.Sprintf("%v\nthe service did not answer usefully: check %s, DNS and the firewall, then run check again", err, baseURL)
	}
	return err.Error()
}

// workTypes checks that shop.work_types covers the operation codes of the
// estimates quotesync would push next: the jobs of the requests it tracks
// (in progress) and the shop's jobs for the requests pending on the remote
// now (found by find_job, read-only). line_items runs over those jobs with
// the configured mapping, which flags every line whose code is not mapped.
// A shop has no generic "open estimates" query, so these are the estimates
// that matter: any other job is checked by the daemon when a request for
// it arrives (the job is held, with the line named, until the code is
// mapped).
func (c *checks) workTypes(ctx context.Context, db *shopdb.DB, st *store.Store, name string, workTypes map[string]string, pending []remote.Request) {
	ctx, cancel := context.WithTimeout(ctx, 2*checkTimeout)
	defer cancel()
	if c.schemaErr != nil {
		c.add(CheckSkip, name, "not checked: %v", c.schemaErr)
		return
	}
	jobs := map[string]bool{}
	var tracked, found int
	note := ""
	if c.schema > 0 && !c.stateOld() {
		rows, err := st.ListRequests(ctx, store.ListQuery{Hide: ClosedPhases(), Insurer: st.InsurerName()})
		if err != nil {
			c.add(CheckFail, name, "list the tracked requests: %v", err)
			return
		}
		for _, r := range rows {
			if r.JobNumber != "" && !jobs[r.JobNumber] {
				jobs[r.JobNumber] = true
				tracked++
			}
		}
	}
	if len(pending) > maxCheckPending {
		note = fmt.Sprintf("; looked up the first %d of %d pending requests", maxCheckPending, len(pending))
		pending = pending[:maxCheckPending]
	}
	for _, req := range pending {
		if len(req.ID) > store.MaxRequestIDLen || len(req.ClaimNumber) > store.MaxClaimLen {
			continue // the daemon leaves it out (reported as too_long)
		}
		job, err := findJob(ctx, db, st, newRequestOf(requestRow(req)))
		switch {
		case err != nil:
			c.add(CheckFail, name, "look up the shop's job for pending request %s: %v", boundText(c.secrets, req.ID, maxShownID), err)
			return
		case job != "" && !jobs[job]:
			jobs[job] = true
			found++
		}
	}
	list := slices.Sorted(maps.Keys(jobs))
	lines, err := db.Lines(ctx, list)
	if err != nil {
		c.add(CheckFail, name, "run shop.queries.line_items over %s: %v", Plural(len(list), "job"), err)
		return
	}
	codes, bad := map[string]int{}, map[string]error{}
	for job, jl := range lines {
		if err := jl.Err(); err != nil {
			bad[job] = err
			continue
		}
		for _, l := range jl.Lines {
			codes[l.Code]++
		}
	}
	var unmapped, warns []string
	missing := map[string]bool{}
	for _, j := range slices.Sorted(maps.Keys(bad)) {
		var re *shopdb.RowError
		if errors.As(bad[j], &re) && re.UnmappedCode != "" {
			unmapped = append(unmapped, re.Error())
			missing[re.UnmappedCode] = true
			continue
		}
		warns = append(warns, bad[j].Error())
	}
	scope := fmt.Sprintf("%s (%d tracked, %d found for pending requests)", Plural(len(list), "job"), tracked, found)
	if c.stateOld() {
		scope = fmt.Sprintf("%s (found for pending requests; those of the requests quotesync tracks are left out until its tables are migrated)", Plural(len(list), "job"))
	}
	scope += note
	mapped := strings.Join(slices.Sorted(maps.Keys(workTypes)), ", ")
	switch {
	case len(unmapped) > 0:
		hint := stringsOf(slices.Sorted(maps.Keys(missing)), func(code string) string { return fmt.Sprintf("%q: <work type, e.g. Miscellaneous>", code) })
		c.add(CheckFail, name, "%d of %s %s lines whose code is not under shop.work_types:\n%s\nunder shop.work_types add %s",
			len(unmapped), scope, map[bool]string{true: "has", false: "have"}[len(unmapped) == 1], strings.Join(unmapped, "\n"), strings.Join(hint, ", "))
	case len(list) == 0 && c.stateOld():
		c.add(CheckOK, name, "no pending request has a job in the shop, and the jobs of the requests quotesync tracks are left out: %s; the daemon checks each job's codes before its first push (mapped codes: %s)",
			c.stateOldWhy(), mapped)
	case len(list) == 0:
		c.add(CheckOK, name, "no estimates to look at yet: quotesync tracks no job, and no pending request has a job in the shop; the daemon checks each job's codes before its first push (mapped codes: %s)", mapped)
	case len(codes) == 0 && len(warns) == 0:
		c.add(CheckOK, name, "no lines yet on %s; the daemon checks each job's codes before its first push (mapped codes: %s)",
			scope, mapped)
	case len(codes) == 0:
		c.add(CheckOK, name, "no line with a valid code yet on %s (see the shop data warnings); mapped codes: %s", scope, mapped)
	default:
		c.add(CheckOK, name, "every code on %s is mapped; codes seen: %s", scope, codeCounts(codes))
	}
	for _, w := range warns {
		c.add(CheckWarn, "shop data", "%s: the daemon holds this job until the shop fixes the line", w)
	}
}

// statusForm says which status change the daemon sends to an insurer,
// and what auto mode found before.
func (c *checks) statusForm(ctx context.Context, st *store.Store, ins Insurer) {
	rc, name, key := ins.Remote, c.name("status change", ins, true), cmp.Or(ins.Key, "remote")
	client, err := remote.New(rc, remote.StaticToken("unused"))
	if err != nil {
		return
	}
	form, _ := client.StatusForm()
	if rc.StatusPath != remote.StatusPathAuto {
		c.add(CheckOK, name, "%s (%s.status_path; a 404 or 405 to it means the service serves another form: set %s.status_path: auto)", form, key, key)
		return
	}
	found, ok, err := st.Setting(ctx, StatusFormKey(ins.Name))
	if err == nil && !ok && !c.several {
		// Not adopted yet: the form found before insurers had names.
		found, ok, err = st.Setting(ctx, settingStatusForm)
	}
	switch {
	case err != nil:
		c.add(CheckWarn, name, "auto; the form found earlier could not be read: %v", err)
	case ok:
		c.add(CheckOK, name, "auto; found earlier and used: %s", found)
	default:
		c.add(CheckOK, name, "auto; not found yet: the first submit tries the forms (the documented POST /jobs/{jobId}/quotes/status/{status} first) and keeps the one the service serves")
	}
}

// findJob runs find_job, as db's insurer, for nr in a read-only
// transaction of st's.
func findJob(ctx context.Context, db *shopdb.DB, st *store.Store, nr shopdb.NewRequest) (job string, err error) {
	err = st.ReadTx(ctx, nr.RequestID, func(ctx context.Context, tx *store.Tx) error {
		job, err = db.Jobs(tx.SQL(), nr).Find(ctx)
		return err
	})
	return job, err
}

// codeCounts renders {"PART": 3, "R&R": 2} as "PART ×3, R&R ×2".
func codeCounts(codes map[string]int) string {
	parts := stringsOf(slices.Sorted(maps.Keys(codes)), func(k string) string { return fmt.Sprintf("%s ×%d", k, codes[k]) })
	return strings.Join(parts, ", ")
}
