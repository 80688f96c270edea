package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/termtext"
	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

const previewHelp = `Usage: quotesync preview [--config FILE] [--json] [--insurer NAME] JOB

Shows the quote of one shop job exactly as a pass would build it from the
database now: every item with the shop row it came from (line_id, line_no,
code), its work type, quantity, price and total; the rates; the
quote-level fields; the totals per work type; the canonical hash a pass
compares with what the insurer last acknowledged; and the lines that hold
the job back, each with its reason and fix (an unmapped work type, an
amount out of bounds, a missing price): while one does, a pass pushes
nothing for the job. It reads the shop's database (the mapping's queries,
read-only) and quotesync's own state when it exists; it calls nothing
remote and writes nothing. It needs the database password, not the token.

JOB is the shop's job number, as find_job returns it.

The quote is built as the pass of the insurer whose request holds the job
builds it: quote_fields with :insurer its name, the lines with its work
types. With several insurers (remotes:) the output names it, and a job
no request holds yet needs --insurer NAME to say whose quote to build.

  --json            the exact body a Draft push of the job would send
                    (what the insurer would receive), nothing else
  --insurer NAME    build the quote as insurer NAME's pass would, for a
                    job no request holds (a held job is its holder's)

Exit status: 0 shown (1 with --json when a pass would push nothing: a
line holds the job, it has no lines, or estimate_state returns no row
for it); 1 the job is not found, the database could not be read, or
the insurer is not known (several configured, none named, no request
holding the job; or --insurer names one that is not configured, or
another than the holder's); 2 bad flags or configuration.

Example:
  quotesync preview --config /etc/quotesync/config.yaml RO-50001
  quotesync preview --insurer aa --json RO-50007

Flags:
`

func runPreview(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := verbFlags("preview", previewHelp)
	cfg := registerConfig(fs)
	asJSON := fs.Bool("json", false, "print the exact body a Draft push would send")
	insurer := fs.String("insurer", "", "build the quote as the insurer `NAME`'s pass would (a job no request holds)")
	job, code, ok := parseOneArg(fs, "a job number", args, stdout, stderr)
	if !ok {
		return code
	}
	if badListFlags(stderr, "preview", 0, *insurer) {
		return exitUsage
	}
	cf := cfg.common()
	set, err := cf.loadSettings(config.ShopSecrets)
	if err != nil {
		return fail(stderr, exitUsage, "preview", err)
	}
	db, err := shopdb.Open(ctx, set.Daemon.Shop)
	if err != nil {
		return fail(stderr, exitFailure, "preview", err)
	}
	defer db.Close()
	var pv qsync.Preview
	st := store.New(db)
	view, err := qsync.JobShop(ctx, db, st, set.Daemon, job, *insurer)
	if errors.Is(err, qsync.ErrWhichInsurer) {
		fmt.Fprintf(stderr, "quotesync preview: %s: say whose with --insurer NAME (e.g. 'quotesync preview --insurer %s %s')\n",
			termtext.Lines(err.Error()), set.Daemon.Insurers[0].Name, termtext.Safe(job))
		return exitFailure
	}
	if err == nil {
		pv, err = qsync.PreviewJob(ctx, view, st, set.Daemon.Sync, job)
	}
	switch {
	case errors.Is(err, qsync.ErrNoSuchJob):
		return failf(stderr, exitFailure, "quotesync preview: %s", termtext.Lines(err.Error()))
	case err != nil:
		return fail(stderr, exitFailure, "preview", err)
	}
	if *asJSON {
		if !pv.Pushable() {
			return failf(stderr, exitFailure, "quotesync preview: a pass would push nothing for job %s: %s", termtext.Safe(job), termtext.Lines(heldWhy(pv)))
		}
		body, err := remote.QuoteBody(pv.Quote)
		if err != nil {
			return fail(stderr, exitFailure, "preview", err)
		}
		_, _ = stdout.Write(append(termtext.JSON(body), '\n'))
		return exitOK
	}
	// Named as status names insurers: when several are configured, or
	// the job's is not the one configured.
	shown := ""
	if len(set.Daemon.Insurers) > 1 || view.InsurerName() != set.Daemon.Insurers[0].Name {
		shown = view.InsurerName()
	}
	printPreview(stdout, pv, shown)
	return exitOK
}

// heldWhy says in one line why a pass would push nothing.
func heldWhy(pv qsync.Preview) string {
	switch {
	case len(pv.Held) > 0:
		return pv.Held[0].Error()
	case pv.FieldsErr != nil:
		return pv.FieldsErr.Error()
	case pv.StateErr != nil:
		return pv.StateErr.Error()
	case pv.NoState:
		return "shop.queries.estimate_state returns no row for the job, and a pass pushes no job without one: make it return the job's row"
	}
	return "the job has no lines yet (a job gets its first Draft when its first line appears)"
}

// printPreview writes the items, what holds the job, the totals, the hash
// and what a pass would do; insurer, when not "", is whose pass builds it.
func printPreview(w io.Writer, pv qsync.Preview, insurer string) {
	state := "not final"
	switch {
	case pv.NoState:
		state = "estimate_state returns no row for it"
	case pv.StateErr != nil:
		state = "estimate_state: " + pv.StateErr.Error()
	case pv.State.Final:
		state = "final"
	}
	held := ""
	if len(pv.Held) > 0 {
		held = ", " + qsync.Plural(len(pv.Held), "line") + " holding it back"
	}
	of := ""
	if insurer != "" {
		of = " (insurer " + termtext.Safe(insurer) + ")"
	}
	fmt.Fprintf(w, "job %s%s: %s%s; estimate %s\n\n", termtext.Safe(pv.Job), of, qsync.Plural(len(pv.Quote.Items), "item"), held, termtext.Lines(state))
	if len(pv.Quote.Items) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ORDER\tLINE_ID\tCODE\tWORK TYPE\tDESCRIPTION\tPART\tQTY\tPRICE\tTOTAL")
		for i, it := range pv.Quote.Items {
			l := pv.Lines[i]
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", it.Order, termtext.Safe(it.ID), termtext.Safe(l.Code),
				termtext.Safe(it.Type), truncate(termtext.Safe(it.Description), 40), dash(termtext.Safe(it.PartNumber)),
				it.Quantity.String(), it.Price.String(), it.Total.StringFixed(2))
		}
		_ = tw.Flush()
		fmt.Fprintln(w)
	}
	if len(pv.Held) > 0 {
		fmt.Fprintf(w, "left out, and holding the job (a pass pushes nothing for it until they are fixed):\n")
		for _, e := range pv.Held {
			fmt.Fprintf(w, "  line %s (line_id %s), column %s: %s\n", termtext.Safe(e.Line), termtext.Safe(e.LineID), e.Column, termtext.Lines(e.Reason))
		}
		fmt.Fprintln(w)
	}
	if pv.FieldsErr != nil {
		fmt.Fprintf(w, "quote_fields: %s\n\n", termtext.Lines(pv.FieldsErr.Error()))
	}
	if len(pv.Quote.Rates) > 0 {
		var rates []string
		for _, r := range pv.Quote.Rates {
			rates = append(rates, termtext.Safe(r.Type)+" "+r.Rate.String())
		}
		fmt.Fprintf(w, "rates:        %s\n", strings.Join(rates, ", "))
	}
	for _, k := range slices.Sorted(maps.Keys(pv.Quote.Extra)) {
		fmt.Fprintf(w, "field %s: %s\n", termtext.Safe(k), termtext.Safe(string(pv.Quote.Extra[k])))
	}
	var byType []string
	for _, t := range slices.Sorted(maps.Keys(pv.ByType)) {
		byType = append(byType, termtext.Safe(t)+" "+pv.ByType[t].StringFixed(2))
	}
	fmt.Fprintf(w, "total:        %s", pv.Total.StringFixed(2))
	if len(byType) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(byType, ", "))
	}
	fmt.Fprintf(w, "\nquote:        type %s, referenceId %s\n", termtext.Safe(pv.Quote.Type), dash(termtext.Safe(pv.Quote.ReferenceID)))
	fmt.Fprintf(w, "hash:         %s\n", pv.Hash)
	fmt.Fprintf(w, "a pass would: %s\n", previewVerdict(pv))
}

// previewVerdict says what a pass would do with the job.
func previewVerdict(pv qsync.Preview) string {
	tracked := ""
	if pv.Request != "" {
		tracked = fmt.Sprintf(" (request %s, %s)", termtext.Safe(pv.Request), pv.Phase)
	}
	switch pv.Phase {
	case qsync.PhaseSubmitted:
		return "nothing" + tracked + ": the quote was submitted; a later change is flagged as needing a supplement, never pushed"
	case qsync.PhaseRejected, qsync.PhaseGone, qsync.PhaseTakenElsewhere:
		return "nothing" + tracked + ": the request is closed ('quotesync history " + termtext.Safe(pv.Request) + "' says why)"
	}
	switch {
	case !pv.Pushable():
		return "push nothing" + tracked + ": " + termtext.Lines(heldWhy(pv))
	case pv.Request == "":
		return "push this quote as a Draft once a request is accepted onto the job (no request holds it yet)"
	case pv.Pushed && pv.State.Final:
		return "submit" + tracked + ": the estimate is final and the insurer holds this content"
	case pv.Pushed:
		return "nothing" + tracked + ": the insurer holds this content"
	case pv.Phase != qsync.PhaseAccepted && pv.Phase != qsync.PhaseDrafted:
		return "push this quote as a Draft once the insurer confirms the accept" + tracked
	case pv.State.Final:
		return "push this quote as a Draft, then submit it" + tracked
	}
	return "push this quote as a Draft" + tracked
}
