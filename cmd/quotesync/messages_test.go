package main

// Messages the real binary prints: counts in words, no empty lists.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// TestPlanCountsItems: a dry run's plan says "push draft (1 item)" for a
// job of one line, not "1 items".
func TestPlanCountsItems(t *testing.T) {
	t.Parallel()
	e := newE2E(t, e2eOptions{})
	e.seed(sampleshop.ClaimNoLines, "")
	e.mustOnce() // accepted; nothing to push yet
	e.addLine(sampleshop.JobNoLines, 1)
	res := e.once("--dry-run")
	if res.Code != exitOK {
		t.Fatalf("once --dry-run: exit %d\n%s", res.Code, res.Output)
	}
	if !strings.Contains(res.Output, "push draft (1 item) ") || strings.Contains(res.Output, "1 items") {
		t.Errorf("the plan does not say \"push draft (1 item)\":\n%s", res.Output)
	}
}

// TestCheckWorkTypesNoLines: when the only job check can look at has no
// lines yet, the work types line says so instead of an empty "codes
// seen:".
func TestCheckWorkTypesNoLines(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, nil)
	e.Emu.AddRequests(emulator.SeedRequest{ClaimNumber: sampleshop.ClaimNoLines})
	r := e.run("check", "--config", e.Conf)
	if r.Code != exitOK {
		t.Fatalf("check: %s", r)
	}
	l := checkLine(r.Stdout, "work types")
	if strings.HasSuffix(strings.TrimSpace(l), "codes seen:") || !strings.Contains(l, "no lines yet on 1 job (0 tracked, 1 found for pending requests)") {
		t.Errorf("work types line %q, want it to say the job has no lines yet", l)
	}
}

// TestStatusShowsRetryError: a request the daemon tries again on its own
// is shown with the whole error of its last attempt and when the next is
// due; before, status showed only the reason "retrying", and the details
// of a needs-person request only.
func TestStatusShowsRetryError(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, nil)
	e.Emu.AddRequests(emulator.SeedRequest{ClaimNumber: sampleshop.ClaimDraft})
	e.Emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultStatus, Status: 503})
	if r := e.run("once", "--config", e.Conf); r.Code != exitOK {
		t.Fatalf("once: %s", r)
	}
	r := e.run("status", "--config", e.Conf)
	if r.Code != exitOK {
		t.Fatalf("status: %s", r)
	}
	for _, want := range []string{"tried again on its own", "(job " + sampleshop.JobDraft + ", reserved): a remote call failed for now; next attempt in ", "last error: ", "503"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.Stdout)
		}
	}
}

// TestLockWaitMessage: while the shop's application holds the job counter
// in a transaction left open, create_job waits until shop.query_timeout
// (shop.lock_wait set above it); the request then waits for its retry
// with an error that names the setting and the holder's connection (not
// a bare "context deadline exceeded"), in the log and in status, and the
// pass goes on. It is not held as shop_lock: shop.query_timeout ends a
// slow statement too, and only the server's own lock wait says "lock".
func TestLockWaitMessage(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, func(fc *config.File) { fc.Shop.QueryTimeout, fc.Shop.LockWait = time.Second, 30*time.Second })
	e.Emu.AddRequests(emulator.SeedRequest{ClaimNumber: "CLM-LOCKED", Vehicle: json.RawMessage(`{"registration":"LK01"}`)})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	shop, holder := shopdbtest.Hold(t, ctx, e.DB.SQL.DB, "BEGIN", "UPDATE counters SET next_val = next_val WHERE name = 'job'")
	r := e.run("once", "--config", e.Conf)
	if _, err := shop.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	want := []string{"shop.query_timeout (1s) ran out", fmt.Sprintf("a lock held by connection %d", holder), fmt.Sprintf("KILL %d", holder)}
	for _, w := range want {
		if !strings.Contains(r.Stderr, w) {
			t.Errorf("once's log lacks %q:\n%s", w, r)
		}
	}
	st := e.run("status", "--config", e.Conf)
	shown := strings.Join(strings.Fields(st.Stdout), " ")
	for _, w := range append(want, "reserve_failed", "finding or creating the shop's job failed") {
		if !strings.Contains(shown, w) {
			t.Errorf("status lacks %q:\n%s", w, st)
		}
	}
	if strings.Contains(shown, "shop_lock") {
		t.Errorf("status holds a request ended by shop.query_timeout as shop_lock:\n%s", st)
	}
}

// TestRetryFreshInstall: retry on a database where quotesync never ran
// says the request is not tracked because the state tables do not exist
// yet, not "Error 1146: Table … doesn't exist", and creates nothing.
func TestRetryFreshInstall(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, nil)
	r := e.run("retry", "1001", "--config", e.Conf)
	if r.Code != exitFailure || !strings.Contains(r.Stderr, "request 1001 is not tracked: quotesync's state tables do not exist yet") || strings.Contains(r.Stderr, "1146") {
		t.Errorf("retry on a fresh install: %s", r)
	}
	var n int
	if err := e.DB.SQL.Get(&n, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE 'quotesync%'"); err != nil || n != 0 {
		t.Errorf("retry on a fresh install left %d quotesync tables (%v)", n, err)
	}
}
