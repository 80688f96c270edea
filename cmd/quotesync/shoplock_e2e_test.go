package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// The shop's own locks, end to end: the shop's program holds the job
// counter in an open transaction (a dialog left open) while the daemon
// runs. One new request needs create_job and so the counter; another
// request's job, already drafted, is marked final meanwhile.

// shopLockRun is one run of the scenario and what it saw.
type shopLockRun struct {
	holder int64 // the connection id of the shop's open transaction
	// toSubmit is, for the other jobs, from marking it final to its
	// submit, the lock held: the first marked as the daemon first waits
	// for the lock, the second halfway through the hold; passesSubmit
	// counts the passes done in that time.
	toSubmit      [2]time.Duration
	passesSubmit  [2]int
	toAccept      time.Duration // from releasing the lock to the waiting request's accept
	passesAccept  int           // passes done in that time
	status        string        // `status` while the lock was held ("" when not asked)
	newJobs       int           // shop jobs of the waiting request's claim at the end
	counterBefore int64         // the job counter before the lock, and at the end
	counterAfter  int64
	waitingID     string // the waiting request
}

// shopLockOptions tunes a run: the lock held hold long; lockWait is
// shop.lock_wait ("" leaves the key out: the default, and a binary that
// predates it runs too); defaults keeps the defaults of
// shop.query_timeout (the harness sets 10s) and of the retry backoff
// (20ms to 200ms); askStatus runs `status` while held.
type shopLockOptions struct {
	hold      time.Duration
	lockWait  string
	defaults  bool
	askStatus bool
}

func runShopLock(tb testing.TB, o shopLockOptions) shopLockRun {
	tb.Helper()
	e := newE2E(tb, e2eOptions{LogLevel: "debug"})
	e2eConfigure(e, func(doc map[string]any) {
		shop := doc["shop"].(map[string]any)
		if o.lockWait != "" {
			shop["lock_wait"] = o.lockWait
		}
		if o.defaults {
			delete(shop, "query_timeout")
			sync := doc["sync"].(map[string]any)
			delete(sync, "retry_backoff_min")
			delete(sync, "retry_backoff_max")
		}
	})
	ctx := e.ctx()
	var run shopLockRun

	// The other requests: accepted and their Drafts pushed before the lock.
	var others [2]string
	for i := range others {
		claim := fmt.Sprintf("CLM-LOCK-OTHER-%d", i)
		others[i] = e.createJob(claim)
		e.addLine(others[i], 2*i+1)
		e.addLine(others[i], 2*i+2)
		e.seed(claim, "")
	}
	e.mustOnce()
	for _, job := range others {
		if q, ok := e2eQuote(e.Emu.State(), job); !ok || q.Status == emulator.StatusSubmitted {
			tb.Fatalf("job %s before the lock: quote %+v (%v), want a Draft", job, q, ok)
		}
	}

	// The shop's program locks the job counter and leaves the dialog open.
	if err := e.sql.GetContext(ctx, &run.counterBefore, "SELECT next_val FROM counters WHERE name = 'job'"); err != nil {
		tb.Fatal(err)
	}
	var shop *sql.Conn
	shop, run.holder = shopdbtest.Hold(tb, ctx, e.sql.DB, "BEGIN", "SELECT next_val FROM counters WHERE name = 'job' FOR UPDATE")
	locked := time.Now()
	released := false
	release := func() {
		if !released {
			released = true
			if _, err := shop.ExecContext(ctx, "ROLLBACK"); err != nil {
				tb.Fatal(err)
			}
		}
	}
	defer release()

	run.waitingID = e.seed("CLM-LOCK-NEW", "LCK001") // no job: create_job needs the counter
	p := e.start("run")

	// The daemon is behind the lock: one of its sessions waits for it.
	// Asked every 300ms: the server refreshes what information_schema
	// shows of InnoDB's transactions only after 100ms without a reader.
	var asked time.Time
	e2eWaitFor(tb, p, "a session of quotesync's waiting for the shop's lock", func() bool {
		if time.Since(asked) < 300*time.Millisecond {
			return false
		}
		asked = time.Now()
		return e2eLockWaiters(tb, e.sql, e.DB.Config().Database) > 0
	})
	submit := func(i int) {
		if err := e.Shop.SetFinal(ctx, others[i], true); err != nil {
			tb.Fatal(err)
		}
		final, passes := time.Now(), e2ePassesDone(p)
		e2eWaitFor(tb, p, "the submit of job "+others[i], func() bool {
			q, ok := e2eQuote(e.Emu.State(), others[i])
			return ok && q.Status == emulator.StatusSubmitted
		})
		run.toSubmit[i], run.passesSubmit[i] = time.Since(final), e2ePassesDone(p)-passes
	}
	submit(0)

	if o.askStatus {
		// Another pass or two behind the lock first: the request stays
		// held, each attempt counted.
		e2eWaitFor(tb, p, "two attempts of the waiting request", func() bool {
			rows, err := e.stateRows(e.sql)
			return err == nil && rows[run.waitingID].Attempts >= 2
		})
		run.status = e.verb("status").Output
	}
	if rest := o.hold/2 - time.Since(locked); rest > 0 {
		time.Sleep(rest)
	}
	submit(1)
	if rest := o.hold - time.Since(locked); rest > 0 {
		time.Sleep(rest)
	}
	if got := e2eJobsOf(tb, e, "CLM-LOCK-NEW"); got != 0 {
		tb.Errorf("%d jobs for the waiting request's claim while the counter is locked, want 0", got)
	}
	release()
	freed, passes := time.Now(), e2ePassesDone(p)
	e2eWaitFor(tb, p, "the accept of request "+run.waitingID, func() bool {
		r, ok := e.Emu.State().Request(run.waitingID)
		return ok && r.ReferenceID != ""
	})
	run.toAccept, run.passesAccept = time.Since(freed), e2ePassesDone(p)-passes
	if code := p.stop(30 * time.Second); code != 0 {
		tb.Errorf("run exited %d\n%s", code, e2eTail(p.out.String(), 20))
	}
	run.newJobs = e2eJobsOf(tb, e, "CLM-LOCK-NEW")
	if err := e.sql.GetContext(ctx, &run.counterAfter, "SELECT next_val FROM counters WHERE name = 'job'"); err != nil {
		tb.Fatal(err)
	}
	e.checkInvariants(true, "after the lock was released")
	return run
}

// TestE2EShopLockHoldsOneRequest: while the shop's program holds the job
// counter for several passes, the request that needs create_job waits
// (status names the holding connection) and the pass goes on: another
// job marked final meanwhile is submitted within two passes. Once the
// lock is released the waiting request is accepted with exactly one job,
// and no job is left without its request. Before shop.lock_wait, every
// pass waited shop.query_timeout on create_job and the submit with it.
func TestE2EShopLockHoldsOneRequest(t *testing.T) {
	t.Parallel()
	run := runShopLock(t, shopLockOptions{hold: 10 * time.Second, lockWait: "1s", askStatus: true})
	t.Logf("lock held 10s, shop.lock_wait 1s: submits %v after final (%v passes done), accept %s after release (%d passes done)",
		run.toSubmit, run.passesSubmit, run.toAccept.Round(time.Millisecond), run.passesAccept)
	for i, n := range run.passesSubmit {
		if n > 2 {
			t.Errorf("final job %d was submitted after %d passes (%s), want within two while the lock is held", i, n, run.toSubmit[i])
		}
	}
	if run.passesAccept > 2 {
		t.Errorf("the waiting request was accepted %d passes (%s) after the release, want within two", run.passesAccept, run.toAccept)
	}
	for _, want := range []string{run.waitingID, "shop_lock", fmt.Sprintf("connection %d (", run.holder),
		"a transaction left open", fmt.Sprintf("KILL %d", run.holder)} {
		if !strings.Contains(run.status, want) {
			t.Errorf("status while the lock was held does not say %q:\n%s", want, run.status)
		}
	}
	if run.newJobs != 1 || run.counterAfter != run.counterBefore+1 {
		t.Errorf("after the release: %d jobs for the waiting request's claim, counter %d → %d; want one job, one number",
			run.newJobs, run.counterBefore, run.counterAfter)
	}
}

// BenchmarkShopLockStall measures, with the defaults (shop.lock_wait 5s,
// shop.query_timeout 30s, the retry backoff from 1m), a pass every
// second and the lock held 45 s, the time from marking another job final
// to its submit (s-to-submit: as the daemon first waits for the lock;
// s-to-submit-later: 22.5 s into the hold), and from the release to the
// waiting request's accept (docs/benchmarks.md). About a minute per iteration;
// QUOTESYNC_BIN may name an older binary to measure it the same way.
func BenchmarkShopLockStall(b *testing.B) {
	var submit, submitLater, accept time.Duration
	for b.Loop() {
		run := runShopLock(b, shopLockOptions{hold: 45 * time.Second, defaults: true})
		submit += run.toSubmit[0]
		submitLater += run.toSubmit[1]
		accept += run.toAccept
	}
	n := float64(b.N)
	b.ReportMetric(submit.Seconds()/n, "s-to-submit")
	b.ReportMetric(submitLater.Seconds()/n, "s-to-submit-later")
	b.ReportMetric(accept.Seconds()/n, "s-to-accept")
}

// e2eQuote is the Estimate quote of job on the remote.
func e2eQuote(st emulator.State, job string) (emulator.QuoteState, bool) {
	j, ok := st.Job(job)
	if !ok {
		return emulator.QuoteState{}, false
	}
	return j.Quote("Estimate")
}

// e2ePassesDone counts the passes the daemon has finished so far (its
// debug log says each).
func e2ePassesDone(p *e2eProc) int {
	return len(e2eLogLines(p.out.String(), "pass done")) + len(e2eLogLines(p.out.String(), "pass failed"))
}

// e2eLockWaiters counts the sessions in database db that wait for a lock.
func e2eLockWaiters(tb testing.TB, x interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}, db string) int {
	tb.Helper()
	var n int
	err := x.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM information_schema.INNODB_TRX t
JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
WHERE t.trx_state = 'LOCK WAIT' AND p.DB = ?`, db).Scan(&n)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// e2eJobsOf counts the shop's jobs of claim.
func e2eJobsOf(tb testing.TB, e *e2eEnv, claim string) int {
	tb.Helper()
	return e2eCount(e, "SELECT COUNT(*) FROM jobs WHERE claim_number = ?", claim)
}
