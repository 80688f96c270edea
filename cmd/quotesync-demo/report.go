package main

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// outcome is where one request ended, on both sides, and what is wrong
// with it (nothing, when it converged).
type outcome struct {
	demoRequest
	Job       string
	Phase     string              // quotesync's state; "" when not tracked
	Quote     emulator.QuoteState // the remote quote; zero when none
	Items     int                 // items of the remote quote
	FrontDesk string              // the job's insurer_status in the shop, written back by quotesync
	Problems  []string
}

// outcomes reads every demo request's end state from its insurer's
// emulator, from quotesync's state and from the shop, and checks it:
// accepted with the shop's job number, Submitted exactly once, holding
// exactly the shop's final lines, and recorded as submitted by quotesync
// for its insurer; and no job is held by two requests.
func outcomes(ctx context.Context, s *stack) ([]outcome, error) {
	var out []outcome
	byJob := make(map[string]demoRequest)
	for _, r := range demoRequests {
		o, err := checkRequest(ctx, s, r)
		if err != nil {
			return nil, err
		}
		if other, ok := byJob[o.Job]; ok && o.Job != "" {
			o.Problems = append(o.Problems, fmt.Sprintf("job %s is request %s of %s's too", o.Job, other.id, other.insurer))
		}
		byJob[o.Job] = r
		out = append(out, o)
	}
	return out, nil
}

func checkRequest(ctx context.Context, s *stack, r demoRequest) (outcome, error) {
	o := outcome{demoRequest: r}
	problem := func(format string, args ...any) { o.Problems = append(o.Problems, fmt.Sprintf(format, args...)) }
	rs, q, quoted := remoteQuote(s, r)
	if rs.ID == "" {
		problem("the remote of %s does not know the request", r.insurer)
		return o, nil
	}
	// The shop's side, read as its application would: the claim's job, its
	// insurer_status (which the example's shop.write_back fills) and
	// whether its estimate is FINAL.
	var job, front, estimate sql.NullString
	err := s.shopPool.QueryRowContext(ctx, `SELECT j.job_no, j.insurer_status, e.status FROM jobs j
LEFT JOIN estimates e ON e.job_id = j.job_id WHERE j.claim_number = ? ORDER BY j.job_id LIMIT 1`, r.claim).
		Scan(&job, &front, &estimate)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return o, fmt.Errorf("read the job of claim %s: %w", r.claim, err)
	}
	o.Job, o.FrontDesk = job.String, front.String
	row, err := s.daemon.Store.Insurer(r.insurer).Request(ctx, r.id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		problem("quotesync does not track it")
	case err != nil:
		return o, err
	default:
		o.Phase, o.Job = string(row.Phase), cmp.Or(o.Job, row.JobNumber)
		if row.Phase != qsync.PhaseSubmitted {
			problem("quotesync's phase is %s", row.Phase)
		}
		if row.LastError != "" {
			problem("quotesync's last error: %s", row.LastError)
		}
		if row.SupplementNeeded {
			problem("quotesync flagged a supplement")
		}
	}
	if job.String == "" {
		problem("the shop has no job for the claim")
		return o, nil
	}
	if rs.Status != emulator.RequestAccepted {
		problem("the request is %s on the remote", rs.Status)
		return o, nil
	}
	if rs.ReferenceID != job.String {
		problem("accepted with referenceId %s, but the shop's job is %s", rs.ReferenceID, job.String)
	}
	if !quoted {
		problem("the remote holds no %s quote", remote.QuoteTypeEstimate)
		return o, nil
	}
	o.Quote = q
	if items, err := quoteItems(q.Body); err == nil {
		o.Items = len(items)
	}
	if q.Status != emulator.StatusSubmitted {
		problem("the remote quote is %s, not %s", q.Status, emulator.StatusSubmitted)
	} else if q.SubmitCount != 1 {
		problem("the remote quote was submitted %d times", q.SubmitCount)
	}
	diffs, err := compareLines(ctx, s.shop, job.String, q.Body)
	if err != nil {
		return o, err
	}
	o.Problems = append(o.Problems, diffs...)
	// SUBMITTED is what the example's shop.write_back.submitted writes into
	// the sample shop's jobs.insurer_status.
	if o.FrontDesk != "SUBMITTED" {
		problem("the shop's job shows insurer status %q, not SUBMITTED (shop.write_back.submitted)", o.FrontDesk)
	}
	if estimate.String != "FINAL" && q.Status == emulator.StatusSubmitted {
		problem("submitted, but the shop's estimate is not FINAL")
	}
	return o, nil
}

// remoteDone is the cheap test run after every pass: has each insurer's
// remote Submitted a quote for every demo request it sent? The full check
// (outcomes) follows when it has.
func remoteDone(s *stack) bool {
	return !slices.ContainsFunc(demoRequests, func(r demoRequest) bool {
		rs, q, _ := remoteQuote(s, r)
		return rs.Status != emulator.RequestAccepted || q.Status != emulator.StatusSubmitted
	})
}

// remoteQuote is request r on its insurer's emulator (zero: unknown) and
// the estimate quote of the job it was accepted as (false: none).
func remoteQuote(s *stack, r demoRequest) (emulator.RequestState, emulator.QuoteState, bool) {
	st := s.insurer(r.insurer).emu.State()
	rs, _ := st.Request(r.id)
	j, _ := st.Job(rs.ReferenceID)
	q, ok := j.Quote(remote.QuoteTypeEstimate)
	return rs, q, ok
}

// printSummary prints the table of outcomes, then each insurer's
// totals: its requests Submitted, its passes and the calls its emulator
// received.
func printSummary(w io.Writer, tl *timeline, outs []outcome, apis []*insurerAPI, trips int64) {
	fmt.Fprintln(w, "\nsummary (read back from each insurer's emulator, quotesync's state tables and the shop; the last\ncolumn is the job's insurer_status column, which quotesync's shop.write_back fills)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  insurer\trequest\tclaim\tjob\tquotesync\tremote quote\titems\tdrafts pushed\tsubmitted\tshop's job shows")
	for _, o := range outs {
		q, submitted := o.Quote, "no"
		if q.SubmitCount > 0 {
			submitted = "yes, at " + tl.elapsed(q.SubmittedAt)
		}
		if q.SubmitCount > 1 {
			submitted += fmt.Sprintf(" (%d times!)", q.SubmitCount)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", o.insurer, o.id, o.claim, cmp.Or(o.Job, "-"), cmp.Or(o.Phase, "-"),
			cmp.Or(q.Status, "-"), o.Items, q.Writes-q.SubmitCount, submitted, cmp.Or(o.FrontDesk, "-"))
	}
	_ = tw.Flush()

	fmt.Fprintln(w, "\neach insurer (the calls as its emulator counted them)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, a := range apis {
		n, done := 0, 0
		for _, o := range outs {
			if o.insurer == a.name {
				n++
				done += min(o.Quote.SubmitCount, 1)
			}
		}
		calls := a.emu.Calls()
		if a.mode == emulator.ModeDocumented {
			calls["POST "+emulator.TokenPath] = a.emu.TokenCalls()
		}
		refused := "none refused"
		if r := a.refused.Load(); r > 0 {
			refused = fmt.Sprintf("%d refused (401)", r)
		}
		var list []string
		total := 0
		for _, route := range slices.Sorted(maps.Keys(calls)) {
			list = append(list, fmt.Sprintf("%s ×%d", route, calls[route]))
			total += calls[route]
		}
		fmt.Fprintf(tw, "  %s\t%d of %d requests Submitted, in %s\n", a.name, done, n, qsync.Plural(tl.passCount(a.name), "pass"))
		fmt.Fprintf(tw, "  \t%s, %s: %s\n", qsync.Plural(total, "remote call"), refused, strings.Join(list, ", "))
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "quotesync: %d statements sent to the shop database\n", trips)
}
