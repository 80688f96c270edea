package sync_test

import (
	"context"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
	qsync "github.com/quotesync/quotesync/sync"
)

// askNow sends one request for a pass at once and returns its answer.
func askNow(t *testing.T, now chan<- qsync.NowRequest) qsync.NowAnswer {
	t.Helper()
	reply := make(chan qsync.NowAnswer, 1)
	select {
	case now <- qsync.NowRequest{Reply: reply}:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not read the request")
	}
	select {
	case a := <-reply:
		return a
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not answer the request")
	}
	return qsync.NowAnswer{}
}

// A request for a pass at once starts exactly one pass outside the
// schedule; while a pass runs, a request is answered "running" and starts
// none; a standby instance says so.
func TestRunNow(t *testing.T) {
	r := newRig(t, rigOptions{sync: func(c *qsync.Config) { c.Schedule = "@every 1h" }})
	now := make(chan qsync.NowRequest)
	ctx, stop := context.WithCancel(r.ctx)
	done := make(chan error, 1)
	go func() {
		done <- r.engine.Run(ctx, qsync.RunOptions{Lock: lockFunc(r.st), SkipFirst: true, Now: now})
	}()
	passes := func() int { return r.seen(qsync.EventPassDone) }
	lists := func() int { return r.emu.Calls()[emulator.RouteListRequests] }

	if a := askNow(t, now); a.Outcome != qsync.NowStarted {
		t.Fatalf("first request: %+v, want started", a)
	}
	waitFor(t, "the pass asked for", 10*time.Second, func() bool { return passes() == 1 })

	r.emu.AddFault(emulator.Fault{Route: emulator.RouteListRequests, Action: emulator.FaultLatency, Latency: 1500 * time.Millisecond, Count: 1})
	before := time.Now()
	if a := askNow(t, now); a.Outcome != qsync.NowStarted {
		t.Fatalf("second request: %+v, want started", a)
	}
	waitFor(t, "the slow pass to list", 5*time.Second, func() bool { return lists() == 2 })
	a := askNow(t, now)
	if a.Outcome != qsync.NowRunning || a.Since.Before(before.Add(-time.Second)) || a.Since.After(time.Now()) {
		t.Fatalf("request during a pass: %+v, want running since about %s", a, before.Format(time.StampMilli))
	}
	waitFor(t, "the slow pass to end", 10*time.Second, func() bool { return passes() == 2 })
	time.Sleep(300 * time.Millisecond)
	if got, want := passes(), 2; got != want {
		t.Errorf("%d passes after two started and one refused, want %d", got, want)
	}
	if got, want := lists(), 2; got != want {
		t.Errorf("%d pending lists, want %d", got, want)
	}

	t.Run("Standby", func(t *testing.T) {
		e2, db2, events2 := r.second()
		now2 := make(chan qsync.NowRequest)
		ctx2, stop2 := context.WithCancel(r.ctx)
		done2 := make(chan error, 1)
		go func() {
			done2 <- e2.Run(ctx2, qsync.RunOptions{Lock: lockFunc(db2), Now: now2})
		}()
		waitFor(t, "the second instance to stand by", 10*time.Second, func() bool { return len(events2.of(qsync.EventStandby)) == 1 })
		if a := askNow(t, now2); a.Outcome != qsync.NowStandby {
			t.Errorf("request to the standby: %+v, want standby", a)
		}
		stop2()
		if err := <-done2; err != nil {
			t.Fatal(err)
		}
		if got := len(events2.of(qsync.EventPassDone)); got != 0 {
			t.Errorf("the standby ran %d passes", got)
		}
	})

	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
	}
}
