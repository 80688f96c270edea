package sync

import (
	"fmt"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

// TestReserveBehindShopLock: while the shop's program holds the job
// counter in an open transaction, a reservation that needs create_job
// gives up after shop.lock_wait: the request waits (reason shop_lock),
// its attempt counted, its error naming the holder's connection, due
// again at the next pass, with one event however many passes it stays
// behind the lock, and nothing of create_job kept. Once the lock is
// released the next reservation creates exactly one job.
func TestReserveBehindShopLock(t *testing.T) {
	t.Parallel()
	h := newReserveHarness(t, func(c *shopdb.Config) { c.LockWait = time.Second })
	before := h.counter()
	shop, holder := shopdbtest.Hold(t, h.ctx, h.d.SQL.DB, "BEGIN", "SELECT next_val FROM counters WHERE name = 'job' FOR UPDATE")
	req := pendingReq("301", "CLM-SHOPLOCK")
	for attempt := 1; attempt <= 2; attempt++ { // two passes

		start := time.Now()
		if _, r, ok := h.reserve(h.e, req); ok {
			t.Fatalf("attempt %d: reserved %+v behind the shop's lock", attempt, r)
		}
		if waited := time.Since(start); waited > 5*time.Second {
			t.Errorf("attempt %d waited %s, want about shop.lock_wait (1s)", attempt, waited.Round(time.Millisecond))
		}
		r := h.row("301")
		if r.Phase != PhaseWaiting || r.Reason != ReasonShopLock || r.Attempts != attempt || !r.NextAttemptAt.IsZero() {
			t.Errorf("attempt %d: row %s/%s, %d attempts, next %v; want waiting/shop_lock, %d, at the next pass",
				attempt, r.Phase, r.Reason, r.Attempts, r.NextAttemptAt, attempt)
		}
		for _, want := range []string{fmt.Sprintf("connection %d (", holder), "shop.lock_wait (1s) ran out", fmt.Sprintf("KILL %d", holder)} {
			if !strings.Contains(r.LastError, want) {
				t.Errorf("attempt %d: last error %q lacks %q", attempt, r.LastError, want)
			}
		}
	}
	// A second request that needs create_job in the same pass does not
	// queue behind the same lock: it waits for the next pass at once,
	// named the same way.
	p := &pass{e: h.e, now: h.now, phases: map[string]store.Phase{}}
	if _, ok := h.e.reserve(h.ctx, p, req); ok {
		t.Fatal("reserved behind the shop's lock")
	}
	start := time.Now()
	if _, ok := h.e.reserve(h.ctx, p, pendingReq("302", "CLM-SHOPLOCK-2")); ok {
		t.Fatal("a second request reserved behind the shop's lock")
	}
	if waited := time.Since(start); waited > 500*time.Millisecond {
		t.Errorf("the second create_job of the pass waited %s, want no wait behind the lock the first met", waited.Round(time.Millisecond))
	}
	if r := h.row("302"); r.Phase != PhaseWaiting || r.Reason != ReasonShopLock || !strings.Contains(r.LastError, fmt.Sprintf("connection %d (", holder)) {
		t.Errorf("second request: %s/%s, last error %q; want waiting/shop_lock naming connection %d", r.Phase, r.Reason, r.LastError, holder)
	}
	if got := h.events("301"); len(got) != 1 || got[0] != string(EventReserveFailed) {
		t.Errorf("events %v, want one reserve_failed however many passes the lock lasts", got)
	}
	if _, err := shop.ExecContext(h.ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if got := h.counter(); got != before {
		t.Errorf("counter %d behind the lock, want %d: nothing of create_job kept", got, before)
	}
	_, r, ok := h.reserve(h.e, req)
	if !ok || r.Phase != PhaseReserved || !r.JobCreated || r.Attempts != 0 || r.LastError != "" {
		t.Fatalf("reserve after the lock was released: %+v, %v; want reserved with a created job, the error cleared", r, ok)
	}
	if got, n := h.counter(), h.count("SELECT COUNT(*) FROM jobs WHERE claim_number = ?", "CLM-SHOPLOCK"); got != before+1 || n != 1 {
		t.Errorf("after the release: counter %d (was %d), %d jobs for the claim; want one job", got, before, n)
	}
}

// TestBehindShopLockLast: the reservations of requests that waited behind
// a shop lock at their last attempt are taken out of the accept stage, in
// order, for the pass to try after its pushes; every other step stays.
func TestBehindShopLockLast(t *testing.T) {
	locked := store.Request{RequestID: "1", Phase: PhaseWaiting, Reason: ReasonShopLock}
	failed := store.Request{RequestID: "2", Phase: PhaseWaiting, Reason: ReasonReserveFailed}
	locked2 := store.Request{RequestID: "3", Phase: PhaseWaiting, Reason: ReasonShopLock}
	reserved := store.Request{RequestID: "4", Phase: PhaseReserved}
	steps := []acceptStep{
		{kind: stepReserve, row: &locked},
		{kind: stepReserve}, // new
		{kind: stepReserve, row: &failed},
		{kind: stepVanished, row: &locked2}, // left the list: no reservation
		{kind: stepReserve, row: &locked2},
		{kind: stepAccept, row: &reserved},
	}
	rest, behind := behindShopLock(steps)
	ids := func(sts []acceptStep) []string {
		var out []string
		for _, st := range sts {
			id := "new"
			if st.row != nil {
				id = st.row.RequestID
			}
			out = append(out, fmt.Sprintf("%d:%s", st.kind, id))
		}
		return out
	}
	wantRest := []string{fmt.Sprintf("%d:new", stepReserve), fmt.Sprintf("%d:2", stepReserve), fmt.Sprintf("%d:3", stepVanished), fmt.Sprintf("%d:4", stepAccept)}
	wantBehind := []string{fmt.Sprintf("%d:1", stepReserve), fmt.Sprintf("%d:3", stepReserve)}
	if got := ids(rest); strings.Join(got, " ") != strings.Join(wantRest, " ") {
		t.Errorf("accept stage %v, want %v", got, wantRest)
	}
	if got := ids(behind); strings.Join(got, " ") != strings.Join(wantBehind, " ") {
		t.Errorf("after the pushes %v, want %v", got, wantBehind)
	}
}

// TestReserveBehindShopLockConcurrent: reservations that need create_job
// run side by side in a pass; behind the shop's lock only one of them
// waits shop.lock_wait for it, the others wait for the next pass at once,
// naming the lock the first met.
func TestReserveBehindShopLockConcurrent(t *testing.T) {
	t.Parallel()
	h := newReserveHarness(t, func(c *shopdb.Config) { c.LockWait = time.Second })
	shop, holder := shopdbtest.Hold(t, h.ctx, h.d.SQL.DB, "BEGIN", "SELECT next_val FROM counters WHERE name = 'job' FOR UPDATE")
	defer func() { _, _ = shop.ExecContext(h.ctx, "ROLLBACK") }()
	p := &pass{e: h.e, now: h.now, phases: map[string]store.Phase{}}
	ids := []string{"401", "402", "403"}
	var wg gosync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, ok := h.e.reserve(h.ctx, p, pendingReq(id, fmt.Sprintf("CLM-CONC-%d", i))); ok {
				t.Errorf("request %s reserved behind the shop's lock", id)
			}
		}()
	}
	wg.Wait()
	waited := 0
	for _, id := range ids {
		r := h.row(id)
		if r.Phase != PhaseWaiting || r.Reason != ReasonShopLock || !strings.Contains(r.LastError, fmt.Sprintf("connection %d (", holder)) {
			t.Errorf("request %s: %s/%s, last error %q; want waiting/shop_lock naming connection %d", id, r.Phase, r.Reason, r.LastError, holder)
		}
		if !strings.Contains(r.LastError, "create_job not run in this pass") {
			waited++
		}
	}
	if waited != 1 {
		t.Errorf("%d of %d side-by-side create_jobs waited for the shop's lock, want 1", waited, len(ids))
	}
}
