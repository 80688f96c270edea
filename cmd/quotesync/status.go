package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/statuspage"
	"github.com/quotesync/quotesync/cmd/internal/termtext"
	"github.com/quotesync/quotesync/remote/redact"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

const statusHelp = `Usage: quotesync status [--config FILE] [--all] [--json] [--limit N] [--insurer NAME]

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

With several insurers (remotes:), the table starts with an INSURER column
(two insurers' services may use one request id), the counts are also
given for each insurer, and --insurer NAME shows one insurer's requests
only (an insurer no longer configured too). With one insurer, and its
requests alone, there is no such column. --json always carries each
request's insurer.

Phases: waiting (no shop job yet), reserved (job number allocated, accept
sent or due), accept_unknown (our accept probably landed; the first Draft
push confirms it), accepted, drafted (a Draft was pushed), submitted
(done), rejected (refused for good; needs a person), gone (expired or left
the list before our accept landed), taken_elsewhere (someone else accepted
it). 'quotesync retry REQUEST' puts a stuck request back into the flow;
'quotesync history REQUEST' shows one request's timeline.

Exit status: 0 shown, 1 the database could not be read (or a newer
quotesync migrated its state tables: upgrade quotesync; or an older one
left them: run 'quotesync once' or start the daemon to migrate them), 2
bad flags or configuration.

Example:
  quotesync status --config /etc/quotesync/config.yaml --all
  quotesync status --insurer aa

Flags:
`

// statusWrap is the width the details below the table are wrapped at.
const statusWrap = 100

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := verbFlags("status", statusHelp)
	cfg := registerConfig(fs)
	all := fs.Bool("all", false, "include submitted and gone requests")
	asJSON := fs.Bool("json", false, "print JSON (every field, whole errors) for scripts")
	limit := fs.Int("limit", 200, "show at most `N` requests, newest first (0: all); the counts cover all")
	insurer := fs.String("insurer", "", "show the requests of the insurer `NAME` only")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if badListFlags(stderr, "status", *limit, *insurer) {
		return exitUsage
	}
	st, db, set, cur, code := openStateDB(ctx, "status", cfg.common(), stderr)
	if st == nil {
		return code
	}
	defer db.Close()
	stdout, flush := redacting(stdout, set.Daemon.Secrets) // it quotes the errors quotesync kept
	defer flush()

	var rows []store.Request
	if cur > 0 {
		q := store.ListQuery{Insurer: *insurer}
		if !*all {
			q.Hide, q.KeepSupplements = []store.Phase{qsync.PhaseSubmitted, qsync.PhaseGone}, true
		}
		var err error
		if rows, err = st.ListRequests(ctx, q); err != nil {
			printErr(stderr, "status", err)
			return exitFailure
		}
	}
	rep := newStatusReport(rows, set.Daemon.Names(), *insurer, *all, *limit)
	form := statusForm(ctx, st, set)
	if *asJSON {
		return writeStatusJSON(stdout, rep, form)
	}
	if cur == 0 {
		fmt.Fprintf(stdout, "quotesync's state tables do not exist yet in %s: nothing is tracked. The first start of 'quotesync run' (or 'once') creates them.\n", db.Config().Database)
		return exitOK
	}
	printStatus(stdout, rep, time.Now())
	fmt.Fprintf(stdout, "status change: %s\n", form)
	printDeliveries(ctx, stdout, st, set.Daemon.Secrets)
	return exitOK
}

// statusForm says which status change the daemon sends, for each insurer
// (named when there are several).
func statusForm(ctx context.Context, st *store.Store, set *config.Settings) string {
	ins := set.Daemon.Insurers
	return perInsurer(ins, ": ", "; ", func(in qsync.Insurer) string { return insurerStatusForm(ctx, st, in, len(ins) == 1) })
}

// insurerStatusForm says which status change the daemon sends to ins;
// alone, it reads what auto mode found before insurers had names too.
func insurerStatusForm(ctx context.Context, st *store.Store, ins qsync.Insurer, alone bool) string {
	rc := ins.Remote
	switch rc.StatusPath {
	case "auto":
		found, ok, err := st.Setting(ctx, qsync.StatusFormKey(ins.Name))
		if err == nil && !ok && alone {
			found, ok, err = st.Setting(ctx, qsync.LegacyStatusFormKey)
		}
		if err == nil && ok {
			return "auto; found and used: " + termtext.Safe(found)
		}
		return "auto; not found yet (the first submit finds it)"
	case "":
		return "POST /jobs/{jobId}/quotes/status/{status} (the default)"
	}
	return cmp.Or(rc.StatusMethod, "POST") + " " + rc.StatusPath
}

// badListFlags says on stderr what is wrong with a verb's --limit or
// --insurer, if anything.
func badListFlags(stderr io.Writer, verb string, limit int, insurer string) bool {
	if limit < 0 {
		fmt.Fprintf(stderr, "quotesync %s: --limit must be 0 (all) or more\n", verb)
		return true
	}
	if err := store.CheckInsurerName(insurer); insurer != "" && err != nil {
		fmt.Fprintf(stderr, "quotesync %s: --insurer: %s\n", verb, termtext.Safe(err.Error()))
		return true
	}
	return false
}

// openStateDB opens the shop database for a verb that reads quotesync's
// state: only the database password is read. It returns quotesync's store
// (as qsync.RequestsStore reads it), the database to close and the
// version of the state tables (0: none yet), or nil and the exit code.
func openStateDB(ctx context.Context, verb string, cf commonFlags, stderr io.Writer) (*store.Store, *shopdb.DB, *config.Settings, int, int) {
	set, err := cf.loadSettings(config.ShopSecrets)
	if err != nil {
		printErr(stderr, verb, err)
		return nil, nil, nil, 0, exitUsage
	}
	db, err := shopdb.Open(ctx, set.Daemon.Shop)
	if err != nil {
		printErr(stderr, verb, err)
		return nil, nil, nil, 0, exitFailure
	}
	st := store.New(db)
	// One place for every reader of quotesync's rows: tables another
	// version left are named as such, never read into a raw "unknown
	// column" error.
	cur, latest, err := st.SchemaVersion(ctx)
	switch {
	case err != nil:
	case cur > latest:
		err = qsync.SchemaTooNew(set.Daemon.Shop.Database, cur, latest)
	case cur > 0 && cur < latest:
		err = qsync.SchemaTooOld(set.Daemon.Shop.Database, cur, latest)
	}
	if err != nil {
		printErr(stderr, verb, err)
		_ = db.Close()
		return nil, nil, nil, 0, exitFailure
	}
	return qsync.RequestsStore(st, set.Daemon), db, set, cur, exitOK
}

// printStatus writes the table, what needs a person, and the counts.
func printStatus(w io.Writer, rep statusReport, now time.Time) {
	if rep.total == 0 {
		printNone(w, rep)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "REQUEST\tCLAIM\tJOB\tPHASE\tREASON\tLAST PUSH\tAGE"
	if rep.named {
		head = "INSURER\t" + head
	}
	fmt.Fprintln(tw, head)
	var attention, later []store.Request
	for _, r := range rep.rows {
		q := statuspage.RequestOf(r, rep.named)
		// Phase and reason are quotesync's own words, but a row written by
		// another version may hold others: shown escaped like the rest.
		phase := termtext.Safe(q.Phase)
		if q.Supplement {
			phase += " (supplement needed)"
		}
		last := "-"
		if !r.PushedAt.IsZero() {
			last = ago(now, r.PushedAt) + " ago"
		}
		reason := termtext.Safe(q.Reason)
		if q.Held {
			reason = "held: " + reason
		}
		if rep.named {
			fmt.Fprintf(tw, "%s\t", dash(termtext.Safe(r.Insurer)))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", truncate(termtext.Safe(r.RequestID), 24), dash(truncate(termtext.Safe(r.ClaimNumber), 24)),
			dash(termtext.Safe(q.JobShown())), phase, dash(reason), last, ago(now, r.CreatedAt))
		switch {
		case q.NeedsPerson:
			attention = append(attention, r)
		case r.LastError != "" && qsync.IsOpen(r.Phase):
			later = append(later, r)
		}
	}
	_ = tw.Flush()
	if len(rep.rows) < rep.total {
		fmt.Fprintf(w, "(the newest %d of %d shown; --limit 0 shows all)\n", len(rep.rows), rep.total)
	}
	if len(attention) > 0 {
		fmt.Fprintf(w, "\nneeds a person:\n")
		for _, r := range attention {
			printAttention(w, r, rep.named)
		}
	}
	printLater(w, later, rep.named, now)
	what := qsync.Plural(rep.total, "request")
	if !rep.all {
		what += " in progress or needing attention"
	}
	fmt.Fprintf(w, "\n%s: %s\n", what, phaseSummary(rep.counts))
	if rep.named && rep.insurer == "" {
		for _, name := range rep.insurers {
			c := rep.byInsurer[name]
			fmt.Fprintf(w, "  %s%s: %s\n", termtext.Safe(name), rep.unconfigured(name), phaseSummary(c))
		}
	}
}

// printNone says that nothing is shown, and why.
func printNone(w io.Writer, rep statusReport) {
	what := "no requests"
	if rep.insurer != "" {
		what += " of insurer " + rep.insurer
	}
	if rep.all {
		fmt.Fprintf(w, "%s tracked yet%s\n", what, rep.unconfigured(rep.insurer))
	} else {
		fmt.Fprintf(w, "%s in progress or needing attention%s (--all shows submitted and gone ones too)\n", what, rep.unconfigured(rep.insurer))
	}
}

// phaseSummary is "2 requests: 1 reserved, 1 drafted" (the phases in the
// machine's order), or "no requests".
func phaseSummary(counts map[store.Phase]int) string {
	var parts []string
	total := 0
	for _, ph := range qsync.Phases() {
		if n := counts[ph.Phase]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, ph.Phase))
		}
	}
	for _, n := range counts {
		total += n
	}
	if total == 0 {
		return "no requests"
	}
	return strings.Join(parts, ", ")
}

// printAttention writes what happened to r, its details and the fix,
// wrapped, never cut; its insurer too when named.
func printAttention(w io.Writer, r store.Request, named bool) {
	fmt.Fprintf(w, "  %s:\n", requestHead(r, named))
	writeWhy(w, "    ", "", statuspage.RequestOf(r, named))
}

// writeWhy writes q's reason in words after head, then its details and
// the fix, wrapped, every line after indent.
func writeWhy(w io.Writer, indent, head string, q statuspage.Request) {
	writeWrapped(w, indent+head, termtext.Safe(q.ReasonWords))
	if q.Details != "" {
		writeWrapped(w, indent+"details: ", flat(q.Details))
	}
	if q.Fix != "" {
		writeWrapped(w, indent+"what to do: ", termtext.Safe(q.Fix))
	}
}

// laterShown is how many of the requests the daemon tries again on its own
// status details (an outage of the remote makes every open one retry).
const laterShown = 10

// printLater writes, for requests the daemon tries again on its own, the
// error of the last attempt, whole, and when the next one is due.
func printLater(w io.Writer, rows []store.Request, named bool, now time.Time) {
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
		fmt.Fprintf(w, "  %s: %s; next attempt %s\n", requestHead(r, named), termtext.Safe(qsync.Reason(r.Reason).Words), next)
		writeWrapped(w, "    last error: ", flat(r.LastError))
	}
}

// requestHead is "ID (insurer NAME, job JOB, PHASE)", the insurer only
// when named.
func requestHead(r store.Request, named bool) string {
	of := ""
	if named {
		of = "insurer " + dash(termtext.Safe(r.Insurer)) + ", "
	}
	return fmt.Sprintf("%s (%sjob %s, %s)", termtext.Safe(r.RequestID), of, dash(termtext.Safe(jobOf(r))), termtext.Safe(string(r.Phase)))
}

// jobOf is the job a row holds, or the one it gave up.
func jobOf(r store.Request) string {
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

// printDeliveries adds the outbox to status when a write-back or a
// notification is not made yet: how many, how many failed, the last
// failure (the secrets of set redacted before it is bounded). Nothing
// when every delivery was made.
func printDeliveries(ctx context.Context, w io.Writer, st *store.Store, set *redact.Secrets) {
	ds, err := st.DeliveryStats(ctx)
	switch {
	case err != nil:
		fmt.Fprintf(w, "deliveries: %s\n", flat(err.Error()))
	case ds.Pending > 0:
		fmt.Fprintf(w, "deliveries (write-back, notifications): %s\n", flat(qsync.DeliveryLine(set, ds)))
	}
}
