package sync_test

import (
	"errors"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// An accept that landed but whose answer was lost leaves the row reserved;
// the next pass sees the request gone from the pending list and marks it
// accepted, without a second acceptance.
func TestAcceptLandedAnswerLost(t *testing.T) {
	r := newRig(t, rigOptions{remote: func(c *remote.Config) { c.MaxAttempts = 1 }})
	id := r.seed(sampleshop.ClaimNoLines)[0]
	r.emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultLandThenDrop, Count: 1})

	s := r.pass()
	if s.Retrying != 1 || s.Accepted != 0 {
		t.Fatalf("pass with a lost answer: %+v, want 1 retrying", s)
	}
	row := r.row(id)
	if row.Phase != qsync.PhaseReserved || row.Attempts != 1 || row.NextAttemptAt.IsZero() {
		t.Fatalf("row after a lost answer: phase %s attempts %d next %v", row.Phase, row.Attempts, row.NextAttemptAt)
	}
	before := r.emu.Calls()[emulator.RouteAccept]
	if s = r.pass(); s.Accepted != 0 || r.emu.Calls()[emulator.RouteAccept] != before {
		t.Fatalf("pass within the backoff: %+v; nothing may be sent yet", s)
	}
	r.clock.advance(time.Hour) // the backoff ran out: the request is confirmed
	s = r.pass()
	if s.Accepted != 1 {
		t.Fatalf("repair pass: %+v, want the request marked accepted", s)
	}
	if got := r.row(id).Phase; got != qsync.PhaseAccepted {
		t.Fatalf("phase %s, want accepted", got)
	}
	// The repair pass confirmed it with a repeated accept (answered 409):
	// two calls, one acceptance.
	if got := r.emu.Calls()[emulator.RouteAccept]; got != 2 {
		t.Errorf("accept sent %d times, want 2 (the lost one and the confirming one)", got)
	}
	if got := acceptances(r.emu.State(), id); got != 1 {
		t.Errorf("request accepted %d times on the remote, want 1", got)
	}
	if got := inferred(r.events.of(qsync.EventAccepted)); got != 1 {
		t.Errorf("confirmed acceptance reported %d times, want 1", got)
	}
}

// inferred counts the acceptances inferred from a repeated accept.
func inferred(evs []qsync.Event) int {
	n := 0
	for _, ev := range evs {
		if ev.Inferred {
			n++
		}
	}
	return n
}

// acceptances counts the successful accepts of a request in the
// emulator's history.
func acceptances(st emulator.State, id string) int {
	n := 0
	for _, h := range st.History {
		if h.Kind == emulator.HistoryAccept && h.RequestID == id {
			n++
		}
	}
	return n
}

// A referenceId taken on the remote by another request: 409 on every
// attempt while the request stays pending; after MaxConflicts the request
// is rejected with a reason that says what to do, and retry puts it back.
func TestAcceptConflictRejects(t *testing.T) {
	r := newRig(t, rigOptions{})
	other := r.emu.AddRequests(emulator.SeedRequest{ClaimNumber: "CLM-OTHER"})[0]
	if _, err := r.client.Accept(r.ctx, other, sampleshop.JobDraft, time.Time{}); err != nil {
		t.Fatal(err) // someone else used RO-50001 on the remote
	}
	id := r.seed(sampleshop.ClaimDraft)[0]
	for pass := 1; pass <= 3; pass++ {
		r.pass()
		row := r.row(id)
		want := qsync.PhaseReserved
		if pass == 3 {
			want = qsync.PhaseRejected
		}
		if row.Phase != want {
			t.Fatalf("after pass %d: phase %s, want %s (last error %q)", pass, row.Phase, want, row.LastError)
		}
	}
	row := r.row(id)
	for _, want := range []string{"RO-50001", "conflict", "quotesync retry " + id} {
		if !strings.Contains(row.LastError, want) {
			t.Errorf("rejection reason %q does not mention %q", row.LastError, want)
		}
	}
	// Retry must look the job up again (the shop renumbers it, or the
	// mapping is fixed): back to waiting, the job number freed.
	if row.ResumePhase != qsync.PhaseWaiting || row.JobNumber != "" {
		t.Errorf("rejected row: resume phase %s, job %q; want waiting with no job number", row.ResumePhase, row.JobNumber)
	}
	// Known and rejected: later passes leave it alone.
	before := r.emu.Calls()
	r.pass()
	if w := r.writes(before); len(w) != 0 {
		t.Errorf("a rejected request was tried again: %v", w)
	}
	if _, _, err := r.engine.Retry(r.ctx, id, "test"); err != nil {
		t.Fatal(err)
	}
	if got := r.row(id).Phase; got != qsync.PhaseWaiting {
		t.Fatalf("after retry: %s, want waiting", got)
	}
	// The shop gives the job another number; the next pass reserves and
	// accepts it with that one.
	if _, err := r.d.SQL.ExecContext(r.ctx, "UPDATE jobs SET job_no = 'RO-59001' WHERE job_no = ?", sampleshop.JobDraft); err != nil {
		t.Fatal(err)
	}
	r.pass()
	if row := r.row(id); row.Phase == qsync.PhaseRejected || row.JobNumber != "RO-59001" {
		t.Fatalf("after the shop renumbered the job: %s with job %q (%s)", row.Phase, row.JobNumber, row.LastError)
	}
	if rs, _ := r.emu.State().Request(id); rs.ReferenceID != "RO-59001" {
		t.Errorf("remote accepted %s with %q, want RO-59001", id, rs.ReferenceID)
	}
}

// A push the remote refuses (400) rejects that job only; the others go on,
// and retry puts it back into the flow.
func TestPushRejectedIsolated(t *testing.T) {
	r := newRig(t, rigOptions{})
	ids := r.seed(sampleshop.ClaimDraft, sampleshop.ClaimNoLines)
	r.pass() // accepted; RO-50001 drafted, RO-50003 has no lines yet
	for _, job := range []string{sampleshop.JobDraft, sampleshop.JobNoLines} {
		if _, err := r.shop.AddLine(r.ctx, job, sampleshop.Line{Code: "SUNDRY", Description: "Consumables", Qty: d("1"), UnitPrice: price("12.00")}); err != nil {
			t.Fatal(err)
		}
	}
	r.emu.AddFault(emulator.Fault{Route: emulator.RouteCreateQuote, Action: emulator.FaultStatus, Status: 400, Count: 1})
	s := r.pass()
	if s.Rejected != 1 || s.Drafted+s.Redrafted != 1 {
		t.Fatalf("pass with one refused push: %+v, want 1 rejected and the other pushed", s)
	}
	var rejected string
	for _, id := range ids {
		if row := r.row(id); row.Phase == qsync.PhaseRejected {
			rejected = id
			if !strings.Contains(row.LastError, "400") || row.ResumePhase == "" {
				t.Errorf("rejected row: resume %q, last error %q", row.ResumePhase, row.LastError)
			}
		}
	}
	if rejected == "" {
		t.Fatal("no row rejected")
	}
	if _, _, err := r.engine.Retry(r.ctx, rejected, "fixed"); err != nil {
		t.Fatal(err)
	}
	if s := r.pass(); s.Drafted+s.Redrafted != 1 {
		t.Errorf("after retry: %+v, want the job pushed", s)
	}
	for _, job := range []string{sampleshop.JobDraft, sampleshop.JobNoLines} {
		r.assertRemoteHoldsShopLines(job)
	}
}

// A refused token stops the pass loudly and writes nothing anywhere.
func TestUnauthorizedStopsPass(t *testing.T) {
	r := newRig(t, rigOptions{token: "wrong-token-0042"})
	r.seed(sampleshop.ClaimDraft)
	_, err := r.engine.Pass(r.ctx)
	if !errors.Is(err, qsync.ErrUnauthorized) {
		t.Fatalf("pass error %v, want ErrUnauthorized", err)
	}
	if strings.Contains(err.Error(), "wrong-token-0042") {
		t.Errorf("the token leaked into the error: %v", err)
	}
	rows, err := r.st.ListRequests(r.ctx, store.ListQuery{})
	if err != nil || len(rows) != 0 {
		t.Errorf("state rows after a refused token: %d (%v)", len(rows), err)
	}
	if got := r.logs.FilterMessage("remote refused the token (401/403): fix the token; the pass stopped").Len(); got != 1 {
		t.Errorf("loud error logged %d times, want 1", got)
	}
}

// A temporary failure counts an attempt and backs off: the job is not
// tried again until its time comes, then it is.
func TestTemporaryFailureBacksOff(t *testing.T) {
	r := newRig(t, rigOptions{remote: func(c *remote.Config) { c.MaxAttempts = 1 }})
	id := r.seed(sampleshop.ClaimDraft)[0]
	fault := r.emu.AddFault(emulator.Fault{Route: emulator.RouteCreateQuote, Action: emulator.FaultStatus, Status: 503, RetryAfter: 2 * time.Minute})
	if s := r.pass(); s.Retrying != 1 {
		t.Fatalf("pass 1: %+v, want 1 retrying", s)
	}
	row := r.row(id)
	if row.Phase != qsync.PhaseAccepted || row.Attempts != 1 || !strings.Contains(row.LastError, "503") {
		t.Fatalf("row: phase %s attempts %d last error %q", row.Phase, row.Attempts, row.LastError)
	}
	if wait := row.NextAttemptAt.Sub(r.clock.Now()); wait < 2*time.Minute-time.Second {
		t.Errorf("next attempt in %s, want at least the Retry-After of 2m", wait)
	}
	before := r.emu.Calls()
	r.pass()
	if w := r.writes(before); len(w) != 0 {
		t.Errorf("a backing-off job was tried: %v", w)
	}
	r.clock.advance(row.NextAttemptAt.Sub(r.clock.Now()) + time.Second)
	r.pass()
	if got := r.row(id).Attempts; got != 2 {
		t.Errorf("attempts after the second failure: %d, want 2", got)
	}
	r.emu.RemoveFault(fault)
	r.clock.advance(time.Hour)
	if s := r.pass(); s.Drafted != 1 {
		t.Errorf("after the fault cleared: %+v, want 1 drafted", s)
	}
	if row := r.row(id); row.Attempts != 0 || row.LastError != "" {
		t.Errorf("recovered row keeps attempts %d, error %q", row.Attempts, row.LastError)
	}
}

// Without create_job a request waits for the shop to open a job; one that
// leaves the pending list first is reported gone.
func TestWaitingThenGone(t *testing.T) {
	var mu gosync.Mutex
	emuNow := time.Now()
	r := newRig(t, rigOptions{
		shop:   func(c *shopdb.Config) { c.Queries.CreateJob = nil },
		emuNow: func() time.Time { mu.Lock(); defer mu.Unlock(); return emuNow },
	})
	ids := r.emu.AddRequests(
		emulator.SeedRequest{ClaimNumber: "CLM-LATER", Expiry: emuNow.Add(time.Hour)},
		emulator.SeedRequest{ClaimNumber: "CLM-NEVER", Expiry: emuNow.Add(time.Hour)},
	)
	if s := r.pass(); s.Waiting != 2 {
		t.Fatalf("pass 1: %+v, want 2 waiting", s)
	}
	if got := r.seen(qsync.EventWaiting); got != 2 {
		t.Errorf("waiting logged %d times, want once per request", got)
	}
	r.pass()
	if got := r.seen(qsync.EventWaiting); got != 2 {
		t.Errorf("waiting logged again on the next pass (%d)", got)
	}
	job, err := r.shop.CreateJob(r.ctx, "CLM-LATER", "")
	if err != nil {
		t.Fatal(err)
	}
	if s := r.pass(); s.Accepted != 1 {
		t.Fatalf("after the shop opened a job: %+v", s)
	}
	if row := r.row(ids[0]); row.Phase != qsync.PhaseAccepted || row.JobNumber != job {
		t.Errorf("request %s: %s with job %q, want accepted with %s", ids[0], row.Phase, row.JobNumber, job)
	}
	mu.Lock()
	emuNow = emuNow.Add(2 * time.Hour) // the other request expires unaccepted
	mu.Unlock()
	if s := r.pass(); s.Gone != 1 {
		t.Fatalf("after expiry: %+v, want 1 gone", s)
	}
	if row := r.row(ids[1]); row.Phase != qsync.PhaseGone || !strings.Contains(row.LastError, "before the shop had a job") {
		t.Errorf("expired request: %s, %q", row.Phase, row.LastError)
	}
}

// A request whose expiry has passed is never accepted, even while the
// remote still lists it; it is recorded gone (expired), once, so that it
// is reported rather than forgotten, and no shop job is made for it.
func TestExpiredNeverAccepted(t *testing.T) {
	r := newRig(t, rigOptions{})
	id := r.emu.AddRequests(emulator.SeedRequest{ClaimNumber: "CLM-LATE", Expiry: time.Now().Add(time.Hour)})[0]
	r.clock.advance(2 * time.Hour) // quotesync's clock is past the expiry, the remote's is not
	r.pass()
	r.pass()
	if got := r.emu.Calls()[emulator.RouteAccept]; got != 0 {
		t.Errorf("accept sent %d times for an expired request", got)
	}
	row := r.row(id)
	if row.Phase != qsync.PhaseGone || row.Reason != qsync.ReasonExpired || row.JobNumber != "" {
		t.Errorf("expired request: %s (%s) job %q, want gone (expired) without a job", row.Phase, row.Reason, row.JobNumber)
	}
	if got := r.seen(qsync.EventGone); got != 1 {
		t.Errorf("gone reported %d times, want once", got)
	}
	if job, _ := r.shop.FindJob(r.ctx, "CLM-LATE"); job != "" {
		t.Errorf("create_job made job %s for an expired request", job)
	}
}

// A submit whose answer was lost is retried and the 409 "already
// submitted" counts as done: submitted exactly once.
func TestSubmitLandedAnswerLost(t *testing.T) {
	r := newRig(t, rigOptions{remote: func(c *remote.Config) { c.MaxAttempts = 1 }})
	id := r.seed(sampleshop.ClaimFinal)[0]
	statusRoute := "POST " + remote.StatusPathQuotesStatus // the default form
	r.emu.AddFault(emulator.Fault{Route: statusRoute, Action: emulator.FaultLandThenDrop, Count: 1})
	if s := r.pass(); s.Retrying != 1 {
		t.Fatalf("pass 1: %+v, want the submit retrying", s)
	}
	if got := r.row(id).Phase; got != qsync.PhaseDrafted {
		t.Fatalf("phase %s, want drafted until the submit is confirmed", got)
	}
	r.clock.advance(time.Hour)
	if s := r.pass(); s.Submitted != 1 {
		t.Fatalf("pass 2: %+v, want submitted", s)
	}
	if q, _ := r.remoteQuote(sampleshop.JobFinal); q.SubmitCount != 1 {
		t.Errorf("quote submitted %d times, want 1", q.SubmitCount)
	}
}

// An estimate the shop reopens while the pass pushes its lines is not
// submitted: the engine reads the estimate state again before submitting.
func TestSubmitRechecksFinal(t *testing.T) {
	testSubmitRecheck(t, newRig(t, rigOptions{}), true)
}

// testSubmitRecheck marks RO-50001 final, then, while the pass pushes a new
// line, edits another line (and reopens the estimate when reopen is set):
// the pass must not submit. The next pass pushes the edit, and submits it
// when the estimate is still final.
func testSubmitRecheck(t *testing.T, r *rig, reopen bool) {
	t.Helper()
	id := r.seed(sampleshop.ClaimDraft)[0]
	r.pass()
	if _, err := r.shop.AddLine(r.ctx, sampleshop.JobDraft, sampleshop.Line{Code: "PNT", Description: "Blend wing", Qty: d("1.2"), UnitPrice: price("70")}); err != nil {
		t.Fatal(err)
	}
	if err := r.shop.SetFinal(r.ctx, sampleshop.JobDraft, true); err != nil {
		t.Fatal(err)
	}
	// The push of the new line is held for a second; meanwhile the shop
	// edits a line (and reopens the estimate).
	r.emu.AddFault(emulator.Fault{Route: emulator.RouteCreateQuote, Action: emulator.FaultLatency, Latency: time.Second, Count: 1})
	pushes := r.emu.Calls()[emulator.RouteCreateQuote]
	done := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(30 * time.Second)
		for r.emu.Calls()[emulator.RouteCreateQuote] == pushes {
			if time.Now().After(deadline) {
				done <- errors.New("the push never arrived")
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		lines, err := r.shop.Lines(r.ctx, sampleshop.JobDraft)
		if err != nil {
			done <- err
			return
		}
		l := lines[0]
		l.Description = "changed while the pass pushed"
		if err := r.shop.EditLine(r.ctx, l); err != nil {
			done <- err
			return
		}
		if reopen {
			err = r.shop.SetFinal(r.ctx, sampleshop.JobDraft, false)
		}
		done <- err
	}()
	s := r.pass()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s.Submitted != 0 || r.row(id).Phase != qsync.PhaseDrafted {
		t.Fatalf("submitted content the shop changed meanwhile: %+v, phase %s", s, r.row(id).Phase)
	}
	if got := r.seen(qsync.EventSubmitDeferred); got != 1 {
		t.Errorf("skip logged %d times", got)
	}
	s = r.pass()
	if s.Redrafted != 1 || (s.Submitted == 1) == reopen {
		t.Errorf("next pass: %+v, want the edit pushed, and submitted only if the estimate is still final", s)
	}
	r.assertRemoteHoldsShopLines(sampleshop.JobDraft)
}

// A first Draft push that landed without its answer, after which the shop
// deletes every line: the remote's stale Draft is overwritten with the
// empty quote, not left holding lines the shop no longer has.
func TestFirstPushLandedThenLinesDeleted(t *testing.T) {
	r := newRig(t, rigOptions{remote: func(c *remote.Config) { c.MaxAttempts = 1 }})
	id := r.seed(sampleshop.ClaimDraft)[0]
	r.emu.AddFault(emulator.Fault{Route: emulator.RouteCreateQuote, Action: emulator.FaultLandThenDrop, Count: 1})
	if s := r.pass(); s.Retrying != 1 {
		t.Fatalf("pass 1: %+v, want the first push retrying", s)
	}
	if row := r.row(id); row.Phase != qsync.PhaseAccepted || row.PushedAt.IsZero() {
		t.Fatalf("row after the lost answer: phase %s, pushed at %v; want accepted with the push recorded as sent", row.Phase, row.PushedAt)
	}
	if q, ok := r.remoteQuote(sampleshop.JobDraft); !ok || q.Status != "Draft" {
		t.Fatal("the push did not land on the remote")
	}
	lines, err := r.shop.Lines(r.ctx, sampleshop.JobDraft)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if err := r.shop.DeleteLine(r.ctx, l.LineID); err != nil {
			t.Fatal(err)
		}
	}
	r.clock.advance(time.Hour)
	r.pass()
	if got := r.row(id).Phase; got != qsync.PhaseDrafted {
		t.Fatalf("phase %s, want drafted", got)
	}
	r.assertRemoteHoldsShopLines(sampleshop.JobDraft) // no lines: no items
}
