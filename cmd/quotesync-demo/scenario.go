package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	qsync "github.com/quotesync/quotesync/sync"
)

// New claims of the demo: the sample shop has no job for them, so
// create_job makes one when quotesync accepts their requests.
const (
	claimNewA = "CLM-2041"
	claimNewB = "CLM-2042"
)

// collidingID is the request id both insurers' services use, each for a
// claim of its own: quotesync tracks two requests, each with its own job.
const collidingID = "7301"

// demoRequest is one pending request an insurer sends.
type demoRequest struct {
	insurer   string // whose service sends it
	id        string // the insurer's request id, nothing to do with the claim
	claim     string
	expiresIn time.Duration
	vehicle   vehicle
	impact    string // the accident's point of impact, then its description
	accident  string
	shop      string // what the shop has for the claim at the start
}

type vehicle struct {
	Registration string `json:"registration"`
	Make         string `json:"make"`
	Model        string `json:"model"`
	Year         int    `json:"year"`
}

// demoRequests are the insurers' pending requests at the start, three
// each: four for jobs of the sample shop, two for claims the shop has
// never seen. Each insurer numbers its requests its own way, so both
// send a request 7301.
var demoRequests = []demoRequest{
	{insurerAcme, collidingID, sampleshop.ClaimDraft, 50 * time.Hour, vehicle{"KLM123", "Toyota", "Corolla", 2019}, "Front",
		"Front collision at low speed at a roundabout", "job " + sampleshop.JobDraft + ": draft estimate, 4 lines"},
	{insurerAcme, "7302", sampleshop.ClaimFinal, 40 * time.Hour, vehicle{"PQR456", "Volkswagen", "Golf", 2021}, "Left side",
		"Door struck by a neighbouring car in a car park", "job " + sampleshop.JobFinal + ": estimate already FINAL, 4 lines"},
	{insurerAcme, "7303", claimNewA, 80 * time.Hour, vehicle{"TSL301", "Tesla", "Model 3", 2022}, "Rear",
		"Rear-ended at traffic lights", "no job: create_job makes one"},
	{insurerHarbour, "7299", sampleshop.ClaimNoLines, 60 * time.Hour, vehicle{"XYZ789", "Mazda", "CX-5", 2018}, "Right side",
		"Side swipe while changing lanes", "job " + sampleshop.JobNoLines + ": estimate with no lines yet"},
	{insurerHarbour, "7300", sampleshop.ClaimBadLine, 70 * time.Hour, vehicle{"MNO654", "Honda", "Jazz", 2015}, "Rear",
		"Reversed into a bollard in a car park", "job " + sampleshop.JobBadLine + ": a part without a price (NULL)"},
	{insurerHarbour, collidingID, claimNewB, 90 * time.Hour, vehicle{"FCS552", "Ford", "Focus", 2017}, "Front",
		"Front collision with a parked car", "no job: create_job makes one"},
}

// seedRequests adds each insurer's requests to its emulator.
func seedRequests(s *stack, now time.Time) {
	for _, r := range demoRequests {
		v, _ := json.Marshal(r.vehicle)
		a, _ := json.Marshal(map[string]string{"description": r.accident, "pointOfImpact": r.impact})
		s.insurer(r.insurer).emu.AddRequests(emulator.SeedRequest{ID: r.id, ClaimNumber: r.claim,
			Expiry: now.Add(r.expiresIn), Vehicle: v, Accident: a,
			Instructions: json.RawMessage(`{"assessmentType":"Desktop","notes":"Provide an itemised estimate."}`)})
	}
}

// insurerOfClaim is the insurer whose request a claim of the demo is.
func insurerOfClaim(claim string) string {
	return demoRequests[slices.IndexFunc(demoRequests, func(r demoRequest) bool { return r.claim == claim })].insurer
}

func dec(s string) decimal.Decimal       { return decimal.RequireFromString(s) }
func price(s string) decimal.NullDecimal { return decimal.NewNullDecimal(dec(s)) }

// step is one move of the shop's script: once the remotes reflect what the
// shop did so far for the claims it waits for, it makes its changes.
type step struct {
	what    string   // for the "did not converge" report
	wait    []string // claims whose requests must be accepted, their jobs in the shop
	inSync  bool     // and their remote quotes must hold exactly the shop's lines
	changes []change
}

// change is one edit of the shop to a claim's job: lines added, the line
// lineNo edited (edit says how, and returns what the timeline says) or
// deleted (for why), or the estimate marked final.
type change struct {
	claim  string
	add    []sampleshop.Line
	lineNo int
	edit   func(*sampleshop.Line) string
	why    string
	final  bool
}

// shopScript is the shop's script: each step waits for what the previous
// ones did, so that every pass has one thing to show.
var shopScript = []step{
	{what: "write lines on the jobs that had none",
		wait: []string{sampleshop.ClaimNoLines, claimNewA, claimNewB}, changes: []change{
			{claim: sampleshop.ClaimNoLines, add: []sampleshop.Line{
				{Code: "RPR", Description: "Repair RH front guard", Qty: dec("2.0"), UnitPrice: price("95.50")},
				{Code: "PNT", Description: "Refinish RH front guard and blend door", Qty: dec("3.0"), UnitPrice: price("88.00")},
				{Code: "SUNDRY", Description: "Paint materials", Qty: dec("1"), UnitPrice: price("65.00"), LineTotal: price("65.00")},
			}},
			{claim: claimNewA, add: []sampleshop.Line{
				{Code: "R&R", Description: "Rear bumper cover - remove and replace", Qty: dec("1.2"), UnitPrice: price("95.50")},
				{Code: "PART", Description: "Rear bumper cover", PartNo: "1084168-00-E", Qty: dec("1"), UnitPrice: price("689.9500")},
			}},
			{claim: claimNewB, add: []sampleshop.Line{
				{Code: "MECH", Description: "Replace radiator support panel", Qty: dec("2.5"), UnitPrice: price("120.00")},
				{Code: "PART", Description: "Radiator", PartNo: "CV6Z-8005-A", Qty: dec("1"), UnitPrice: price("412.8000")},
				{Code: "PART", Description: "Coolant, 5 L", PartNo: "VC-7-B", Qty: dec("1"), UnitPrice: price("38.5000")},
				{Code: "SUNDRY", Description: "Coolant disposal levy", Qty: dec("1"), UnitPrice: price("12.50")},
			}},
		}},
	{what: "edit a line of " + sampleshop.JobDraft + " and price the part of " + sampleshop.JobBadLine,
		wait: []string{sampleshop.ClaimDraft}, inSync: true, changes: []change{
			{claim: sampleshop.ClaimDraft, lineNo: 1, edit: func(l *sampleshop.Line) string {
				l.Qty = dec("2.000")
				return "labour hours revised: 1.5 → 2.0"
			}},
			{claim: sampleshop.ClaimBadLine, lineNo: 2, edit: func(l *sampleshop.Line) string {
				l.Description, l.UnitPrice = "Rear bumper cover", price("389.0000")
				return "priced the bumper cover at 389.00 (the price was NULL)"
			}},
		}},
	finalStep(sampleshop.ClaimDraft),
	finalStep(sampleshop.ClaimNoLines),
	finalStep(sampleshop.ClaimBadLine),
	{what: "drop a line of the " + claimNewB + " job and mark the " + claimNewA + " estimate final",
		wait: []string{claimNewA, claimNewB}, inSync: true, changes: []change{
			{claim: claimNewB, lineNo: 3, why: "the customer brings the coolant"},
			{claim: claimNewA, final: true},
		}},
	finalStep(claimNewB),
}

// finalStep marks a claim's estimate final once the remote holds its
// lines.
func finalStep(claim string) step {
	return step{what: "mark the " + claim + " estimate final", wait: []string{claim}, inSync: true,
		changes: []change{{claim: claim, final: true}}}
}

// script plays the shop's part: after each round of passes it runs its
// next step, if that step is ready. The shop works through its own
// connections (sampleshop.Shop), as the shop's application would; it never
// touches quotesync's tables.
type script struct {
	s    *stack
	tl   *timeline
	next int
}

func (sc *script) finished() bool { return sc.next >= len(shopScript) }

// waiting says which step the script waits to run, "" when finished.
func (sc *script) waiting() string {
	if sc.finished() {
		return ""
	}
	return fmt.Sprintf("step %d of %d: %s", sc.next+1, len(shopScript), shopScript[sc.next].what)
}

// advance runs the next step if it is ready.
func (sc *script) advance(ctx context.Context) error {
	if sc.finished() {
		return nil
	}
	st := shopScript[sc.next]
	for _, claim := range st.wait {
		job, err := sc.s.shop.FindJob(ctx, claim)
		if err != nil || job == "" {
			return err
		}
		j, accepted := sc.s.insurer(insurerOfClaim(claim)).emu.State().Job(job)
		q, quoted := j.Quote(remote.QuoteTypeEstimate)
		if !accepted || st.inSync && !quoted {
			return nil
		}
		if st.inSync {
			if diffs, err := compareLines(ctx, sc.s.shop, job, q.Body); err != nil || len(diffs) > 0 {
				return err
			}
		}
	}
	for _, c := range st.changes {
		if err := sc.apply(ctx, c); err != nil {
			return fmt.Errorf("run the shop's step %q: %w", st.what, err)
		}
	}
	sc.next++
	return nil
}

// apply makes one change on the claim's job and puts it on the timeline.
func (sc *script) apply(ctx context.Context, c change) error {
	shop := sc.s.shop
	job, err := shop.FindJob(ctx, c.claim)
	if err != nil || job == "" {
		return cmp.Or(err, fmt.Errorf("find the job of claim %s: %w", c.claim, sampleshop.ErrNoSuchJob))
	}
	var what string
	var lines []sampleshop.Line
	switch {
	case c.add != nil:
		_, err = shop.AddLines(ctx, job, c.add)
		what = "added " + qsync.Plural(len(c.add), "line") + " to the estimate"
	case c.final:
		err, what = shop.SetFinal(ctx, job, true), "marked the estimate FINAL"
	default:
		lines, err = shop.Lines(ctx, job)
		i := slices.IndexFunc(lines, func(l sampleshop.Line) bool { return l.LineNo == c.lineNo })
		if err != nil || i < 0 {
			return cmp.Or(err, fmt.Errorf("find line %d of %s: %w", c.lineNo, job, sampleshop.ErrNoSuchJob))
		}
		if l := lines[i]; c.edit != nil {
			what = fmt.Sprintf("edited line %d: %s", c.lineNo, c.edit(&l))
			err = shop.EditLine(ctx, l)
		} else {
			what = fmt.Sprintf("deleted line %d (%s): %s", c.lineNo, l.Description, c.why)
			err = shop.DeleteLine(ctx, l.LineID)
		}
	}
	if err != nil {
		return err
	}
	sc.tl.line(time.Now(), actorShop, ref{Insurer: insurerOfClaim(c.claim), Claim: c.claim, Job: job}, what)
	return nil
}

// compareLines lists the differences between the shop's live lines of a
// job and the items of a quote body; none when they match exactly.
func compareLines(ctx context.Context, shop *sampleshop.Shop, job string, body []byte) ([]string, error) {
	lines, err := shop.Lines(ctx, job)
	if err != nil {
		return nil, err
	}
	want, err := shopItems(lines, sampleshop.WorkTypes())
	if err != nil {
		return []string{err.Error()}, nil
	}
	got, err := quoteItems(body)
	if err != nil {
		return []string{err.Error()}, nil
	}
	return diffItems(want, got), nil
}
