package shopdb_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// mustDefer defers nr and checks that the returned row is the stored one.
func mustDefer(tb testing.TB, db *shopdb.DB, nr shopdb.NewRequest, reason string, next time.Time) shopdb.Request {
	tb.Helper()
	r, err := db.Defer(testContext(tb), nr, reason, next)
	if err != nil {
		tb.Fatalf("Defer(%s): %v", nr.RequestID, err)
	}
	checkStored(tb, db, r)
	return r
}

// checkStored fails unless r is the row stored for r.RequestID.
func checkStored(tb testing.TB, db *shopdb.DB, r shopdb.Request) {
	tb.Helper()
	stored, err := db.Request(testContext(tb), r.RequestID)
	if err != nil {
		tb.Fatal(err)
	}
	if diff := cmp.Diff(stored, r); diff != "" {
		tb.Fatalf("returned row differs from the stored row (-stored +returned):\n%s", diff)
	}
}

// warnings returns the messages of the request's warning events, oldest
// first.
func warnings(tb testing.TB, db *shopdb.DB, requestID string) []string {
	tb.Helper()
	evs, err := db.Events(testContext(tb), requestID, 0)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Kind == shopdb.EventWarning {
			out = append(out, evs[i].Message)
		}
	}
	return out
}

func TestDeferInsertsThenUpdates(t *testing.T) {
	db, _ := shopdbtest.New(t)
	ctx := testContext(t)
	nr := newRequest("d1", "CLM-D1")
	next := time.Now().Add(time.Minute)

	n := trips(db)
	r, err := db.Defer(ctx, nr, "run shop.queries.create_job[1]: deadlock", next)
	if err != nil {
		t.Fatalf("Defer: %v", err)
	}
	if got := n(); got != 5 {
		t.Errorf("Defer inserting cost %d round trips, want 5 (begin, select, insert, event, commit)", got)
	}
	checkStored(t, db, r)
	want := shopdb.Request{RequestID: "d1", ClaimNumber: "CLM-D1", Phase: shopdb.PhaseWaiting, Attempts: 1,
		NextAttemptAt: next.UTC().Truncate(time.Microsecond), LastError: "run shop.queries.create_job[1]: deadlock",
		Expiry: nr.Expiry, RequestJSON: nr.RequestJSON, CreatedAt: r.CreatedAt, UpdatedAt: r.CreatedAt, Version: 1}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Fatalf("first Defer (-want +got):\n%s", diff)
	}
	evs, err := db.Events(ctx, "d1", 0)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events after the first Defer = %+v, %v; want one", evs, err)
	}
	wantEv := []shopdb.Event{{ID: evs[0].ID, RequestID: "d1", Kind: shopdb.EventWarning, Attempt: 1,
		Message: "run shop.queries.create_job[1]: deadlock", At: r.CreatedAt}}
	if diff := cmp.Diff(wantEv, evs); diff != "" {
		t.Errorf("events after the first Defer (-want +got):\n%s", diff)
	}

	// The same reason again: attempts count, no new event.
	later := next.Add(time.Minute)
	n = trips(db)
	r2, err := db.Defer(ctx, nr, "run shop.queries.create_job[1]: deadlock", later)
	if err != nil {
		t.Fatalf("second Defer: %v", err)
	}
	if got := n(); got != 4 {
		t.Errorf("Defer updating with the same reason cost %d round trips, want 4 (begin, select, update, commit)", got)
	}
	checkStored(t, db, r2)
	if r2.Attempts != 2 || r2.Version != 2 || !r2.NextAttemptAt.Equal(later.Truncate(time.Microsecond)) || !r2.CreatedAt.Equal(r.CreatedAt) {
		t.Errorf("second Defer = %+v; want attempts 2, version 2, next attempt %v, created_at kept", r2, later)
	}
	// A new reason: one more event.
	r3 := mustDefer(t, db, nr, "job RO-50001 is already linked to request 7", time.Time{})
	if r3.Attempts != 3 || r3.Version != 3 || !r3.NextAttemptAt.IsZero() || r3.LastError != "job RO-50001 is already linked to request 7" {
		t.Errorf("third Defer = %+v; want attempts 3, version 3, due now, the new reason", r3)
	}
	// A long reason is capped, and the capped text compares equal the next time.
	long := strings.Repeat("é", 3000)
	r4 := mustDefer(t, db, nr, long, time.Time{})
	r5 := mustDefer(t, db, nr, long, time.Time{})
	if len(r4.LastError) > 4000 || !strings.HasSuffix(r4.LastError, "…") || r5.Attempts != 5 {
		t.Errorf("long reason: last error %d bytes, attempts %d; want capped at 4000 with an ellipsis, 5", len(r4.LastError), r5.Attempts)
	}
	wantMsgs := []string{"run shop.queries.create_job[1]: deadlock", "job RO-50001 is already linked to request 7", r4.LastError}
	if diff := cmp.Diff(wantMsgs, warnings(t, db, "d1")); diff != "" {
		t.Errorf("warning events (-want +got):\n%s", diff)
	}
	if evs, _ := db.Events(ctx, "d1", 1); len(evs) != 1 || evs[0].Attempt != 4 {
		t.Errorf("latest event = %+v, want attempt 4", evs)
	}
	// A deferred request is visible in status.
	list, err := db.ListRequests(ctx, false, 0)
	if err != nil || len(list) != 1 || list[0].LastError != r5.LastError {
		t.Errorf("ListRequests = %v, %v; want the deferred row with its error", ids(list), err)
	}
}

// TestDeferOtherPhaseUntouched: a row past waiting is returned as it is,
// with no error, and nothing is written.
func TestDeferOtherPhaseUntouched(t *testing.T) {
	db, d := shopdbtest.New(t)
	ctx := testContext(t)
	reserved := mustReserve(t, db, newRequest("r1", sampleshop.ClaimDraft))
	submitted := advance(t, db, mustReserve(t, db, newRequest("r2", sampleshop.ClaimFinal)), shopdb.PhaseSubmitted,
		func(r *shopdb.Request) { r.SubmittedAt = time.Now() })
	rejected := advance(t, db, mustReserve(t, db, newRequest("r3", sampleshop.ClaimNoLines)), shopdb.PhaseRejected,
		func(r *shopdb.Request) { r.ResumePhase, r.LastError = shopdb.PhaseReserved, "400 bad claim" })
	events := count(t, d, "SELECT COUNT(*) FROM quotesync_events")
	for _, want := range []shopdb.Request{reserved, submitted, rejected} {
		n := trips(db)
		got, err := db.Defer(ctx, newRequest(want.RequestID, want.ClaimNumber), "create_job failed", time.Now().Add(time.Hour))
		if err != nil {
			t.Fatalf("Defer(%s, %s): %v", want.RequestID, want.Phase, err)
		}
		if spent := n(); spent != 3 {
			t.Errorf("Defer of a %s row cost %d round trips, want 3 (begin, select, commit)", want.Phase, spent)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Defer of a %s row changed it (-before +returned):\n%s", want.Phase, diff)
		}
		stored, err := db.Request(ctx, want.RequestID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, stored); diff != "" {
			t.Errorf("Defer of a %s row changed the stored row (-before +stored):\n%s", want.Phase, diff)
		}
	}
	if got := count(t, d, "SELECT COUNT(*) FROM quotesync_events"); got != events {
		t.Errorf("events = %d, want %d (Defer of rows past waiting writes none)", got, events)
	}
}

func TestDeferRejectsBadInput(t *testing.T) {
	db, d := shopdbtest.New(t)
	ctx := testContext(t)
	for name, c := range map[string]struct {
		nr     shopdb.NewRequest
		reason string
	}{
		"NoRequestID":     {shopdb.NewRequest{}, "boom"},
		"LongRequestID":   {shopdb.NewRequest{RequestID: strings.Repeat("9", 65)}, "boom"},
		"EmptyReason":     {newRequest("x1", "CLM-X"), ""},
		"BlankReason":     {newRequest("x1", "CLM-X"), " \n"},
		"LongClaimNumber": {shopdb.NewRequest{RequestID: "x2", ClaimNumber: strings.Repeat("C", 129)}, "boom"},
	} {
		if _, err := db.Defer(ctx, c.nr, c.reason, time.Time{}); err == nil {
			t.Errorf("%s: Defer succeeded, want an error", name)
		}
	}
	if got := count(t, d, "SELECT COUNT(*) FROM quotesync_requests"); got != 0 {
		t.Errorf("state rows = %d, want 0", got)
	}
}

// TestDeferThenReserveClears: once the shop has a job, Reserve upgrades the
// deferred waiting row and clears its attempts, backoff and error; until
// then Reserve leaves them as they are.
func TestDeferThenReserveClears(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	cfg := d.Config()
	cfg.Queries.CreateJob = nil
	db := d.Open(t, cfg)
	ctx := testContext(t)
	nr := newRequest("w1", "CLM-LATE")
	mustDefer(t, db, nr, "job in use", time.Now().Add(time.Hour))
	deferred := mustDefer(t, db, nr, "job in use", time.Now().Add(2*time.Hour))

	// Still no job: Reserve changes nothing.
	r, err := db.Reserve(ctx, nr)
	if !errors.Is(err, shopdb.ErrNoJob) {
		t.Fatalf("Reserve without a job: %v, want ErrNoJob", err)
	}
	if diff := cmp.Diff(deferred, r); diff != "" {
		t.Errorf("Reserve without a job changed the deferred row (-deferred +got):\n%s", diff)
	}
	// Leftovers of an earlier life (a request sent back to waiting) go too.
	deferred = advance(t, db, deferred, shopdb.PhaseWaiting, func(r *shopdb.Request) {
		r.PushedHash, r.PushedMarker, r.PushedAt, r.ResumePhase = "sha256:old", "old", time.Now(), shopdb.PhaseReserved
	})

	job, err := d.Shop().CreateJob(ctx, "CLM-LATE", "")
	if err != nil {
		t.Fatal(err)
	}
	up := mustReserve(t, db, nr)
	want := shopdb.Request{RequestID: "w1", ClaimNumber: "CLM-LATE", JobNumber: job, Phase: shopdb.PhaseReserved,
		Expiry: nr.Expiry, RequestJSON: nr.RequestJSON, CreatedAt: deferred.CreatedAt, UpdatedAt: up.UpdatedAt,
		Version: deferred.Version + 1}
	if diff := cmp.Diff(want, up); diff != "" {
		t.Errorf("Reserve of the deferred row (-want +got):\n%s", diff)
	}
	stored, err := db.Request(ctx, "w1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(up, stored); diff != "" {
		t.Errorf("Reserve's row differs from the stored row (-returned +stored):\n%s", diff)
	}
}

// TestDeferConcurrent defers one request from many goroutines on two pools
// (two daemons) at once: one row, every attempt counted, one event.
func TestDeferConcurrent(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	pools := []*shopdb.DB{d.Open(t, d.Config()), d.Open(t, d.Config())}
	ctx := testContext(t)
	const rounds, racers = 5, 8
	for round := 0; round < rounds; round++ {
		id := fmt.Sprintf("cc%d", round)
		errs := make([]error, racers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := 0; i < racers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = pools[i%2].Defer(ctx, newRequest(id, "CLM-"+id), "create_job failed", time.Now().Add(time.Minute))
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d racer %d: %v", round, i, err)
			}
		}
		r, err := pools[0].Request(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Phase != shopdb.PhaseWaiting || r.Attempts != racers || r.Version != racers {
			t.Errorf("round %d: row %s attempts %d version %d; want waiting, %d, %d", round, r.Phase, r.Attempts, r.Version, racers, racers)
		}
		if got := count(t, d, "SELECT COUNT(*) FROM quotesync_events WHERE request_id = ?", id); got != 1 {
			t.Errorf("round %d: events = %d, want 1 (one reason)", round, got)
		}
	}
	if got := count(t, d, "SELECT COUNT(*) FROM quotesync_requests"); got != rounds {
		t.Errorf("state rows = %d, want %d", got, rounds)
	}
}
