package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/termtext"
	"github.com/quotesync/quotesync/shopdb"
	qsync "github.com/quotesync/quotesync/sync"
)

const statusHelp = `Usage: quotesync status [--config FILE] [--all] [--json] [--limit N]

Shows the requests quotesync tracks, newest first: request id, claim, the
shop's job number, phase, reason, when the quote was last pushed and the
age; then, for every request that needs a person, what happened in plain
words, the details whole, and what to do; then the requests the daemon
tries again on its own, with the whole error of the last attempt and when
the next is due; then the number of requests in each phase and the status
change form in use. Without --all, submitted
and gone requests are left out (a submitted one whose lines changed after
submission stays). It only reads the database (no lock), so it works while
the daemon runs. It needs the database password, not the token.

Phases: waiting (no shop job yet), reserved (job number allocated, accept
sent or due), accept_unknown (our accept probably landed; the first Draft
push confirms it), accepted, drafted (a Draft was pushed), submitted
(done), rejected (refused for good; needs a person), gone (expired or left
the list before our accept landed), taken_elsewhere (someone else accepted
it). 'quotesync retry REQUEST' puts a stuck request back into the flow;
'quotesync history REQUEST' shows one request's timeline.

Exit status: 0 shown, 1 the database could not be read (or a newer
quotesync migrated its state tables: upgrade quotesync), 2 bad flags or
configuration.

Example:
  quotesync status --config /etc/quotesync/config.yaml --all

Flags:
`

// statusWrap is the width the details below the table are wrapped at.
const statusWrap = 100

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	path := fs.String("config", config.DefaultPath, "configuration `file`")
	all := fs.Bool("all", false, "include submitted and gone requests")
	asJSON := fs.Bool("json", false, "print JSON (every field, whole errors) for scripts")
	limit := fs.Int("limit", 200, "show at most `N` requests, newest first (0: all); the counts cover all")
	fs.Usage = func() { fmt.Fprint(fs.Output(), statusHelp); fs.PrintDefaults() }
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *limit < 0 {
		fmt.Fprintln(stderr, "quotesync status: --limit must be 0 (all) or more")
		return exitUsage
	}
	db, set, code := openStateDB(ctx, "status", *path, stderr)
	if db == nil {
		return code
	}
	defer db.Close()

	cur, _, err := db.SchemaVersion(ctx)
	if err != nil {
		printErr(stderr, "status", err)
		return exitFailure
	}
	var rows []shopdb.Request
	if cur > 0 {
		q := shopdb.ListQuery{}
		if !*all {
			q = shopdb.ListQuery{Hide: []shopdb.Phase{qsync.PhaseSubmitted, qsync.PhaseGone}, KeepSupplements: true}
		}
		if rows, err = db.ListRequests(ctx, q); err != nil {
			printErr(stderr, "status", err)
			return exitFailure
		}
	}
	counts := make(map[shopdb.Phase]int)
	for _, r := range rows {
		counts[r.Phase]++
	}
	total := len(rows)
	if *limit > 0 && len(rows) > *limit {
		rows = rows[:*limit]
	}
	form := statusForm(ctx, db, set)
	if *asJSON {
		return writeStatusJSON(stdout, rows, counts, total, form)
	}
	if cur == 0 {
		fmt.Fprintf(stdout, "quotesync's state tables do not exist yet in %s: nothing is tracked. The first start of 'quotesync run' (or 'once') creates them.\n", db.Config().Database)
		return exitOK
	}
	printStatus(stdout, rows, counts, total, *all, time.Now())
	fmt.Fprintf(stdout, "status change: %s\n", form)
	printDeliveries(ctx, stdout, db)
	return exitOK
}

// statusForm says which status change the daemon sends, for each insurer
// (named when there are several).
func statusForm(ctx context.Context, db *shopdb.DB, set *config.Settings) string {
	ins := set.Daemon.Insurers
	if len(ins) == 1 {
		return insurerStatusForm(ctx, db, ins[0], true)
	}
	parts := make([]string, len(ins))
	for i, in := range ins {
		parts[i] = in.Name + ": " + insurerStatusForm(ctx, db, in, false)
	}
	return strings.Join(parts, "; ")
}

// insurerStatusForm says which status change the daemon sends to ins;
// alone, it reads what auto mode found before insurers had names too.
func insurerStatusForm(ctx context.Context, db *shopdb.DB, ins qsync.Insurer, alone bool) string {
	rc := ins.Remote
	switch rc.StatusPath {
	case "auto":
		found, ok, err := db.Setting(ctx, qsync.StatusFormKey(ins.Name))
		if err == nil && !ok && alone {
			found, ok, err = db.Setting(ctx, qsync.LegacyStatusFormKey)
		}
		if err == nil && ok {
			return "auto; found and used: " + termtext.Safe(found)
		}
		return "auto; not found yet (the first submit finds it)"
	case "":
		return "POST /jobs/{jobId}/quotes/status/{status} (the default)"
	}
	method := rc.StatusMethod
	if method == "" {
		method = "POST"
	}
	return method + " " + rc.StatusPath
}

// openStateDB opens the shop database for a verb that reads or edits
// quotesync's state: only the database password is read. It returns the
// exit code to use when it returns nil.
func openStateDB(ctx context.Context, verb, path string, stderr io.Writer) (*shopdb.DB, *config.Settings, int) {
	cf := commonFlags{config: path}
	set, err := cf.loadSettings(config.ShopSecrets)
	if err != nil {
		printErr(stderr, verb, err)
		return nil, nil, exitUsage
	}
	db, err := shopdb.Open(ctx, set.Daemon.Shop)
	if err != nil {
		printErr(stderr, verb, err)
		return nil, nil, exitFailure
	}
	cur, latest, err := db.SchemaVersion(ctx)
	if err == nil && cur > latest {
		err = qsync.SchemaTooNew(set.Daemon.Shop.Database, cur, latest)
	}
	if err != nil {
		printErr(stderr, verb, err)
		_ = db.Close()
		return nil, nil, exitFailure
	}
	return qsync.RequestsDB(db, set.Daemon), set, exitOK
}

// printStatus writes the table, what needs a person, and the counts.
func printStatus(w io.Writer, rows []shopdb.Request, counts map[shopdb.Phase]int, total int, all bool, now time.Time) {
	if total == 0 {
		if all {
			fmt.Fprintln(w, "no requests tracked yet")
		} else {
			fmt.Fprintln(w, "no requests in progress or needing attention (--all shows submitted and gone ones too)")
		}
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REQUEST\tCLAIM\tJOB\tPHASE\tREASON\tLAST PUSH\tAGE")
	var attention, later []shopdb.Request
	for _, r := range rows {
		phase := string(r.Phase)
		if r.SupplementNeeded {
			phase += " (supplement needed)"
		}
		last := "-"
		if !r.PushedAt.IsZero() {
			last = ago(now, r.PushedAt) + " ago"
		}
		reason := string(r.Reason)
		if qsync.Reason(r.Reason).Hold {
			reason = "held: " + reason
		}
		job := termtext.Safe(r.JobNumber)
		if job == "" && r.ReleasedJob != "" {
			job = "(" + termtext.Safe(r.ReleasedJob) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", truncate(termtext.Safe(r.RequestID), 24), dash(truncate(termtext.Safe(r.ClaimNumber), 24)), dash(job),
			phase, dash(reason), last, ago(now, r.CreatedAt))
		switch {
		case needsPerson(r):
			attention = append(attention, r)
		case r.LastError != "" && qsync.IsOpen(r.Phase):
			later = append(later, r)
		}
	}
	_ = tw.Flush()
	if len(rows) < total {
		fmt.Fprintf(w, "(the newest %d of %d shown; --limit 0 shows all)\n", len(rows), total)
	}
	if len(attention) > 0 {
		fmt.Fprintf(w, "\nneeds a person:\n")
		for _, r := range attention {
			printAttention(w, r)
		}
	}
	printLater(w, later, now)
	var parts []string
	for _, ph := range qsync.Phases() {
		if n := counts[ph.Phase]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, ph.Phase))
		}
	}
	what := plural(total, "request")
	if !all {
		what += " in progress or needing attention"
	}
	fmt.Fprintf(w, "\n%s: %s\n", what, strings.Join(parts, ", "))
}

// needsPerson reports whether a row waits for somebody to act or know.
func needsPerson(r shopdb.Request) bool { return qsync.NeedsPerson(r) }

// printAttention writes what happened to r, its details and the fix,
// wrapped, never cut.
func printAttention(w io.Writer, r shopdb.Request) {
	ri := qsync.Reason(r.Reason)
	head := ri.Words
	fix := ri.Fix
	if r.SupplementNeeded && r.Reason == qsync.ReasonNone {
		head, fix = qsync.SupplementWords, qsync.SupplementFix
	}
	id := termtext.Safe(r.RequestID)
	fmt.Fprintf(w, "  %s (job %s, %s):\n", id, dash(termtext.Safe(jobOf(r))), r.Phase)
	writeWrapped(w, "    ", head)
	if r.LastError != "" {
		writeWrapped(w, "    details: ", flat(r.LastError))
	}
	if fix != "" {
		writeWrapped(w, "    what to do: ", strings.ReplaceAll(fix, "REQUEST", id))
	}
}

// laterShown is how many of the requests the daemon tries again on its own
// status details (an outage of the remote makes every open one retry).
const laterShown = 10

// printLater writes, for requests the daemon tries again on its own, the
// error of the last attempt, whole, and when the next one is due.
func printLater(w io.Writer, rows []shopdb.Request, now time.Time) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\ntried again on its own (no action needed unless it lasts):")
	for i, r := range rows {
		if i == laterShown {
			fmt.Fprintf(w, "  (and %d more; --json shows every error)\n", len(rows)-laterShown)
			break
		}
		next := "at the next pass"
		if r.NextAttemptAt.After(now) {
			next = fmt.Sprintf("in %s (%s)", ago(r.NextAttemptAt, now), r.NextAttemptAt.Local().Format(time.TimeOnly))
		}
		fmt.Fprintf(w, "  %s (job %s, %s): %s; next attempt %s\n", termtext.Safe(r.RequestID), dash(termtext.Safe(jobOf(r))), r.Phase, qsync.Reason(r.Reason).Words, next)
		writeWrapped(w, "    last error: ", flat(r.LastError))
	}
}

// jobOf is the job a row holds, or the one it gave up.
func jobOf(r shopdb.Request) string {
	if r.JobNumber != "" {
		return r.JobNumber
	}
	return r.ReleasedJob
}

// writeWrapped writes text after prefix, wrapped at statusWrap, the
// continuation lines indented under the first. Make text from outside
// safe before (flat, termtext.Safe).
func writeWrapped(w io.Writer, prefix, text string) {
	indent := strings.Repeat(" ", len(prefix))
	line, empty := prefix, true // empty: nothing after the prefix yet
	for _, word := range strings.Fields(text) {
		if !empty && len(line)+1+len(word) > statusWrap {
			fmt.Fprintln(w, line)
			line, empty = indent, true
		}
		if !empty {
			line += " "
		}
		line, empty = line+word, false
	}
	fmt.Fprintln(w, line)
}

// statusRow is one request in status --json.
type statusRow struct {
	Request          string     `json:"request"`
	Claim            string     `json:"claim"`
	Job              string     `json:"job"`
	ReleasedJob      string     `json:"released_job,omitempty"`
	Phase            string     `json:"phase"`
	ResumePhase      string     `json:"resume_phase,omitempty"`
	Reason           string     `json:"reason,omitempty"`
	ReasonWords      string     `json:"reason_words,omitempty"`
	Fix              string     `json:"fix,omitempty"`
	Held             bool       `json:"held"`
	NeedsPerson      bool       `json:"needs_person"`
	Intent           string     `json:"intent,omitempty"`
	SupplementNeeded bool       `json:"supplement_needed"`
	Attempts         int        `json:"attempts"`
	NextAttemptAt    *time.Time `json:"next_attempt_at,omitempty"`
	LastError        string     `json:"last_error"`
	Expiry           *time.Time `json:"expiry,omitempty"`
	CreatedAt        *time.Time `json:"created_at,omitempty"`
	UpdatedAt        *time.Time `json:"updated_at,omitempty"`
	PushedAt         *time.Time `json:"pushed_at,omitempty"`
	SubmittedAt      *time.Time `json:"submitted_at,omitempty"`
}

// statusDoc is the document status --json prints.
type statusDoc struct {
	Requests     []statusRow    `json:"requests"`
	Counts       map[string]int `json:"counts"`
	Total        int            `json:"total"`
	StatusChange string         `json:"status_change"`
}

func writeStatusJSON(w io.Writer, rows []shopdb.Request, counts map[shopdb.Phase]int, total int, form string) int {
	doc := statusDoc{Requests: make([]statusRow, 0, len(rows)), Counts: make(map[string]int), Total: total, StatusChange: form}
	for ph, n := range counts {
		doc.Counts[string(ph)] = n
	}
	for _, r := range rows {
		ri := qsync.Reason(r.Reason)
		row := statusRow{
			Request: r.RequestID, Claim: r.ClaimNumber, Job: r.JobNumber, ReleasedJob: r.ReleasedJob, Phase: string(r.Phase),
			ResumePhase: string(r.ResumePhase), Reason: string(r.Reason), Held: ri.Hold, NeedsPerson: needsPerson(r),
			Intent: string(r.Intent), SupplementNeeded: r.SupplementNeeded, Attempts: r.Attempts,
			NextAttemptAt: timePtr(r.NextAttemptAt), LastError: r.LastError, Expiry: timePtr(r.Expiry),
			CreatedAt: timePtr(r.CreatedAt), UpdatedAt: timePtr(r.UpdatedAt), PushedAt: timePtr(r.PushedAt),
			SubmittedAt: timePtr(r.SubmittedAt),
		}
		if r.Reason != qsync.ReasonNone {
			row.ReasonWords, row.Fix = ri.Words, strings.ReplaceAll(ri.Fix, "REQUEST", r.RequestID)
		}
		doc.Requests = append(doc.Requests, row)
	}
	if err := writeJSON(w, doc); err != nil {
		return exitFailure
	}
	return exitOK
}

// timePtr is nil for the zero time (left out of the JSON).
func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
