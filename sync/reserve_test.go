package sync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

// The reservation's decisions over the real storage: what the engine's
// reserve and deferReserve write, and what Retry does, on a real MariaDB.
// (the store's own tests cover the storage half: the transaction, the unique
// keys, a connection killed before COMMIT.)

// reserveHarness is an engine on a sample shop, with no remote: the tests
// call its reserve step directly, as the accept stage does.
type reserveHarness struct {
	t   *testing.T
	ctx context.Context
	d   *shopdbtest.Database
	db  *store.Store
	e   *Engine
	now time.Time
}

func newReserveHarness(t *testing.T, edit func(*shopdb.Config)) *reserveHarness {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	d := shopdbtest.NewSampleShop(t)
	cfg := d.Config()
	if edit != nil {
		edit(&cfg)
	}
	shop := d.Open(t, cfg)
	st := store.New(shop)
	e, err := New(DefaultConfig(), fakeRemote{}, shop, st, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	return &reserveHarness{t: t, ctx: ctx, d: d, db: st, e: e, now: time.Now()}
}

// pendingReq is a listed request for claim, as the client decodes it.
func pendingReq(id, claim string) remote.Request {
	raw, _ := json.Marshal(map[string]any{"id": id, "claim_number": claim,
		"vehicle": map[string]any{"registration": "REG" + id}})
	return remote.Request{ID: id, ClaimNumber: claim, Expiry: time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC), Raw: raw}
}

// reserve runs the accept stage's reserve step for req in a pass of its
// own and returns the pass, and the row when it was reserved.
func (h *reserveHarness) reserve(e *Engine, req remote.Request) (*pass, store.Request, bool) {
	h.t.Helper()
	p := &pass{e: e, now: h.now, phases: map[string]store.Phase{}}
	r, ok := e.reserve(h.ctx, p, req)
	if len(p.errs) > 0 {
		h.t.Fatalf("reserve %s failed the pass: %v", req.ID, errors.Join(p.errs...))
	}
	return p, r, ok
}

// row reads a state row.
func (h *reserveHarness) row(id string) store.Request {
	h.t.Helper()
	r, err := h.db.Request(h.ctx, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// events returns the kinds of a request's events, oldest first.
func (h *reserveHarness) events(id string) []string {
	h.t.Helper()
	evs, err := h.db.Events(h.ctx, id, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for i := len(evs) - 1; i >= 0; i-- {
		out = append(out, evs[i].Kind)
	}
	return out
}

func (h *reserveHarness) count(query string, args ...any) int {
	h.t.Helper()
	var n int
	if err := h.d.SQL.GetContext(h.ctx, &n, query, args...); err != nil {
		h.t.Fatalf("%s: %v", query, err)
	}
	return n
}

func (h *reserveHarness) counter() int {
	return h.count("SELECT next_val FROM counters WHERE name = 'job'")
}

// TestReserveFindsOrCreatesJob: find_job's job is reserved with its
// booking date, nothing created; a new claim gets a job from create_job
// (its parameters from the request's JSON); reserving again writes
// nothing; the intent to accept is recorded with the reservation.
func TestReserveFindsOrCreatesJob(t *testing.T) {
	h := newReserveHarness(t, nil)
	before := h.counter()
	_, r, ok := h.reserve(h.e, pendingReq("101", sampleshop.ClaimDraft))
	if !ok || r.JobNumber != sampleshop.JobDraft || r.Phase != PhaseReserved || r.Intent != IntentAccept || r.JobCreated {
		t.Fatalf("reserve of an existing job: %+v, %v", r, ok)
	}
	if got, want := r.BookingDate, time.Date(2025, 7, 14, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("booking date = %v, want %v", got, want)
	}
	if got := h.counter(); got != before {
		t.Errorf("counter = %d, want %d (find_job must not create)", got, before)
	}
	if diff := cmp.Diff(r, h.row("101")); diff != "" {
		t.Errorf("reserved row differs from the stored one (-returned +stored):\n%s", diff)
	}
	if got := h.events("101"); !cmp.Equal(got, []string{string(EventReserved)}) {
		t.Errorf("events %v, want one reserved", got)
	}
	// A second reserve step for it (another instance did it first, say)
	// changes nothing.
	if _, again, ok := h.reserve(h.e, pendingReq("101", sampleshop.ClaimDraft)); ok || again.JobNumber != "" {
		t.Errorf("second reserve = %+v, %v; want nothing done", again, ok)
	}
	if diff := cmp.Diff(r, h.row("101")); diff != "" {
		t.Errorf("second reserve changed the row:\n%s", diff)
	}

	_, c, ok := h.reserve(h.e, pendingReq("201", "CLM-NEW-1"))
	if want := fmt.Sprintf("RO-%d", before+1); !ok || c.JobNumber != want || !c.JobCreated {
		t.Fatalf("reserve of a new claim: %+v, %v; want job %s created", c, ok, want)
	}
	var reg, claim string
	if err := h.d.SQL.QueryRow("SELECT registration, claim_number FROM jobs WHERE job_no = ?", c.JobNumber).Scan(&reg, &claim); err != nil {
		t.Fatal(err)
	}
	if reg != "REG201" || claim != "CLM-NEW-1" {
		t.Errorf("created job: registration %q claim %q, want REG201 and CLM-NEW-1", reg, claim)
	}
}

// TestReserveWaitsWithoutJob: without create_job, a request the shop has
// no job for waits, recorded once; when the shop opens the job, the
// waiting row is reserved in place, its creation time kept.
func TestReserveWaitsWithoutJob(t *testing.T) {
	h := newReserveHarness(t, func(c *shopdb.Config) { c.Queries.CreateJob = nil })
	req := pendingReq("301", "CLM-LATER")
	p, _, ok := h.reserve(h.e, req)
	w := h.row("301")
	if ok || w.Phase != PhaseWaiting || w.Reason != ReasonNoJob || w.Version != 1 || p.summary.Waiting != 1 {
		t.Fatalf("first reserve: %+v (waiting %d)", w, p.summary.Waiting)
	}
	h.reserve(h.e, req)
	if again := h.row("301"); !cmp.Equal(w, again) {
		t.Errorf("a second pass changed the waiting row:\n%s", cmp.Diff(w, again))
	}
	if got := h.events("301"); !cmp.Equal(got, []string{string(EventWaiting)}) {
		t.Errorf("events %v, want waiting recorded once", got)
	}
	job, err := h.d.Shop().CreateJob(h.ctx, "CLM-LATER", "")
	if err != nil {
		t.Fatal(err)
	}
	_, up, ok := h.reserve(h.e, req)
	if !ok || up.Phase != PhaseReserved || up.JobNumber != job || up.Version != 2 || !up.CreatedAt.Equal(w.CreatedAt) || up.Reason != ReasonNone {
		t.Errorf("after the shop opened the job: %+v; want reserved on %s, version 2, created_at kept", up, job)
	}
}

// TestReserveJobInUse: a second request whose find_job finds the job
// another request holds waits, with a reason naming the job and the holder
// and a backoff; no job is created and the holder keeps its job.
func TestReserveJobInUse(t *testing.T) {
	h := newReserveHarness(t, nil)
	h.reserve(h.e, pendingReq("401", sampleshop.ClaimDraft))
	jobs := h.count("SELECT COUNT(*) FROM jobs")
	_, _, ok := h.reserve(h.e, pendingReq("402", sampleshop.ClaimDraft))
	r := h.row("402")
	if ok || r.Phase != PhaseWaiting || r.Reason != ReasonReserveFailed || r.NextAttemptAt.IsZero() || r.Attempts != 1 {
		t.Fatalf("second request for %s: %+v", sampleshop.JobDraft, r)
	}
	for _, want := range []string{sampleshop.JobDraft, "401"} {
		if !strings.Contains(r.LastError, want) {
			t.Errorf("reason %q does not name %s", r.LastError, want)
		}
	}
	if got := h.count("SELECT COUNT(*) FROM jobs"); got != jobs {
		t.Errorf("jobs = %d, want %d", got, jobs)
	}
	if got := h.row("401").JobNumber; got != sampleshop.JobDraft {
		t.Errorf("the holder lost its job: %q", got)
	}
}

// TestDeferReserveCounts: every failed reservation counts an attempt and
// pushes the next one back; its event (and log line) is written only when
// the reason changes; a long reason is capped the same way each time; a
// row another instance reserved meanwhile is left alone.
func TestDeferReserveCounts(t *testing.T) {
	h := newReserveHarness(t, nil)
	req := pendingReq("d1", "CLM-D1")
	p := &pass{e: h.e, now: h.now, phases: map[string]store.Phase{}}
	for _, reason := range []string{"create_job failed: deadlock", "create_job failed: deadlock", "job RO-50001 is already linked to request 7"} {
		h.e.deferReserve(h.ctx, p, req, errors.New(reason))
	}
	long := strings.Repeat("é", 3000)
	h.e.deferReserve(h.ctx, p, req, errors.New(long))
	h.e.deferReserve(h.ctx, p, req, errors.New(long))
	if len(p.errs) > 0 {
		t.Fatal(errors.Join(p.errs...))
	}
	r := h.row("d1")
	if r.Phase != PhaseWaiting || r.Attempts != 5 || r.Version != 5 || r.NextAttemptAt.Before(h.now) || len(r.LastError) > store.MaxTextLen {
		t.Errorf("after 5 failures: %+v", r)
	}
	if got := h.events("d1"); len(got) != 3 {
		t.Errorf("events %v, want 3 (one per distinct reason)", got)
	}
	if got := p.summary.Retrying; got != 3 {
		t.Errorf("summary counts %d reserve failures, want the 3 reported", got)
	}
	// Reserved by another instance meanwhile: left alone.
	h.reserve(h.e, pendingReq("r1", sampleshop.ClaimFinal))
	reserved := h.row("r1")
	h.e.deferReserve(h.ctx, p, pendingReq("r1", sampleshop.ClaimFinal), errors.New("late"))
	if got := h.row("r1"); !cmp.Equal(reserved, got) {
		t.Errorf("deferReserve changed a reserved row:\n%s", cmp.Diff(reserved, got))
	}
}

// TestReserveConcurrent runs the reserve step of the same requests from
// many goroutines on two daemons at once: every request gets one row and
// one job, a job never serves two requests, no job is half created, and a
// request without a job is recorded waiting once.
func TestReserveConcurrent(t *testing.T) {
	h := newReserveHarness(t, nil)
	shop := h.d.Open(t, h.d.Config())
	second, err := New(DefaultConfig(), fakeRemote{}, shop, store.New(shop), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	engines := []*Engine{h.e, second}
	before, jobs := h.counter(), h.count("SELECT COUNT(*) FROM jobs")
	const requests, racers = 10, 4
	var wg gosync.WaitGroup
	start := make(chan struct{})
	for i := range requests {
		for k := range racers {
			wg.Go(func() {
				<-start
				e := engines[k%2]
				p := &pass{e: e, now: h.now, phases: map[string]store.Phase{}}
				e.reserve(h.ctx, p, pendingReq(fmt.Sprint("c", i), fmt.Sprint("CLM-C-", i)))
				if len(p.errs) > 0 {
					t.Errorf("racer: %v", errors.Join(p.errs...))
				}
			})
		}
	}
	close(start)
	wg.Wait()
	if got := h.count("SELECT COUNT(DISTINCT job_number) FROM quotesync_requests WHERE phase = 'reserved'"); got != requests {
		t.Errorf("reserved requests with distinct jobs = %d, want %d", got, requests)
	}
	if got := h.counter(); got != before+requests {
		t.Errorf("counter = %d, want %d (one bump per request, none leaked)", got, before+requests)
	}
	if got := h.count("SELECT COUNT(*) FROM jobs"); got != jobs+requests {
		t.Errorf("jobs = %d, want %d", got, jobs+requests)
	}
	if got := h.count("SELECT COUNT(*) FROM quotesync_events WHERE kind = 'reserved'"); got != requests {
		t.Errorf("reserved events = %d, want %d", got, requests)
	}
}

// TestRetryEveryStuckPhase: retry puts each phase a person can see as
// stuck back into the flow, as the state machine says, and records the
// note; a request that is not stuck, or submitted, is refused.
func TestRetryEveryStuckPhase(t *testing.T) {
	h := newReserveHarness(t, nil)
	insert := func(r store.Request) {
		t.Helper()
		if _, err := h.db.Insert(h.ctx, r, store.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	later := h.now.Add(time.Hour)
	insert(store.Request{RequestID: "rej", JobNumber: "RO-1", Phase: PhaseRejected, ResumePhase: PhaseAccepted, Reason: ReasonRefused, Attempts: 4, NextAttemptAt: later, LastError: "400 bad item"})
	insert(store.Request{RequestID: "rej-nojob", Phase: PhaseRejected, ResumePhase: PhaseReserved, Reason: ReasonJobConflict})
	insert(store.Request{RequestID: "rej-unset", JobNumber: "RO-2", Phase: PhaseRejected, Reason: ReasonRefused})
	insert(store.Request{RequestID: "unknown", JobNumber: "RO-3", Phase: PhaseAcceptUnknown, Reason: ReasonAcceptLost})
	insert(store.Request{RequestID: "gone", JobNumber: "RO-4", Phase: PhaseGone, Reason: ReasonExpired})
	insert(store.Request{RequestID: "taken", ReleasedJob: "RO-5", Phase: PhaseTakenElsewhere, Reason: ReasonOtherReference})
	insert(store.Request{RequestID: "held", JobNumber: "RO-6", Phase: PhaseDrafted, Reason: ReasonUnmappedCode, PushedMarker: "m"})
	insert(store.Request{RequestID: "backoff", JobNumber: "RO-7", Phase: PhaseAccepted, Reason: ReasonRetrying, NextAttemptAt: later})
	insert(store.Request{RequestID: "fine", JobNumber: "RO-8", Phase: PhaseDrafted})
	insert(store.Request{RequestID: "done", JobNumber: "RO-9", Phase: PhaseSubmitted, SupplementNeeded: true})

	tests := []struct {
		id     string
		phase  store.Phase
		job    string
		intent store.Intent
	}{
		{"rej", PhaseAccepted, "RO-1", ""},
		{"rej-nojob", PhaseWaiting, "", ""},
		{"rej-unset", PhaseReserved, "RO-2", IntentAccept},
		{"unknown", PhaseReserved, "RO-3", IntentAccept},
		{"gone", PhaseWaiting, "", ""},
		{"taken", PhaseWaiting, "", ""},
		{"held", PhaseDrafted, "RO-6", ""},
		{"backoff", PhaseAccepted, "RO-7", ""},
	}
	for _, tt := range tests {
		before, after, err := h.e.Retry(h.ctx, tt.id, "fixed by the front desk")
		if err != nil {
			t.Errorf("Retry(%s): %v", tt.id, err)
			continue
		}
		if after.Phase != tt.phase || after.JobNumber != tt.job || after.Intent != tt.intent || after.Reason != ReasonNone ||
			after.Attempts != 0 || !after.NextAttemptAt.IsZero() || after.LastError != "" || after.Version != before.Version+1 {
			t.Errorf("Retry(%s) = %+v; want %s on %q (intent %q), nothing pending", tt.id, after, tt.phase, tt.job, tt.intent)
		}
		evs, err := h.db.Events(h.ctx, tt.id, 1)
		if err != nil || len(evs) != 1 || evs[0].Kind != string(EventRetry) || evs[0].Message != "fixed by the front desk" ||
			evs[0].From != before.Phase || evs[0].To != tt.phase {
			t.Errorf("retry event of %s = %+v, %v", tt.id, evs, err)
		}
	}
	if got := h.row("held").PushedMarker; got != "" {
		t.Errorf("a held job's marker after retry = %q, want cleared so that the next pass reads it", got)
	}
	for _, id := range []string{"fine", "done"} {
		if _, _, err := h.e.Retry(h.ctx, id, ""); !errors.Is(err, ErrNotRetryable) {
			t.Errorf("Retry(%s) = %v, want ErrNotRetryable", id, err)
		}
	}
	if _, _, err := h.e.Retry(h.ctx, "nope", ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Retry of an unknown request = %v, want ErrNotFound", err)
	}
}
