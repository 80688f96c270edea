package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/statuspage"
	"github.com/quotesync/quotesync/cmd/internal/termtext"
)

const historyHelp = `Usage: quotesync history [--config FILE] [--json] [--limit N] [--insurer NAME] REQUEST|JOB

Prints a request's story: its claim, job and phase, and for one that is
held, refused or taken elsewhere, why in plain words and what to do; then
its timeline from quotesync's event log, oldest first: when it was listed
and the job number reserved for it, the accept with its referenceId, each
Draft with its lines count and hash, the submit, and every change after
(a re-pushed Draft, a hold and its release, a supplement needed, a
retry). The status page shows the same timeline.

The argument is a request id or a shop job number (one a request holds,
or gave up); when it names several requests (a job number used again),
each is printed, newest first. It only reads the database (no lock), so it
works while the daemon runs. It needs the database password, not the
token. Times are in sync.time_zone.

With several insurers (remotes:), two insurers' services may use one
request id: --insurer NAME says whose request it is (an insurer no
longer configured too). Without it, an id tracked for several insurers
is not shown: their requests are listed (insurer, request, claim, job,
phase) and the exit status is 1. With one insurer configured, an id
names its request. Each request shown names its insurer when several
are configured; --json always carries it.

Exit status: 0 shown, 1 no tracked request has that id or job number, or
the id is tracked for several insurers and --insurer names none (or the
database could not be read, or a newer quotesync migrated its state
tables: upgrade quotesync; or an older one left them: run 'quotesync
once' or start the daemon to migrate them), 2 bad flags or
configuration.

Example:
  quotesync history --config /etc/quotesync/config.yaml RO-50001
  quotesync history --json 1234
  quotesync history --insurer aa 7301

Flags:
`

func runHistory(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := verbFlags("history", historyHelp)
	cfg := registerConfig(fs)
	asJSON := fs.Bool("json", false, "print JSON (every field, whole texts) for scripts")
	limit := fs.Int("limit", statuspage.DefaultTimelineLimit, "show the newest `N` events of each request (0: all)")
	insurer := fs.String("insurer", "", "the insurer whose request it is (when two insurers' services use the id)")
	arg, code, ok := parseOneArg(fs, "a request id or a job number", args, stdout, stderr)
	if !ok {
		return code
	}
	if badListFlags(stderr, "history", *limit, *insurer) {
		return exitUsage
	}
	n := cmp.Or(*limit, math.MaxInt32)
	st, db, set, cur, code := openStateDB(ctx, "history", cfg.common(), stderr)
	if st == nil {
		return code
	}
	defer db.Close()
	stdout, flush := redacting(stdout, set.Daemon.Secrets) // it quotes the errors quotesync kept
	defer flush()
	if cur == 0 {
		return failf(stderr, exitFailure, "quotesync history: %s is not tracked: quotesync's state tables do not exist yet in %s (the first start of 'quotesync run' or 'once' creates them)", termtext.Safe(arg), db.Config().Database)
	}
	stories, err := statuspage.FindStories(ctx, st, statuspage.Lookup{Arg: arg, Insurer: *insurer, Configured: set.Daemon.Names(), Limit: n})
	var amb *statuspage.AmbiguousError
	switch {
	case errors.As(err, &amb):
		return printAmbiguous(stdout, stderr, amb, *asJSON)
	case errors.Is(err, statuspage.ErrNotFound) && *insurer != "":
		return failf(stderr, exitFailure, "quotesync history: insurer %s has no tracked request with the id or the job number %q; 'quotesync status --all --insurer %s' lists its requests", *insurer, arg, *insurer)
	case errors.Is(err, statuspage.ErrNotFound):
		return failf(stderr, exitFailure, "quotesync history: no tracked request has the id or the job number %q; 'quotesync status --all' lists the requests quotesync knows", arg)
	case err != nil:
		return fail(stderr, exitFailure, "history", err)
	}
	if *asJSON {
		if err := writeJSON(stdout, struct {
			Requests []statuspage.Story `json:"requests"`
		}{stories}); err != nil {
			return exitFailure
		}
		return exitOK
	}
	loc := cmp.Or(set.Daemon.Sync.Location, time.UTC)
	for i, st := range stories {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		printHistory(stdout, st, loc)
	}
	return exitOK
}

// printHistory writes one request's story: the head, then the timeline
// as a table (each step's details on lines of their own beneath it).
func printHistory(w io.Writer, st statuspage.Story, loc *time.Location) {
	of := ""
	if st.Named {
		of = "  insurer " + dash(termtext.Safe(st.Insurer))
	}
	fmt.Fprintf(w, "request %s%s  claim %s  job %s\n", termtext.Safe(st.ID), of, dash(termtext.Safe(st.Claim)), dash(termtext.Safe(st.JobShown())))
	// Phases, reasons and event kinds are quotesync's own words, but rows
	// written by another version may hold others: shown escaped.
	fmt.Fprintf(w, "phase: %s (%s)\n", termtext.Safe(st.Phase), termtext.Safe(st.PhaseWords))
	if st.ReasonWords != "" {
		head := "reason: "
		if st.Held {
			head = "held: "
		}
		writeWhy(w, "", head, st.Request)
	}
	fmt.Fprintln(w)
	if len(st.Steps) == 0 {
		fmt.Fprintln(w, "no events recorded")
		return
	}
	if st.Cut {
		fmt.Fprintln(w, "(older events left out; --limit 0 shows all)")
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tEVENT\tPHASE\tWHAT")
	for _, s := range st.Steps {
		phase := s.To
		if s.From != "" && s.From != s.To {
			phase = s.From + " -> " + s.To
		}
		what := s.What
		if s.Words != "" {
			what += ": " + s.Words
		}
		if s.Route != "" && s.Status != 0 {
			what += fmt.Sprintf(" [%s: %d]", s.Route, s.Status)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.At.In(loc).Format("2006-01-02 15:04:05 MST"), termtext.Safe(s.Kind), dash(termtext.Safe(phase)), termtext.Safe(what))
		if s.Details != "" && !strings.Contains(what, s.Details) {
			for _, l := range strings.Split(termtext.Lines(s.Details), "\n") {
				fmt.Fprintf(tw, "\t\t\t  %s\n", l)
			}
		}
	}
	_ = tw.Flush()
}

// printAmbiguous lists the requests of the insurers that track one id
// (on standard output, as JSON with asJSON) and says how to choose one;
// it returns the exit status.
func printAmbiguous(stdout, stderr io.Writer, amb *statuspage.AmbiguousError, asJSON bool) int {
	id := termtext.Safe(amb.ID)
	fmt.Fprintf(stderr, "quotesync history: %s: pass --insurer NAME (e.g. 'quotesync history --insurer %s %s')\n",
		termtext.Safe(amb.Error()), termtext.Safe(amb.Matches[0].Insurer), id)
	if asJSON {
		_ = writeJSON(stdout, struct {
			Ambiguous []statuspage.Request `json:"ambiguous"`
		}{amb.Matches})
		return exitFailure
	}
	fmt.Fprintf(stdout, "request %s is tracked for %d insurers:\n", id, len(amb.Matches))
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INSURER\tREQUEST\tCLAIM\tJOB\tPHASE")
	for _, m := range amb.Matches {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", dash(termtext.Safe(m.Insurer)), truncate(id, 24), dash(truncate(termtext.Safe(m.Claim), 24)),
			dash(termtext.Safe(m.JobShown())), termtext.Safe(m.Phase))
	}
	_ = tw.Flush()
	return exitFailure
}
