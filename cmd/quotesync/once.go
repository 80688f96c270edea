package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/termtext"
	"github.com/quotesync/quotesync/remote/redact"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

const onceHelp = `Usage: quotesync once [--config FILE] [--dry-run [--json]]
                      [--log-format console] [--log-level LEVEL]

Runs one pass now: list the pending requests, accept new ones, push the
Drafts whose lines changed, submit the final ones; then exits. The state
tables are migrated first, and the single-instance lock is taken for the
pass (another running instance makes it exit 1).

With several insurers (remotes:) every insurer's pass runs, at once; the
plan of a dry run gives each insurer's counts and names the insurer of
each action. An insurer whose plan fails (its service down) does not
hide the others': their plans are printed, the failure named after them
on standard error, and the exit status is 1.

With --dry-run it prints what a pass would do, computed from real reads,
and writes nothing anywhere: no remote write, no shop statement that
writes, no change to quotesync's state, no migration. On a fresh install
(quotesync's tables do not exist yet) it plans as if nothing were tracked.
--json prints that plan as JSON; it needs --dry-run.

Either way it refuses state tables that a newer quotesync migrated
(upgrade quotesync first). After a real pass it says on standard error
how many requests now need a person (see 'quotesync status').

Exit status: 0 the pass succeeded, 1 it could not start or the pass
failed (standard error says why), 2 bad flags or configuration (every
key is checked first: nothing is migrated or called with a bad file).

Example:
  quotesync once --config /etc/quotesync/config.yaml --dry-run

Flags:
`

func runOnce(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := verbFlags("once", onceHelp)
	var cf commonFlags
	cf.register(fs)
	dry := fs.Bool("dry-run", false, "print the plan of a pass; write nothing")
	asJSON := fs.Bool("json", false, "with --dry-run: print the plan as JSON")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *asJSON && !*dry {
		return failf(stderr, exitUsage, "quotesync once: --json prints the plan of a dry run and needs --dry-run; a real pass reports on its log (quotesync once --dry-run --json)")
	}
	cf.secrets = redact.New()
	stdout, flush := redacting(stdout, cf.secrets) // the plan quotes the service's answers
	defer flush()
	qd, done, code := cf.assemble(ctx, "once", config.AllSecrets, qsync.OpenOptions{Migrate: !*dry, AllowNoTables: *dry}, stderr)
	if qd == nil {
		return code
	}
	defer done()

	if *dry {
		plan, err := qd.Plan(ctx)
		failed := insurerErrors(err)
		if err != nil && len(failed) == 0 {
			// One insurer's plan failed, or something that is no insurer's.
			return fail(stderr, exitFailure, "once --dry-run", err)
		}
		// With several insurers, one failing leaves the others' plans to
		// show; the failure is named after them, and the exit status says it.
		if *asJSON {
			if err := writeJSON(stdout, plan); err != nil {
				return exitFailure
			}
		} else {
			printPlan(stdout, plan, len(qd.Engines) > 1)
		}
		for _, ie := range failed {
			printErr(stderr, "once --dry-run", ie)
		}
		if err != nil {
			return exitFailure
		}
		return exitOK
	}
	s, err := qd.Once(ctx)
	switch {
	case errors.Is(err, store.ErrNotLeader):
		return failf(stderr, exitFailure, "quotesync once: another quotesync instance holds the lock on this shop database; stop it or let it do the pass")
	case err != nil:
		// The engine logged the error with its context; this is the verdict.
		return failf(stderr, exitFailure, "quotesync once: the pass failed; the log above says why")
	}
	if n := s.Rejected + s.TakenElsewhere + s.AcceptUnknown; n > 0 {
		fmt.Fprintf(stderr, "quotesync once: the pass succeeded; %s now %s a person (rejected %d, taken elsewhere %d, accept outcome unknown %d): see quotesync status\n",
			qsync.Plural(n, "request"), map[bool]string{true: "needs", false: "need"}[n == 1], s.Rejected, s.TakenElsewhere, s.AcceptUnknown)
	}
	return exitOK
}

// insurerErrors returns the failures of single insurers err joins (see
// qsync.Daemon.Plan); none when err is also something else.
func insurerErrors(err error) []*qsync.InsurerError {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else if err != nil {
		errs = []error{err}
	}
	var out []*qsync.InsurerError
	for _, e := range errs {
		ie, ok := e.(*qsync.InsurerError)
		if !ok {
			return nil
		}
		out = append(out, ie)
	}
	return out
}

// printPlan writes a dry run's plan as a table; with several insurers,
// each insurer's counts (or that its plan failed) come first, and each
// action names its insurer.
func printPlan(w io.Writer, p qsync.Plan, several bool) {
	var done []string // the insurers whose plan is whole
	for _, ip := range p.Insurers {
		if ip.Error != "" {
			fmt.Fprintf(w, "insurer %s: plan failed, its actions may be missing: %s\n", ip.Insurer, flat(ip.Error))
			continue
		}
		done = append(done, ip.Insurer)
		fmt.Fprintf(w, "insurer %s: pending requests on the remote: %d; open requests in quotesync's state: %d\n", ip.Insurer, ip.Pending, ip.Tracked)
	}
	if len(p.Insurers) == 0 {
		fmt.Fprintf(w, "pending requests on the remote: %d; open requests in quotesync's state: %d\n", p.Pending, p.Tracked)
	}
	if len(p.Actions) == 0 {
		switch {
		case len(done) == 0 && len(p.Insurers) > 0: // every insurer's plan failed
		case len(done) < len(p.Insurers):
			fmt.Fprintf(w, "nothing to do for %s\n", strings.Join(done, ", "))
		default:
			fmt.Fprintln(w, "nothing to do")
		}
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if several {
		fmt.Fprint(tw, "INSURER\t")
	}
	fmt.Fprintln(tw, "REQUEST\tCLAIM\tJOB\tPHASE\tWOULD\tWHY")
	for _, a := range p.Actions {
		phase := cmp.Or(string(a.Phase), "new")
		do := a.Do
		if a.Items > 0 {
			do = fmt.Sprintf("%s (%s)", do, qsync.Plural(a.Items, "item"))
		}
		if several {
			fmt.Fprintf(tw, "%s\t", a.Insurer)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", termtext.Safe(a.Request), dash(termtext.Safe(a.Claim)), dash(termtext.Safe(a.Job)), phase, do, flat(a.Why))
	}
	_ = tw.Flush()
}
