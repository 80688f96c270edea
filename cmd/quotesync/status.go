package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quotesync/quotesync/shopdb"
)

const statusHelp = `Usage: quotesync status [--config FILE] [--all] [--json] [--limit N]

Shows the requests quotesync tracks, newest first: request id, claim, the
shop's job number, phase, when the quote was last pushed, the last error
(cut short; --json has it whole, as stored: up to 1,000 characters) and the age; then the number of requests
in each phase. Without --all, submitted and gone requests are left out:
what is left is in progress or needs attention (rejected, see 'quotesync
retry'; submitted with a supplement needed). It only reads the database
(no lock), so it works while the daemon runs. It needs the database
password, not the token.

Phases: waiting (no shop job yet), reserved (job number allocated, accept
sent or due), accepted, drafted (a Draft was pushed), submitted (done),
rejected (refused for good; needs a person), gone (expired or withdrawn
before acceptance).

Exit status: 0 shown, 1 the database could not be read (or a newer
quotesync migrated its state tables: upgrade quotesync), 2 bad flags or
configuration.

Example:
  quotesync status --config /etc/quotesync/config.yaml --all

Flags:
`

// statusErrorWidth is how much of a last error the table shows.
const statusErrorWidth = 60

// statusPhases orders the phase counts.
var statusPhases = []shopdb.Phase{shopdb.PhaseWaiting, shopdb.PhaseReserved, shopdb.PhaseAccepted,
	shopdb.PhaseDrafted, shopdb.PhaseSubmitted, shopdb.PhaseRejected, shopdb.PhaseGone}

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	config := fs.String("config", defaultConfigPath, "configuration `file`")
	all := fs.Bool("all", false, "include submitted and gone requests")
	asJSON := fs.Bool("json", false, "print JSON (every field, whole errors) for scripts")
	limit := fs.Int("limit", 200, "show at most `N` requests, newest first (0: all); the counts cover all")
	fs.Usage = func() { fmt.Fprint(stderr, statusHelp); fs.PrintDefaults() }
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if *limit < 0 {
		fmt.Fprintln(stderr, "quotesync status: --limit must be 0 (all) or more")
		return exitUsage
	}
	db, code := openStateDB(ctx, "status", *config, stderr)
	if db == nil {
		return code
	}
	defer db.Close()

	cur, _, err := db.SchemaVersion(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "quotesync status: %v\n", err)
		return exitFailure
	}
	var rows []shopdb.Request
	if cur > 0 {
		if rows, err = db.ListRequests(ctx, *all, 0); err != nil {
			fmt.Fprintf(stderr, "quotesync status: %v\n", err)
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
	now := time.Now()
	if *asJSON {
		return writeStatusJSON(stdout, rows, counts, total)
	}
	if cur == 0 {
		fmt.Fprintf(stdout, "quotesync's state tables do not exist yet in %s: nothing is tracked. The first start of 'quotesync run' (or 'once') creates them.\n", db.Config().Database)
		return exitOK
	}
	printStatus(stdout, rows, counts, total, *all, now)
	return exitOK
}

// openStateDB opens the shop database for a verb that reads or edits
// quotesync's state: only the database password is read. It returns the
// exit code to use when it returns nil.
func openStateDB(ctx context.Context, verb, path string, stderr io.Writer) (*shopdb.DB, int) {
	cf := commonFlags{config: path}
	set, err := cf.loadSettings(readShopSecrets)
	if err != nil {
		fmt.Fprintf(stderr, "quotesync %s: %v\n", verb, err)
		return nil, exitUsage
	}
	db, err := shopdb.Open(ctx, set.shop)
	if err != nil {
		fmt.Fprintf(stderr, "quotesync %s: %s\n", verb, explainDBError(err, set))
		return nil, exitFailure
	}
	cur, latest, err := db.SchemaVersion(ctx)
	if err == nil && cur > latest {
		err = schemaTooNew(set.shop.Database, cur, latest)
	}
	if err != nil {
		fmt.Fprintf(stderr, "quotesync %s: %v\n", verb, err)
		_ = db.Close()
		return nil, exitFailure
	}
	return db, exitOK
}

// printStatus writes the table and the counts.
func printStatus(w io.Writer, rows []shopdb.Request, counts map[shopdb.Phase]int, total int, all bool, now time.Time) {
	if total == 0 {
		if all {
			fmt.Fprintln(w, "no requests tracked yet")
		} else {
			fmt.Fprintln(w, "no requests in progress or rejected (--all shows submitted and gone ones too)")
		}
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REQUEST\tCLAIM\tJOB\tPHASE\tLAST PUSH\tLAST ERROR\tAGE")
	for _, r := range rows {
		phase := string(r.Phase)
		if r.SupplementNeeded {
			phase += " (supplement needed)"
		}
		last := "-"
		if !r.PushedAt.IsZero() {
			last = ago(now, r.PushedAt) + " ago"
		}
		errText := dash(truncate(errorSummary(r), statusErrorWidth))
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.RequestID, dash(r.ClaimNumber), dash(r.JobNumber), phase, last, errText, ago(now, r.CreatedAt))
	}
	_ = tw.Flush()
	if len(rows) < total {
		fmt.Fprintf(w, "(the newest %d of %d shown; --limit 0 shows all)\n", len(rows), total)
	}
	var parts []string
	for _, ph := range statusPhases {
		if n := counts[ph]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, ph))
		}
	}
	what := "requests"
	if !all {
		what = "requests in progress or rejected"
	}
	fmt.Fprintf(w, "\n%d %s: %s\n", total, what, strings.Join(parts, ", "))
}

// errorSummary is the last error without a leading clause that only
// repeats the request or the job ("accept request 17 with job RO-5: "),
// which the table shows in columns of their own.
func errorSummary(r shopdb.Request) string {
	head, rest, ok := strings.Cut(r.LastError, ": ")
	if ok && (strings.Contains(head, "request "+r.RequestID) || (r.JobNumber != "" && strings.Contains(head, "job "+r.JobNumber))) {
		return rest
	}
	return r.LastError
}

// statusRow is one request in status --json.
type statusRow struct {
	Request          string     `json:"request"`
	Claim            string     `json:"claim"`
	Job              string     `json:"job"`
	Phase            string     `json:"phase"`
	ResumePhase      string     `json:"resume_phase,omitempty"`
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
	Requests []statusRow    `json:"requests"`
	Counts   map[string]int `json:"counts"`
	Total    int            `json:"total"`
}

func writeStatusJSON(w io.Writer, rows []shopdb.Request, counts map[shopdb.Phase]int, total int) int {
	doc := statusDoc{Requests: make([]statusRow, 0, len(rows)), Counts: make(map[string]int), Total: total}
	for ph, n := range counts {
		doc.Counts[string(ph)] = n
	}
	for _, r := range rows {
		doc.Requests = append(doc.Requests, statusRow{
			Request: r.RequestID, Claim: r.ClaimNumber, Job: r.JobNumber, Phase: string(r.Phase),
			ResumePhase: string(r.ResumePhase), SupplementNeeded: r.SupplementNeeded, Attempts: r.Attempts,
			NextAttemptAt: timePtr(r.NextAttemptAt), LastError: r.LastError, Expiry: timePtr(r.Expiry),
			CreatedAt: timePtr(r.CreatedAt), UpdatedAt: timePtr(r.UpdatedAt), PushedAt: timePtr(r.PushedAt),
			SubmittedAt: timePtr(r.SubmittedAt),
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
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
