package sync_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	qsync "github.com/quotesync/quotesync/sync"
)

// A reserved request whose accepts all failed and which then expired is
// gone, not accepted: leaving the pending list proves nothing by itself;
// the repeated accept finds the request expired (410).
func TestReservedExpiredWithoutAcceptIsGone(t *testing.T) {
	var mu gosync.Mutex
	emuNow := time.Now()
	r := newRig(t, rigOptions{
		remote: func(c *remote.Config) { c.MaxAttempts = 1 },
		emuNow: func() time.Time { mu.Lock(); defer mu.Unlock(); return emuNow },
	})
	id := r.emu.AddRequests(emulator.SeedRequest{ClaimNumber: sampleshop.ClaimNoLines, Expiry: emuNow.Add(time.Hour)})[0]
	fault := r.emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultStatus, Status: 503})
	if s := r.pass(); s.Retrying != 1 {
		t.Fatalf("pass 1: %+v, want the accept retrying", s)
	}
	mu.Lock()
	emuNow = emuNow.Add(2 * time.Hour) // expired on the remote, never accepted
	mu.Unlock()
	r.emu.RemoveFault(fault)
	r.clock.advance(time.Hour) // the backoff ran out
	if s := r.pass(); s.Gone != 1 || s.Accepted != 0 {
		t.Fatalf("pass after expiry: %+v, want gone", s)
	}
	if row := r.row(id); row.Phase != qsync.PhaseGone || !strings.Contains(row.LastError, "before our accept landed") {
		t.Errorf("row: %s, %q", row.Phase, row.LastError)
	}
	if got := acceptances(r.emu.State(), id); got != 0 {
		t.Errorf("request accepted %d times on the remote", got)
	}
}

// A pending list with an undecodable entry: the requests it stands for are
// still pending, so a waiting row is not marked gone and a reserved row is
// not taken for accepted.
func TestUndecodableEntryConcludesNothing(t *testing.T) {
	r := newRig(t, rigOptions{
		remote: func(c *remote.Config) { c.MaxAttempts = 1 },
		shop:   func(c *shopdb.Config) { c.Queries.CreateJob = nil },
	})
	ids := r.emu.AddRequests(
		emulator.SeedRequest{ClaimNumber: "CLM-NO-JOB-YET"},      // waits: no job, no create_job
		emulator.SeedRequest{ClaimNumber: sampleshop.ClaimDraft}, // reserved; its accepts fail
	)
	fault := r.emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultStatus, Status: 503})
	r.pass()
	if a, b := r.row(ids[0]).Phase, r.row(ids[1]).Phase; a != qsync.PhaseWaiting || b != qsync.PhaseReserved {
		t.Fatalf("after pass 1: %s and %s, want waiting and reserved", a, b)
	}
	r.emu.RemoveFault(fault)

	// Now the list arrives with both entries' expiry garbled: only the
	// ids can be read.
	garble := garblingServer(t, r.emu, func(entry map[string]any) { entry["expiry"] = "next tuesday" })
	c, err := remote.New(remote.Config{BaseURL: garble.URL, RateLimit: -1, MaxAttempts: 1}, remote.StaticToken(testToken))
	if err != nil {
		t.Fatal(err)
	}
	e, err := qsync.New(r.engine.Config(), c, r.db, r.st, r.engineLog())
	if err != nil {
		t.Fatal(err)
	}
	e.Now = r.clock.Now
	r.clock.advance(time.Hour)
	s, err := e.Pass(r.ctx)
	if err != nil {
		t.Fatalf("pass with undecodable entries: %v", err)
	}
	if s.Gone != 0 || s.Accepted != 0 {
		t.Errorf("pass concluded from an undecodable list: %+v", s)
	}
	if a, b := r.row(ids[0]).Phase, r.row(ids[1]).Phase; a != qsync.PhaseWaiting || b != qsync.PhaseReserved {
		t.Errorf("after the garbled list: %s and %s, want waiting and reserved unchanged", a, b)
	}
	if got := r.emu.Calls()[emulator.RouteAccept]; got != 1 {
		t.Errorf("accept calls %d, want only the first failed one", got)
	}
}

// garblingServer serves emu, rewriting each entry of the pending list.
func garblingServer(t *testing.T, emu *emulator.Emulator, edit func(map[string]any)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := httptest.NewRecorder()
		emu.ServeHTTP(rec, req)
		body := rec.Body.Bytes()
		if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/requests") && rec.Code == http.StatusOK {
			var list []map[string]any
			if err := json.Unmarshal(body, &list); err == nil {
				for _, entry := range list {
					edit(entry)
				}
				body, _ = json.Marshal(list)
			}
		}
		for k, v := range rec.Header() {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(bytes.Clone(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A 409 to a Draft push when no submit of ours was ever sent is not taken
// for "already submitted": the job is rejected with the fix to make.
func TestPushConflictWithoutSubmit(t *testing.T) {
	r := newRig(t, rigOptions{})
	id := r.seed(sampleshop.ClaimDraft)[0]
	r.emu.AddFault(emulator.Fault{Route: emulator.RouteCreateQuote, Action: emulator.FaultStatus, Status: 409, Count: 1})
	s := r.pass()
	if s.Submitted != 0 || s.Rejected != 1 {
		t.Fatalf("pass: %+v, want the job rejected, not submitted", s)
	}
	row := r.row(id)
	if row.Phase != qsync.PhaseRejected || !strings.Contains(row.LastError, "remote.draft_update: put") || row.SupplementNeeded {
		t.Errorf("row: %s, supplement %v, %q", row.Phase, row.SupplementNeeded, row.LastError)
	}
	if _, _, err := r.engine.Retry(r.ctx, id, "test"); err != nil {
		t.Fatal(err)
	}
	if s := r.pass(); s.Drafted != 1 {
		t.Errorf("after retry: %+v, want the draft pushed", s)
	}
}

// A request whose job cannot be reserved (find_job returns a job another
// request holds) waits with the reason and a backoff; one whose data the
// shop refuses as longer than its column (create_job's registration) is
// rejected with the column named and not tried again until retry; the
// pass and the other requests go on.
func TestReserveFailureWaits(t *testing.T) {
	r := newRig(t, rigOptions{})
	first := r.seed(sampleshop.ClaimDraft)[0]
	r.pass()
	// The insurer re-issues a request for the same claim: find_job returns
	// RO-50001, which request `first` holds. And a new claim whose
	// registration does not fit the shop's column: create_job fails.
	ids := r.emu.AddRequests(
		emulator.SeedRequest{ClaimNumber: sampleshop.ClaimDraft},
		emulator.SeedRequest{ClaimNumber: "CLM-LONG", Vehicle: json.RawMessage(`{"registration":"THIS PLATE IS FAR TOO LONG FOR THE COLUMN"}`)},
		emulator.SeedRequest{ClaimNumber: sampleshop.ClaimNoLines},
	)
	s, err := r.engine.Pass(r.ctx)
	if err != nil {
		t.Fatalf("the pass failed for two requests' reserve errors: %v", err)
	}
	if s.Accepted != 1 || s.Retrying != 1 || s.Rejected != 1 {
		t.Errorf("pass: %+v, want the good request accepted, one waiting to retry, one rejected", s)
	}
	if row := r.row(ids[0]); row.Phase != qsync.PhaseWaiting || row.NextAttemptAt.IsZero() || !strings.Contains(row.LastError, "RO-50001") {
		t.Errorf("request %s: %s, next %v, %q; want waiting with a backoff and a reason naming RO-50001", ids[0], row.Phase, row.NextAttemptAt, row.LastError)
	}
	long := r.row(ids[1])
	if long.Phase != qsync.PhaseRejected || long.Reason != qsync.ReasonTooLong || !strings.Contains(long.LastError, "registration") ||
		!strings.Contains(long.LastError, "quotesync retry "+ids[1]) {
		t.Errorf("request %s: %s (%s), %q; want rejected as too_long naming the column and the retry", ids[1], long.Phase, long.Reason, long.LastError)
	}
	if got := r.row(first).JobNumber; got != sampleshop.JobDraft {
		t.Errorf("the first request lost its job: %q", got)
	}
	if got := r.seen(qsync.EventReserveFailed); got != 1 {
		t.Errorf("reserve failures logged %d times, want 1", got)
	}
	// Backing off: not tried on the next pass, and not logged again.
	r.pass()
	if got := r.row(ids[0]).Attempts; got != 1 {
		t.Errorf("attempts %d after a pass within the backoff, want 1", got)
	}
	r.clock.advance(time.Hour)
	r.pass()
	if got := r.row(ids[0]).Attempts; got != 2 {
		t.Errorf("attempts %d after the backoff, want 2", got)
	}
	if got := r.seen(qsync.EventReserveFailed); got != 1 {
		t.Errorf("the same reason logged again (%d lines)", got)
	}
	if got := r.row(ids[1]); got.Version != long.Version {
		t.Errorf("the rejected request was tried again on its own: %s %q", got.Phase, got.LastError)
	}
	if _, after, err := r.engine.Retry(r.ctx, ids[1], "column widened"); err != nil || after.Phase != qsync.PhaseWaiting {
		t.Errorf("retry of the rejected request: %s, %v; want it waiting again", after.Phase, err)
	}
}

// One job whose estimate_state row is invalid is held; the others go on.
func TestBadEstimateStateHeld(t *testing.T) {
	r := newRig(t, rigOptions{shop: func(c *shopdb.Config) {
		c.Queries.EstimateState = strings.Replace(sampleshop.Mapping().Queries.EstimateState,
			"MAX(CASE WHEN e.status = 'FINAL' THEN 1 ELSE 0 END) AS final",
			"CASE WHEN j.job_no = 'RO-50002' THEN 'maybe' ELSE MAX(CASE WHEN e.status = 'FINAL' THEN 1 ELSE 0 END) END AS final", 1)
	}})
	ids := r.seed(sampleshop.ClaimDraft, sampleshop.ClaimFinal)
	s, err := r.engine.Pass(r.ctx)
	if err != nil {
		t.Fatalf("pass: %v", err)
	}
	if s.Drafted != 1 || s.Held != 1 {
		t.Errorf("pass: %+v, want one drafted and one held", s)
	}
	if row := r.row(ids[1]); !strings.Contains(row.LastError, "RO-50002") || !strings.Contains(row.LastError, "final") {
		t.Errorf("held row's reason %q should name the job and the column", row.LastError)
	}
}

// Without a change marker in estimate_state, the re-check before a submit
// reads the lines again: a change while the pass pushed is not submitted.
func TestSubmitRechecksWithoutMarker(t *testing.T) {
	r := newRig(t, rigOptions{shop: func(c *shopdb.Config) {
		c.Queries.EstimateState = `SELECT j.job_no AS job, MAX(CASE WHEN e.status = 'FINAL' THEN 1 ELSE 0 END) AS final
FROM jobs j JOIN estimates e ON e.job_id = j.job_id WHERE j.job_no IN (:jobs) GROUP BY j.job_no`
	}})
	testSubmitRecheck(t, r, false)
}
