package sync_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	qsync "github.com/quotesync/quotesync/sync"
)

// The behaviours that depend on how the real service answers, on the
// engine with its real parts. The same situations run against the real
// binary, in both emulator modes, in cmd/quotesync.

// An accept that landed with its answer lost, then a repeated accept
// refused with 400 (not 409) while the request left the pending list: the
// request is taken as probably ours (accept_unknown, reported), and the
// first Draft push to our job confirms it. The 400 is injected into the
// spec mode, and is the documented mode's own answer.
func TestAcceptLostThenRefusedIsProbablyOurs(t *testing.T) {
	for _, documented := range []bool{false, true} {
		t.Run(map[bool]string{false: "Spec", true: "Documented"}[documented], func(t *testing.T) {
			testAcceptLostThenRefused(t, documented)
		})
	}
}

func testAcceptLostThenRefused(t *testing.T, documented bool) {
	r := newRig(t, rigOptions{remote: func(c *remote.Config) { c.MaxAttempts = 1 }, documented: documented})
	id := r.seed(sampleshop.ClaimDraft)[0]
	r.emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultLandThenDrop, Count: 1})
	if s := r.pass(); s.Retrying != 1 {
		t.Fatalf("pass 1: %+v, want the accept's answer lost", s)
	}
	if !documented {
		r.emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultStatus, Status: 400, Count: 1})
	}
	r.clock.advance(time.Hour)
	s := r.pass()
	unknown := r.events.of(qsync.EventAcceptUnknown)
	if s.AcceptUnknown != 1 || len(unknown) != 1 || unknown[0].Reason != qsync.ReasonAcceptLost {
		t.Fatalf("after the repeated accept was refused: summary %+v, events %+v; want the request taken as probably ours", s, unknown)
	}
	want := []string{"400", "probably ours", sampleshop.JobDraft}
	if documented {
		want = append(want, "request already accepted")
	}
	for _, want := range want {
		if !strings.Contains(unknown[0].Detail, want) {
			t.Errorf("the inference %q does not say %q", unknown[0].Detail, want)
		}
	}
	// The job has lines: the same pass pushed its Draft, which confirms it.
	if s.Drafted != 1 {
		t.Fatalf("the confirming push did not happen in the pass: %+v", s)
	}
	row := r.row(id)
	if row.Phase != qsync.PhaseDrafted || row.Reason != qsync.ReasonNone {
		t.Fatalf("after the confirming push: %s (%s)", row.Phase, row.Reason)
	}
	if evs := r.events.of(qsync.EventDrafted); len(evs) != 1 || !evs[0].Inferred {
		t.Errorf("drafted events %+v, want one confirming the accept", evs)
	}
	if got := acceptances(r.emu.State(), id); got != 1 {
		t.Errorf("accepted %d times on the remote, want 1", got)
	}
	r.assertRemoteHoldsShopLines(sampleshop.JobDraft)
}

// An accept that never landed, a repeated accept refused with 400 after
// the request left the list: probably ours, but the confirming push finds
// no job: taken elsewhere, and the job create_job made for it is released.
func TestAcceptUnknownNotOurs(t *testing.T) {
	r := newRig(t, rigOptions{remote: func(c *remote.Config) { c.MaxAttempts = 1 }})
	id := r.seed("CLM-ELSE-1")[0]
	fault := r.emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultStatus, Status: 503})
	r.pass()
	job := r.row(id).JobNumber
	if _, err := r.shop.AddLine(r.ctx, job, sampleshop.Line{Code: "RPR", Description: "Repair", Qty: d("1"), UnitPrice: price("60")}); err != nil {
		t.Fatal(err)
	}
	r.emu.RemoveFault(fault)
	takeElsewhere(t, r, id, "PORTAL-77")
	r.emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultStatus, Status: 400, Count: 1})
	r.clock.advance(time.Hour)
	r.pass()
	row := r.row(id)
	if row.Phase != qsync.PhaseTakenElsewhere || row.Reason != qsync.ReasonNotOurs || row.JobNumber != "" || row.ReleasedJob != job {
		t.Fatalf("after the confirming push found no job: %+v", row)
	}
	if !strings.Contains(row.LastError, "released") {
		t.Errorf("the report %q does not say the job was released", row.LastError)
	}
	// The sample's release_job cancels only a job without live lines; this
	// one has a line the shop wrote: the shop keeps it.
	if got := jobStatus(t, r, job); got != "OPEN" {
		t.Errorf("the job with a line is %s, want it kept OPEN", got)
	}
	if q, ok := r.remoteQuote(job); ok {
		t.Errorf("a quote exists on the remote under our job: %+v", q)
	}
	if got := r.seen(qsync.EventTakenElsewhere); got != 1 {
		t.Errorf("taken elsewhere reported %d times, want 1", got)
	}
}

// A 409 to our accept naming another party's referenceId (in the error
// body of the spec mode, in the documented mode's JSON answer): taken
// elsewhere, never drafted under our job, the job number released or
// reported.
func TestTakenElsewhereByReference(t *testing.T) {
	for _, release := range []bool{true, false} {
		name := map[bool]string{true: "Released/Spec", false: "Reported/Documented"}[release]
		t.Run(name, func(t *testing.T) {
			r := newRig(t, rigOptions{remote: func(c *remote.Config) { c.MaxAttempts = 1 }, shop: func(c *shopdb.Config) {
				if !release {
					c.Queries.ReleaseJob = nil
				}
			}, documented: !release})
			id := r.seed("CLM-ELSE-2")[0]
			fault := r.emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultStatus, Status: 503})
			r.pass()
			job := r.row(id).JobNumber
			r.emu.RemoveFault(fault)
			takeElsewhere(t, r, id, "PORTAL-77")
			r.clock.advance(time.Hour)
			s := r.pass()
			row := r.row(id)
			if row.Phase != qsync.PhaseTakenElsewhere || row.Reason != qsync.ReasonOtherReference || s.TakenElsewhere != 1 {
				t.Fatalf("after the 409 naming PORTAL-77: %s (%s), %+v", row.Phase, row.Reason, s)
			}
			if row.JobNumber != "" || row.ReleasedJob != job || !strings.Contains(row.LastError, "PORTAL-77") {
				t.Errorf("row %+v; want the job number given up and the other referenceId named", row)
			}
			want, status := "released", "CANCELLED"
			if !release {
				want, status = "unused", "OPEN"
			}
			if !strings.Contains(row.LastError, want) {
				t.Errorf("the report %q does not say the job is %s", row.LastError, want)
			}
			if got := jobStatus(t, r, job); got != status {
				t.Errorf("job %s is %s, want %s", job, got, status)
			}
			before := r.emu.Calls()
			r.pass()
			if w := r.writes(before); len(w) != 0 {
				t.Errorf("a request taken elsewhere was worked on: %v", w)
			}
		})
	}
}

// takeElsewhere has another party accept request id with its own
// referenceId, as another workshop system or the insurer's portal would.
func takeElsewhere(t *testing.T, r *rig, id, ref string) {
	t.Helper()
	if r.emu.Mode() == emulator.ModeDocumented {
		if err := r.emu.TakeElsewhere(id, ref); err != nil {
			t.Fatal(err)
		}
		return
	}
	other, err := remote.New(remote.Config{BaseURL: r.url, RateLimit: -1}, remote.StaticToken(testToken))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Accept(r.ctx, id, ref, time.Time{}); err != nil {
		t.Fatalf("the other party's accept: %v", err)
	}
}

// jobStatus is a shop job's status.
func jobStatus(t *testing.T, r *rig, job string) string {
	t.Helper()
	var s string
	if err := r.d.SQL.GetContext(r.ctx, &s, "SELECT status FROM jobs WHERE job_no = ?", job); err != nil {
		t.Fatal(err)
	}
	return s
}

// A job held for a reason the configuration can lift (an unmapped work
// type) is examined again after a restart (or a reload) with the fixed
// configuration, without waiting for its lines to change; until then it
// stays held, and its reason is the one of now.
func TestHeldReexaminedAfterRestart(t *testing.T) {
	r := newRig(t, rigOptions{})
	id := r.seed(sampleshop.ClaimNoLines)[0]
	r.pass()
	if _, err := r.shop.AddLine(r.ctx, sampleshop.JobNoLines, sampleshop.Line{Code: "GLASS", Description: "Windscreen", Qty: d("1"), UnitPrice: price("310")}); err != nil {
		t.Fatal(err)
	}
	r.pass()
	row := r.row(id)
	if row.Reason != qsync.ReasonUnmappedCode || !strings.Contains(row.LastError, "GLASS") {
		t.Fatalf("held row: %s (%s) %q; want held for the unmapped code GLASS", row.Phase, row.Reason, row.LastError)
	}
	// The same engine does not read it again while its lines do not change.
	before := r.emu.Calls()
	r.pass()
	if w := r.writes(before); len(w) != 0 {
		t.Fatalf("an unchanged held job was pushed: %v", w)
	}
	// The configuration is fixed and the daemon restarted: the next pass
	// reads the job again and pushes it.
	r.restart(func(s *qsync.Settings) {
		wt := sampleshop.WorkTypes()
		wt["GLASS"] = "Parts"
		s.Shop.WorkTypes = wt
	})
	if s := r.pass(); s.Drafted != 1 {
		t.Fatalf("first pass after the restart: %+v, want the held job pushed", s)
	}
	row = r.row(id)
	if row.Phase != qsync.PhaseDrafted || row.Reason != qsync.ReasonNone || row.LastError != "" {
		t.Errorf("after the restart: %s (%s) %q", row.Phase, row.Reason, row.LastError)
	}
	if evs := r.events.of(qsync.EventDrafted); len(evs) != 1 || !evs[0].Released {
		t.Errorf("the push did not say it released a held job: %+v", evs)
	}
	q, ok := r.remoteQuote(sampleshop.JobNoLines)
	if !ok || !strings.Contains(string(q.Body), `"type":"Parts"`) || !strings.Contains(string(q.Body), "Windscreen") {
		t.Errorf("the remote quote of %s: %s; want the windscreen as Parts", sampleshop.JobNoLines, q.Body)
	}
}

// With a hold the configuration cannot lift, a restart examines the job
// again and says the reason of now (not of then), without pushing.
func TestHeldReasonIsOfNow(t *testing.T) {
	r := newRig(t, rigOptions{})
	id := r.seed(sampleshop.ClaimNoLines)[0]
	r.pass()
	if _, err := r.shop.AddLine(r.ctx, sampleshop.JobNoLines, sampleshop.Line{Code: "GLASS", Description: "Windscreen", Qty: d("-1"), UnitPrice: price("310")}); err != nil {
		t.Fatal(err)
	}
	r.pass()
	if got := r.row(id).Reason; got != qsync.ReasonUnmappedCode {
		t.Fatalf("held for %s, want unmapped_code first", got)
	}
	r.restart(func(s *qsync.Settings) {
		wt := sampleshop.WorkTypes()
		wt["GLASS"] = "Parts"
		s.Shop.WorkTypes = wt
	})
	r.pass()
	row := r.row(id)
	if row.Reason != qsync.ReasonCredits || !strings.Contains(row.LastError, "allow_credits") {
		t.Errorf("after the restart: held for %s %q, want the credit line named now", row.Reason, row.LastError)
	}
}

// remote.status_path: auto finds the form the service serves, keeps it in
// quotesync's settings, reports it once, and a restart uses it without
// probing again.
func TestStatusFormFoundAndKept(t *testing.T) {
	r := newRig(t, rigOptions{remote: func(c *remote.Config) { c.StatusPath = remote.StatusPathAuto }})
	// The service does not serve the documented example's form.
	r.emu.AddFault(emulator.Fault{Route: "POST " + remote.StatusPathQuotesStatus, Action: emulator.FaultStatus, Status: 404})
	ids := r.seed(sampleshop.ClaimFinal)
	if s := r.pass(); s.Submitted != 1 {
		t.Fatalf("pass: %+v, want the final estimate submitted", s)
	}
	found := "PUT " + remote.StatusPathQuoteStatus
	if got, ok, err := r.st.Setting(r.ctx, qsync.StatusFormKey(qsync.DefaultInsurer)); err != nil || !ok || got != found {
		t.Fatalf("kept form = %q, %v, %v; want %q", got, ok, err, found)
	}
	if evs := r.events.of(qsync.EventStatusForm); len(evs) != 1 || evs[0].Route != found {
		t.Errorf("status form events %+v, want one naming %s", evs, found)
	}
	// A restart: the kept form is used at once.
	r.restart(nil)
	before := r.emu.Calls()
	more := r.seed(sampleshop.ClaimDraft)
	if err := r.shop.SetFinal(r.ctx, sampleshop.JobDraft, true); err != nil {
		t.Fatal(err)
	}
	if s := r.pass(); s.Submitted != 1 {
		t.Fatalf("pass after the restart: %+v", s)
	}
	if w := r.writes(before); w["POST "+remote.StatusPathQuotesStatus] != 0 || w[found] != 1 {
		t.Errorf("after the restart the status calls were %v, want only %s", w, found)
	}
	if got := r.seen(qsync.EventStatusForm); got != 1 {
		t.Errorf("status form reported %d times, want once", got)
	}
	for _, id := range append(ids, more...) {
		if got := r.row(id).Phase; got != qsync.PhaseSubmitted {
			t.Errorf("request %s: %s, want submitted", id, got)
		}
	}
}

// A status change answered 404 with a fixed form rejects the job with the
// fix: remote.status_path: auto.
func TestStatusPathNotServed(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.emu.AddFault(emulator.Fault{Route: "POST " + remote.StatusPathQuotesStatus, Action: emulator.FaultStatus, Status: 404})
	id := r.seed(sampleshop.ClaimFinal)[0]
	r.pass()
	row := r.row(id)
	if row.Phase != qsync.PhaseRejected || row.Reason != qsync.ReasonStatusPath || !strings.Contains(row.LastError, "remote.status_path: auto") {
		t.Errorf("after a 404 to the status change: %s (%s) %q", row.Phase, row.Reason, row.LastError)
	}
	if row.ResumePhase != qsync.PhaseDrafted {
		t.Errorf("resume phase %s, want drafted", row.ResumePhase)
	}
}
