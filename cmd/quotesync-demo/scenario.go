package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

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
	vehicle   string // JSON object
	accident  string // JSON object
	shop      string // what the shop has for the claim at the start
}

// demoRequests are the insurers' pending requests at the start, three
// each: four for jobs of the sample shop, two for claims the shop has
// never seen. Each insurer numbers its requests its own way, so both
// send a request 7301.
func demoRequests() []demoRequest {
	return []demoRequest{
		{insurerAcme, collidingID, sampleshop.ClaimDraft, 50 * time.Hour,
			`{"registration":"KLM123","make":"Toyota","model":"Corolla","year":2019}`,
			`{"description":"Front collision at low speed at a roundabout","pointOfImpact":"Front"}`,
			"job " + sampleshop.JobDraft + ": draft estimate, 4 lines"},
		{insurerAcme, "7302", sampleshop.ClaimFinal, 40 * time.Hour,
			`{"registration":"PQR456","make":"Volkswagen","model":"Golf","year":2021}`,
			`{"description":"Door struck by a neighbouring car in a car park","pointOfImpact":"Left side"}`,
			"job " + sampleshop.JobFinal + ": estimate already FINAL, 4 lines"},
		{insurerAcme, "7303", claimNewA, 80 * time.Hour,
			`{"registration":"TSL301","make":"Tesla","model":"Model 3","year":2022}`,
			`{"description":"Rear-ended at traffic lights","pointOfImpact":"Rear"}`,
			"no job: create_job makes one"},
		{insurerHarbour, "7299", sampleshop.ClaimNoLines, 60 * time.Hour,
			`{"registration":"XYZ789","make":"Mazda","model":"CX-5","year":2018}`,
			`{"description":"Side swipe while changing lanes","pointOfImpact":"Right side"}`,
			"job " + sampleshop.JobNoLines + ": estimate with no lines yet"},
		{insurerHarbour, "7300", sampleshop.ClaimBadLine, 70 * time.Hour,
			`{"registration":"MNO654","make":"Honda","model":"Jazz","year":2015}`,
			`{"description":"Reversed into a bollard in a car park","pointOfImpact":"Rear"}`,
			"job " + sampleshop.JobBadLine + ": a part without a price (NULL)"},
		{insurerHarbour, collidingID, claimNewB, 90 * time.Hour,
			`{"registration":"FCS552","make":"Ford","model":"Focus","year":2017}`,
			`{"description":"Front collision with a parked car","pointOfImpact":"Front"}`,
			"no job: create_job makes one"},
	}
}

// sent names one request an insurer's service sent: the pair that keys
// it in quotesync's tables.
type sent struct {
	Insurer, ID string
}

// seedRequests adds each insurer's requests to its emulator and returns
// them in the order of demoRequests.
func seedRequests(s *stack, now time.Time) []sent {
	var out []sent
	for _, r := range demoRequests() {
		ids := s.insurer(r.insurer).emu.AddRequests(emulator.SeedRequest{
			ID:           r.id,
			ClaimNumber:  r.claim,
			Expiry:       now.Add(r.expiresIn),
			Vehicle:      json.RawMessage(r.vehicle),
			Accident:     json.RawMessage(r.accident),
			Instructions: json.RawMessage(`{"assessmentType":"Desktop","notes":"Provide an itemised estimate."}`),
		})
		out = append(out, sent{Insurer: r.insurer, ID: ids[0]})
	}
	return out
}

// insurerOfClaim is the insurer whose request a claim of the demo is.
func insurerOfClaim(claim string) string {
	for _, r := range demoRequests() {
		if r.claim == claim {
			return r.insurer
		}
	}
	return ""
}

func dec(s string) decimal.Decimal       { return decimal.RequireFromString(s) }
func price(s string) decimal.NullDecimal { return decimal.NewNullDecimal(dec(s)) }

// newLines are the lines the shop writes on the jobs that have none.
func newLines() map[string][]sampleshop.Line {
	return map[string][]sampleshop.Line{
		sampleshop.ClaimNoLines: {
			{Code: "RPR", Description: "Repair RH front guard", Qty: dec("2.0"), UnitPrice: price("95.50")},
			{Code: "PNT", Description: "Refinish RH front guard and blend door", Qty: dec("3.0"), UnitPrice: price("88.00")},
			{Code: "SUNDRY", Description: "Paint materials", Qty: dec("1"), UnitPrice: price("65.00"), LineTotal: price("65.00")},
		},
		claimNewA: {
			{Code: "R&R", Description: "Rear bumper cover - remove and replace", Qty: dec("1.2"), UnitPrice: price("95.50")},
			{Code: "PART", Description: "Rear bumper cover", PartNo: "1084168-00-E", Qty: dec("1"), UnitPrice: price("689.9500")},
		},
		claimNewB: {
			{Code: "MECH", Description: "Replace radiator support panel", Qty: dec("2.5"), UnitPrice: price("120.00")},
			{Code: "PART", Description: "Radiator", PartNo: "CV6Z-8005-A", Qty: dec("1"), UnitPrice: price("412.8000")},
			{Code: "PART", Description: "Coolant, 5 L", PartNo: "VC-7-B", Qty: dec("1"), UnitPrice: price("38.5000")},
			{Code: "SUNDRY", Description: "Coolant disposal levy", Qty: dec("1"), UnitPrice: price("12.50")},
		},
	}
}

// steps is the shop's script. Each step waits until the remote reflects
// what the previous ones did, so that every pass has one thing to show.
func (sc *script) steps() []step {
	return []step{
		{
			what:  "write lines on the jobs that had none",
			ready: sc.accepted(sampleshop.ClaimNoLines, claimNewA, claimNewB),
			do: func(ctx context.Context) error {
				for _, claim := range []string{sampleshop.ClaimNoLines, claimNewA, claimNewB} {
					if err := sc.addLines(ctx, claim, newLines()[claim]); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			what:  "edit a line of " + sampleshop.JobDraft + " and price the part of " + sampleshop.JobBadLine,
			ready: sc.inSync(sampleshop.ClaimDraft),
			do: func(ctx context.Context) error {
				if err := sc.editLine(ctx, sampleshop.ClaimDraft, 1, func(l *sampleshop.Line) string {
					l.Qty = dec("2.000")
					return "labour hours revised: 1.5 → 2.0"
				}); err != nil {
					return err
				}
				return sc.editLine(ctx, sampleshop.ClaimBadLine, 2, func(l *sampleshop.Line) string {
					l.Description, l.UnitPrice = "Rear bumper cover", price("389.0000")
					return "priced the bumper cover at 389.00 (the price was NULL)"
				})
			},
		},
		sc.finalStep(sampleshop.ClaimDraft),
		sc.finalStep(sampleshop.ClaimNoLines),
		sc.finalStep(sampleshop.ClaimBadLine),
		{
			what:  "drop a line of the " + claimNewB + " job and mark the " + claimNewA + " estimate final",
			ready: sc.inSync(claimNewA, claimNewB),
			do: func(ctx context.Context) error {
				if err := sc.deleteLine(ctx, claimNewB, 3, "the customer brings the coolant"); err != nil {
					return err
				}
				return sc.setFinal(ctx, claimNewA)
			},
		},
		sc.finalStep(claimNewB),
	}
}

// finalStep marks a claim's estimate final once the remote holds its
// lines.
func (sc *script) finalStep(claim string) step {
	return step{
		what:  "mark the " + claim + " estimate final",
		ready: sc.inSync(claim),
		do:    func(ctx context.Context) error { return sc.setFinal(ctx, claim) },
	}
}

// onJob runs do on the claim's job and puts what it did, as do says it,
// on the timeline.
func (sc *script) onJob(ctx context.Context, claim string, do func(job string) (string, error)) error {
	job, err := sc.job(ctx, claim)
	if err != nil {
		return err
	}
	what, err := do(job)
	if err != nil {
		return err
	}
	sc.tl.shop(insurerOfClaim(claim), claim, job, "%s", what)
	return nil
}

// addLines appends lines to the claim's job.
func (sc *script) addLines(ctx context.Context, claim string, lines []sampleshop.Line) error {
	return sc.onJob(ctx, claim, func(job string) (string, error) {
		if _, err := sc.shop.AddLines(ctx, job, lines); err != nil {
			return "", err
		}
		return "added " + qsync.Plural(len(lines), "line") + " to the estimate", nil
	})
}

// editLine changes the line numbered lineNo of the claim's job; change
// returns what the timeline says about it.
func (sc *script) editLine(ctx context.Context, claim string, lineNo int, change func(*sampleshop.Line) string) error {
	return sc.onJob(ctx, claim, func(job string) (string, error) {
		l, err := sc.line(ctx, job, lineNo)
		if err != nil {
			return "", err
		}
		what := change(&l)
		return fmt.Sprintf("edited line %d: %s", lineNo, what), sc.shop.EditLine(ctx, l)
	})
}

// deleteLine soft-deletes the line numbered lineNo of the claim's job.
func (sc *script) deleteLine(ctx context.Context, claim string, lineNo int, why string) error {
	return sc.onJob(ctx, claim, func(job string) (string, error) {
		l, err := sc.line(ctx, job, lineNo)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("deleted line %d (%s): %s", lineNo, l.Description, why), sc.shop.DeleteLine(ctx, l.LineID)
	})
}

// setFinal marks the claim's estimate final.
func (sc *script) setFinal(ctx context.Context, claim string) error {
	return sc.onJob(ctx, claim, func(job string) (string, error) {
		return "marked the estimate FINAL", sc.shop.SetFinal(ctx, job, true)
	})
}

// line returns the live line numbered lineNo of job.
func (sc *script) line(ctx context.Context, job string, lineNo int) (sampleshop.Line, error) {
	lines, err := sc.shop.Lines(ctx, job)
	if err != nil {
		return sampleshop.Line{}, err
	}
	for _, l := range lines {
		if l.LineNo == lineNo {
			return l, nil
		}
	}
	return sampleshop.Line{}, fmt.Errorf("find line %d of %s: %w", lineNo, job, sampleshop.ErrNoSuchJob)
}
