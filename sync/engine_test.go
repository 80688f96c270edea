package sync_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func price(s string) decimal.NullDecimal { return decimal.NewNullDecimal(d(s)) }

// TestWorkflow walks the whole workflow against the real parts: accept with
// shop job numbers (found and created), draft, re-draft once per change,
// hold a job with bad data until it is fixed, submit once, flag a change
// after submission, and make no remote write on idle passes; with the
// sample mapping (shop_changed: idle passes read almost nothing) and
// without shop_changed (every pass reads the rows and estimate states).
func TestWorkflow(t *testing.T) {
	t.Run("ShopChanged", func(t *testing.T) { testWorkflow(t, true) })
	t.Run("NoShopChanged", func(t *testing.T) { testWorkflow(t, false) })
}

func testWorkflow(t *testing.T, shopChanged bool) {
	o := rigOptions{}
	if !shopChanged {
		o.shop = func(c *shopdb.Config) { c.Queries.ShopChanged = "" }
	}
	r := newRig(t, o)
	ids := r.seed(sampleshop.ClaimDraft, sampleshop.ClaimFinal, sampleshop.ClaimNoLines, sampleshop.ClaimBadLine, "CLM-2001")
	reqDraft, reqFinal, reqNoLines, reqBad, reqNew := ids[0], ids[1], ids[2], ids[3], ids[4]

	s := r.pass()
	if got, want := s.Accepted, 5; got != want {
		t.Fatalf("pass 1 accepted %d, want %d (summary %+v)", got, want, s)
	}
	newJob, err := r.shop.FindJob(r.ctx, "CLM-2001")
	if err != nil || newJob == "" {
		t.Fatalf("create_job made no job for CLM-2001: %q, %v", newJob, err)
	}
	wantJobs := map[string]string{reqDraft: sampleshop.JobDraft, reqFinal: sampleshop.JobFinal,
		reqNoLines: sampleshop.JobNoLines, reqBad: sampleshop.JobBadLine, reqNew: newJob}
	st := r.emu.State()
	for id, job := range wantJobs {
		rs, ok := st.Request(id)
		if !ok || rs.Status != emulator.RequestAccepted || rs.ReferenceID != job {
			t.Errorf("request %s on the remote: %+v, want accepted with referenceId %s", id, rs, job)
		}
		if row := r.row(id); row.JobNumber != job {
			t.Errorf("request %s state row job %q, want %q", id, row.JobNumber, job)
		}
	}
	// RO-50001: drafted. RO-50002 (final): drafted and submitted in the
	// same pass. RO-50003 and the new job: no lines, no draft. RO-50005:
	// held for its NULL price.
	wantPhases := map[string]store.Phase{reqDraft: qsync.PhaseDrafted, reqFinal: qsync.PhaseSubmitted,
		reqNoLines: qsync.PhaseAccepted, reqBad: qsync.PhaseAccepted, reqNew: qsync.PhaseAccepted}
	for id, want := range wantPhases {
		if got := r.row(id).Phase; got != want {
			t.Errorf("request %s phase %s, want %s", id, got, want)
		}
	}
	if s.Drafted != 2 || s.Submitted != 1 || s.Held != 1 {
		t.Errorf("pass 1 summary %+v, want 2 drafted, 1 submitted, 1 held", s)
	}
	r.assertRemoteHoldsShopLines(sampleshop.JobDraft)
	r.assertRemoteHoldsShopLines(sampleshop.JobFinal)
	if q, _ := r.remoteQuote(sampleshop.JobFinal); q.Status != "Submitted" || q.SubmitCount != 1 {
		t.Errorf("final job's quote %s submitted %d times, want Submitted once", q.Status, q.SubmitCount)
	}
	if _, ok := r.remoteQuote(sampleshop.JobBadLine); ok {
		t.Error("the job with a NULL price was pushed")
	}
	held := r.row(reqBad)
	if want := "job RO-50005 line 2"; !strings.Contains(held.LastError, want) || !strings.Contains(held.LastError, "price") {
		t.Errorf("held job's last error %q should name the job, the line and the column", held.LastError)
	}
	if got := r.seen(qsync.EventHeld); got != 1 {
		t.Errorf("held job logged %d times, want 1", got)
	}

	// An idle pass: no remote write, no log line at info or above but the
	// pass's own debug line, and no state change.
	before := r.emu.Calls()
	trips := shopdbtest.RoundTrips(r.db)
	s = r.pass()
	if w := r.writes(before); len(w) != 0 || s.Changed() {
		t.Fatalf("idle pass wrote %v (summary %+v)", w, s)
	}
	if got, most := shopdbtest.RoundTrips(r.db)-trips, map[bool]int64{true: 3, false: 2}[shopChanged]; got > most {
		t.Errorf("first idle pass cost %d database round trips, want at most %d (what changed if configured, state, estimate states)", got, most)
	}
	// The next idle pass: with shop_changed it finds nothing changed and
	// reads nothing else; without it reads the state and estimate states.
	trips = shopdbtest.RoundTrips(r.db)
	if s = r.pass(); s.Changed() {
		t.Fatalf("second idle pass changed state: %+v", s)
	}
	if got, want := shopdbtest.RoundTrips(r.db)-trips, map[bool]int64{true: 1, false: 2}[shopChanged]; got != want {
		t.Errorf("second idle pass cost %d database round trips, want %d", got, want)
	}
	if got := r.seen(qsync.EventHeld); got != 1 {
		t.Errorf("held job logged again on an idle pass (%d lines)", got)
	}

	// A line changes: exactly one re-push, then idle again.
	lines, err := r.shop.Lines(r.ctx, sampleshop.JobDraft)
	if err != nil {
		t.Fatal(err)
	}
	l := lines[0]
	l.Qty = d("2.5")
	if err := r.shop.EditLine(r.ctx, l); err != nil {
		t.Fatal(err)
	}
	before = r.emu.Calls()
	if s = r.pass(); s.Redrafted != 1 {
		t.Errorf("after an edit: %+v, want 1 re-draft", s)
	}
	if diff := cmp.Diff(map[string]int{emulator.RouteCreateQuote: 1}, r.writes(before)); diff != "" {
		t.Errorf("remote writes for one change (-want +got):\n%s", diff)
	}
	r.assertRemoteHoldsShopLines(sampleshop.JobDraft)
	before = r.emu.Calls()
	r.pass()
	if w := r.writes(before); len(w) != 0 {
		t.Errorf("pass after the re-push wrote %v", w)
	}

	// Lines appear on a job without any: its first draft.
	if _, err := r.shop.AddLine(r.ctx, sampleshop.JobNoLines, sampleshop.Line{Code: "RPR", Description: "Repair door skin",
		Qty: d("3"), UnitPrice: price("62.5000")}); err != nil {
		t.Fatal(err)
	}
	// The shop fills in the missing price: the held job is released.
	bad, err := r.shop.Lines(r.ctx, sampleshop.JobBadLine)
	if err != nil {
		t.Fatal(err)
	}
	for _, bl := range bad {
		if !bl.UnitPrice.Valid {
			bl.UnitPrice = price("18.9900")
			if err := r.shop.EditLine(r.ctx, bl); err != nil {
				t.Fatal(err)
			}
		}
	}
	if s = r.pass(); s.Drafted != 2 {
		t.Errorf("after new lines and a fix: %+v, want 2 first drafts", s)
	}
	r.assertRemoteHoldsShopLines(sampleshop.JobNoLines)
	r.assertRemoteHoldsShopLines(sampleshop.JobBadLine)
	if got := r.row(reqBad); got.LastError != "" || got.Phase != qsync.PhaseDrafted {
		t.Errorf("released job: phase %s, last error %q", got.Phase, got.LastError)
	}

	// The shop marks RO-50001 final: submitted once, with its final lines.
	if err := r.shop.SetFinal(r.ctx, sampleshop.JobDraft, true); err != nil {
		t.Fatal(err)
	}
	before = r.emu.Calls()
	if s = r.pass(); s.Submitted != 1 {
		t.Errorf("after marking final: %+v, want 1 submitted", s)
	}
	if w := r.writes(before); len(w) != 1 || w[emulator.RouteCreateQuote] != 0 {
		t.Errorf("a final estimate whose content the remote holds needs only the status change; writes %v", w)
	}
	q, _ := r.remoteQuote(sampleshop.JobDraft)
	if q.Status != "Submitted" || q.SubmitCount != 1 {
		t.Errorf("RO-50001 quote %s, submitted %d times", q.Status, q.SubmitCount)
	}
	r.assertRemoteHoldsShopLines(sampleshop.JobDraft)

	// A change after submission: flagged once, never pushed.
	lines, _ = r.shop.Lines(r.ctx, sampleshop.JobDraft)
	l = lines[1]
	l.Description += " (revised)"
	if err := r.shop.EditLine(r.ctx, l); err != nil {
		t.Fatal(err)
	}
	before = r.emu.Calls()
	if s = r.pass(); s.Supplements != 1 {
		t.Errorf("after a change to a submitted job: %+v, want 1 supplement", s)
	}
	r.pass()
	if w := r.writes(before); len(w) != 0 {
		t.Errorf("a change after submission was pushed: %v", w)
	}
	if !r.row(reqDraft).SupplementNeeded {
		t.Error("supplement not flagged in state")
	}
	if got := r.seen(qsync.EventSupplement); got != 1 {
		t.Errorf("supplement warning logged %d times, want 1", got)
	}

	// Every request was accepted once, every quote submitted at most once.
	accepts := map[string]int{}
	for _, h := range r.emu.State().History {
		if h.Kind == emulator.HistoryAccept {
			accepts[h.RequestID]++
		}
	}
	for _, id := range ids {
		if accepts[id] != 1 {
			t.Errorf("request %s accepted %d times", id, accepts[id])
		}
	}
	events, err := r.st.Events(r.ctx, reqDraft, 0)
	if err != nil || len(events) < 4 {
		t.Errorf("events of %s: %d (%v), want the reserve, accept, draft, re-draft, submit trail", reqDraft, len(events), err)
	}
}
