package sync_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// lockFunc adapts a store's lock to the scheduler, as cmd does.
func lockFunc(db *store.Store) qsync.LockFunc {
	return func(ctx context.Context) (qsync.Lease, error) {
		l, err := db.AcquireLock(ctx)
		if err != nil {
			return nil, err
		}
		return l, nil
	}
}

// second assembles another daemon on the rig's shop database and
// emulator, with its own pool, client and events: the other half of an HA
// pair.
func (r *rig) second() (*qsync.Engine, *store.Store, *recorder) {
	r.t.Helper()
	events := &recorder{}
	qd, err := qsync.Open(r.ctx, qsync.Settings{Insurers: []qsync.Insurer{{Name: qsync.DefaultInsurer,
		Remote: remote.Config{BaseURL: r.url, RateLimit: -1}, Tokens: remote.StaticToken(testToken)}}, Shop: r.d.Config(), Sync: r.engine.Config()},
		qsync.OpenOptions{Migrate: true, Observers: []qsync.Observer{events}})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { qd.Close() })
	return qd.Engine, qd.Store, events
}

// interrupted counts the passes that ended interrupted.
func interrupted(rc *recorder) int {
	n := 0
	for _, ev := range rc.of(qsync.EventPassDone) {
		if errors.Is(ev.Err, qsync.ErrInterrupted) {
			n++
		}
	}
	return n
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// allAccepted reports whether every request id is accepted on the remote.
func (r *rig) allAccepted(ids []string) bool {
	st := r.emu.State()
	for _, id := range ids {
		if rs, ok := st.Request(id); !ok || rs.Status != emulator.RequestAccepted {
			return false
		}
	}
	return true
}

// Two instances on one shop database: only the holder of the lock works;
// when it stops, the standby takes over. Every request is accepted once.
func TestRunLeadership(t *testing.T) {
	r := newRig(t, rigOptions{sync: func(c *qsync.Config) { c.Schedule = "@every 1s" }})
	e2, db2, events2 := r.second()

	ctx1, stop1 := context.WithCancel(r.ctx)
	ctx2, stop2 := context.WithCancel(r.ctx)
	defer stop2()
	done1, done2 := make(chan error, 1), make(chan error, 1)
	ticks2 := make(chan qsync.Tick, 100)
	go func() { done1 <- r.engine.Run(ctx1, qsync.RunOptions{Lock: lockFunc(r.st)}) }()
	waitFor(t, "the first instance to lead", 10*time.Second, func() bool { return r.seen(qsync.EventLeader) == 1 })
	go func() {
		done2 <- e2.Run(ctx2, qsync.RunOptions{Lock: lockFunc(db2), OnTick: func(tk qsync.Tick) {
			select {
			case ticks2 <- tk:
			default:
			}
		}})
	}()
	tk := <-ticks2
	if tk.Leader || tk.Ran {
		t.Fatalf("second instance's first tick %+v, want a standby tick", tk)
	}

	var ids []string
	for i := range 4 {
		ids = append(ids, r.seed(fmt.Sprintf("CLM-30%02d", i))...)
	}
	waitFor(t, "the leader to accept every request", 20*time.Second, func() bool { return r.allAccepted(ids) })
	if got := len(events2.of(qsync.EventAccepted)); got != 0 {
		t.Errorf("the standby accepted %d requests", got)
	}

	stop1()
	select {
	case err := <-done1:
		if err != nil {
			t.Fatalf("Run returned %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
	more := r.seed("CLM-3099")
	waitFor(t, "the standby to take over", 30*time.Second, func() bool { return r.allAccepted(more) })
	if got := len(events2.of(qsync.EventLeader)); got != 1 {
		t.Errorf("the standby reported leadership %d times", got)
	}
	stop2()
	<-done2

	accepts := map[string]int{}
	for _, h := range r.emu.State().History {
		if h.Kind == emulator.HistoryAccept {
			accepts[h.RequestID]++
		}
	}
	for _, id := range append(ids, more...) {
		if accepts[id] != 1 {
			t.Errorf("request %s accepted %d times", id, accepts[id])
		}
	}
}

// Drain stops scheduling and returns after the pass in progress finished
// on its own, not cancelled.
func TestRunDrain(t *testing.T) {
	r := newRig(t, rigOptions{sync: func(c *qsync.Config) { c.Schedule = "@every 1h" }})
	ids := r.seed("CLM-4001")
	// Hold the accept so that the drain arrives while the pass runs.
	r.emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultLatency, Latency: 500 * time.Millisecond})
	drain := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- r.engine.Run(r.ctx, qsync.RunOptions{Drain: drain}) }()
	waitFor(t, "the first pass to start", 10*time.Second, func() bool { _, busy := r.engine.Busy(); return busy })
	close(drain)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, busy := r.engine.Busy(); busy {
		t.Error("Run returned while a pass was running")
	}
	if !r.allAccepted(ids) || r.row(ids[0]).Phase != qsync.PhaseAccepted {
		t.Errorf("the drained pass did not finish its accept: phase %s", r.row(ids[0]).Phase)
	}
	if got := interrupted(r.events); got != 0 {
		t.Error("the pass was cancelled, not drained")
	}
}

// Cancelling Run cancels the pass in progress, and so does a drain still
// waiting for it after DrainWait (a reload must not wait for one slow
// service): what it did is recorded and the next pass takes over.
func TestRunCancel(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(cancel context.CancelFunc, drain chan struct{})
	}{
		{"Cancel", func(cancel context.CancelFunc, _ chan struct{}) { cancel() }},
		{"DrainWait", func(_ context.CancelFunc, drain chan struct{}) { close(drain) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, rigOptions{sync: func(c *qsync.Config) { c.Schedule = "@every 1h" }})
			r.seed("CLM-5001")
			r.emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultLatency, Latency: 30 * time.Second})
			ctx, cancel := context.WithCancel(r.ctx)
			defer cancel()
			drain := make(chan struct{})
			done := make(chan error, 1)
			ticks := make(chan qsync.Tick, 8)
			go func() {
				done <- r.engine.Run(ctx, qsync.RunOptions{Drain: drain, DrainWait: 300 * time.Millisecond,
					OnTick: func(t qsync.Tick) { ticks <- t }})
			}()
			waitFor(t, "the accept to be sent", 10*time.Second, func() bool { return r.emu.Calls()[emulator.RouteAccept] == 1 })
			start := time.Now()
			tc.stop(cancel, drain)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("Run took %s to stop; the pass should be cancelled", took)
			}
			if got := interrupted(r.events); got != 1 {
				t.Errorf("interrupted pass reported %d times", got)
			}
			// Its tick says it was cut short, whatever else it reports
			// (the run command passes its insurer again after a reload).
			close(ticks)
			cut := false
			for tk := range ticks {
				cut = cut || (tk.Ran && tk.Summary.Interrupted)
			}
			if !cut {
				t.Error("no tick of the cancelled pass says it was interrupted")
			}
			// The row stays reserved: the next pass repairs it.
			rows, err := r.st.ListRequests(r.ctx, store.ListQuery{})
			if err != nil || len(rows) != 1 || rows[0].Phase != qsync.PhaseReserved {
				t.Fatalf("after cancellation: %v rows (%v)", rows, err)
			}
			r.emu.ClearFaults()
			r.pass()
			if got := r.row(rows[0].RequestID).Phase; got != qsync.PhaseAccepted {
				t.Errorf("after the next pass: %s, want accepted", got)
			}
		})
	}
}
