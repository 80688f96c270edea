package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/termtext"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

const insurersHelp = `Usage: quotesync insurers [--config FILE]
       quotesync insurers adopt [--config FILE] NAME
       quotesync insurers move [--config FILE] [--force] OLD NEW
       quotesync insurers end [--config FILE] [--force] OLD

Settles which insurer quotesync's requests belong to. An insurer's name
(remotes[].name, or "default" for a lone remote:) keys its requests in
quotesync's tables; the daemon refuses to start while live requests
belong to an insurer the file no longer has, or while rows written before
insurers had names are there with several insurers configured.

Without a sub-command it lists the configured insurers and every insurer
quotesync's tables know, with their live and total requests.

  adopt NAME      gives the rows written before insurers had names (by a
                  quotesync that served one insurer) to NAME, a configured
                  insurer: the one whose service they came from. A row
                  whose request id NAME tracks already is left as it is
                  (both are kept), named, with what to do (exit 1)
  move OLD NEW    a rename: moves every request of OLD, an insurer the file
                  no longer has, with its events and deliveries, to NEW, a
                  configured insurer; then OLD's notices of no request,
                  the keys that keep its notices from repeating, and its
                  status form (unless NEW has one)
  end OLD         ends every live request of OLD, an insurer the file no
                  longer has: gone, reason insurer_ended; OLD's service
                  is not called. A request OLD's service may hold
                  accepted with our job number keeps its job, which no
                  other request is given; the others free theirs (the
                  shop keeps the jobs either way)

move and end change each request through the daemon's executor, as a
pass does: each is logged, recorded in its event log, and written back
and notified as the mapping says. Without --force they list what they
would change and change nothing. Like once, they migrate quotesync's
tables first. They need the database password, not the tokens; they are
safe while a daemon runs (each row is changed compare-and-set).

Exit status: 0 done (or listed), 1 a request could not be changed or the
database failed, 2 bad flags or configuration, or --force missing.

Example:
  quotesync insurers move --config /etc/quotesync/config.yaml --force default acme

Flags:
`

func runInsurers(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	sub := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	fs := verbFlags("insurers", insurersHelp)
	cfg := registerConfig(fs)
	force := fs.Bool("force", false, "move or end: change the requests (without it, list what would change)")
	names, code, ok := parseInsurersArgs(fs, sub, args, stdout, stderr)
	if !ok {
		return code
	}
	cf := cfg.common()
	qd, done, code := cf.assemble(ctx, "insurers", config.ShopSecrets,
		qsync.OpenOptions{Migrate: true, StateOnly: true, Maintenance: true}, stderr)
	if qd == nil {
		return code
	}
	defer done()
	switch sub {
	case "":
		return listInsurers(ctx, qd, stdout, stderr)
	case "adopt":
		a, err := qd.Adopt(ctx, names[0])
		if err != nil && !errors.Is(err, qsync.ErrAdoptKept) {
			return fail(stderr, exitFailure, "insurers adopt", err)
		}
		fmt.Fprintf(stdout, "insurer %s adopted %s, %s and %s written before insurers had names\n", names[0],
			qsync.Plural(a.Requests, "request"), qsync.Plural(a.Events, "event"), qsync.Plural(a.Deliveries, "delivery"))
		if err != nil { // some were left: each id is tracked by the insurer already
			return fail(stderr, exitFailure, "insurers adopt", err)
		}
		return exitOK
	}
	return settleInsurer(ctx, qd, sub, names, *force, stdout, stderr)
}

// parseInsurersArgs parses the flags, before and after the names, and
// checks the names a sub-command takes.
func parseInsurersArgs(fs *flag.FlagSet, sub string, args []string, stdout, stderr io.Writer) ([]string, int, bool) {
	if wantsHelp(args) || sub == "help" {
		sub, args = "", []string{"--help"}
	}
	n, known := map[string]int{"": 0, "adopt": 1, "move": 2, "end": 1}[sub]
	if !known {
		fmt.Fprintf(stderr, "quotesync insurers: unknown sub-command %q; use adopt, move or end (or none, to list)\n", termtext.Safe(sub))
		return nil, exitUsage, false
	}
	names, code, ok := parseArgs(fs, args, stdout, stderr)
	if !ok {
		return nil, code, false
	}
	if len(names) != n {
		fmt.Fprintf(stderr, "quotesync insurers %s: %s, got %d; run 'quotesync insurers --help'\n", sub,
			map[int]string{0: "no argument", 1: "one insurer name", 2: "two insurer names, OLD and NEW"}[n], len(names))
		return nil, exitUsage, false
	}
	return names, exitOK, true
}

// listInsurers prints the configured insurers and those of the tables,
// with their live and total requests.
func listInsurers(ctx context.Context, qd *qsync.Daemon, stdout, stderr io.Writer) int {
	counts, err := qd.Store.PhaseCounts(ctx)
	if err != nil {
		return fail(stderr, exitFailure, "insurers", err)
	}
	type tally struct{ live, all int }
	by := map[string]*tally{}
	var order []string
	add := func(name string) *tally {
		if by[name] == nil {
			by[name] = &tally{}
			order = append(order, name)
		}
		return by[name]
	}
	for _, e := range qd.Engines {
		add(e.Insurer())
	}
	for _, c := range counts {
		t := add(c.Insurer)
		t.all += c.N
		if qsync.IsOpen(c.Phase) {
			t.live += c.N
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INSURER\tCONFIGURED\tLIVE\tREQUESTS\tWHAT TO DO")
	for _, name := range order {
		t := by[name]
		configured := qd.EngineOf(name) != nil
		shown, todo := name, "-"
		switch {
		case name == "":
			shown, todo = "(before insurers)", "quotesync insurers adopt NAME (the first start does it with one insurer)"
		case !configured && t.live > 0:
			todo = "quotesync insurers move " + name + " NEW --force, or end " + name + " --force"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", termtext.Safe(shown), map[bool]string{true: "yes", false: "no"}[configured], t.live, t.all, todo)
	}
	_ = tw.Flush()
	return exitOK
}

// settleInsurer moves or ends the requests of an insurer no longer
// configured, or without force lists them.
func settleInsurer(ctx context.Context, qd *qsync.Daemon, sub string, names []string, force bool, stdout, stderr io.Writer) int {
	from := names[0]
	q := store.ListQuery{Insurer: from}
	if sub == "end" {
		q.Hide = qsync.ClosedPhases()
	}
	rows, err := qd.Store.ListRequests(ctx, q)
	if err != nil {
		return fail(stderr, exitFailure, "insurers "+sub, err)
	}
	if !force {
		what := map[string]string{"move": "move to insurer " + termtext.Safe(strings.Join(names[1:], "")), "end": "end"}[sub]
		fmt.Fprintf(stdout, "would %s %s of insurer %s:\n", what, qsync.Plural(len(rows), "request"), termtext.Safe(from))
		for _, r := range slices.Backward(rows) {
			fmt.Fprintf(stdout, "  %s (claim %s, job %s, %s)\n", termtext.Safe(r.RequestID), dash(termtext.Safe(r.ClaimNumber)), dash(termtext.Safe(r.JobNumber)), r.Phase)
		}
		return failf(stderr, exitUsage, "quotesync insurers %s: nothing changed; add --force to %s them", sub, sub)
	}
	var done []store.Request
	var errs []error
	if sub == "move" {
		done, errs, err = qd.MoveRequests(ctx, from, names[1])
	} else {
		done, errs, err = qd.End(ctx, from)
	}
	if err != nil {
		return fail(stderr, exitFailure, "insurers "+sub, err)
	}
	verb := map[string]string{"move": "moved to insurer " + termtext.Safe(strings.Join(names[1:], "")), "end": "ended"}[sub]
	fmt.Fprintf(stdout, "%s of insurer %s %s\n", qsync.Plural(len(done), "request"), termtext.Safe(from), verb)
	for _, e := range errs {
		printErr(stderr, "insurers "+sub, e)
	}
	if len(errs) > 0 {
		return exitFailure
	}
	return exitOK
}
