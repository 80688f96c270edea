package sync_test

import (
	"context"
	"errors"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/quotesync/quotesync/shopdb/sampleshop"
	qsync "github.com/quotesync/quotesync/sync"
)

// openWith assembles the pair's daemon again with obs after its
// recorder.
func (p *pair) openWith(obs ...qsync.Observer) {
	p.t.Helper()
	core, logs := observer.New(zap.DebugLevel)
	p.logs = logs
	qd, err := qsync.Open(p.ctx, p.set, qsync.OpenOptions{Migrate: true, Log: zap.New(core),
		Observers: append([]qsync.Observer{p.events}, obs...)})
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { qd.Close() })
	p.qd = qd
}

// panicky is an observer with a bug: it panics on every event of one kind
// of one insurer.
type panicky struct {
	insurer string
	kind    qsync.EventKind
	n       atomic.Int32
}

func (o *panicky) Observe(ev qsync.Event) {
	if ev.Insurer == o.insurer && ev.Kind == o.kind {
		o.n.Add(1)
		panic("panicky observer: " + string(ev.Kind))
	}
}

// panicLogged reports whether a recovered panic was logged at error,
// naming insurer, with a stack that shows where it happened.
func (p *pair) panicLogged(insurer string) bool {
	for _, l := range p.logs.FilterLevelExact(zap.ErrorLevel).All() {
		m := l.ContextMap()
		stack, _ := m["stack"].(string)
		if strings.HasPrefix(l.Message, "pass panicked") && m["insurer"] == insurer &&
			strings.Contains(stack, "panicky") && strings.Contains(stack, "panic_test.go") {
			return true
		}
	}
	return false
}

// TestInsurerPassPanicsOnce: an observer panics on bb's accept, in the
// pass's worker: the pass of bb fails with the panic, named, logged at
// error with bb and the stack; aa's pass of the same run does its work,
// and bb's next pass goes on from what the panicking one committed.
func TestInsurerPassPanicsOnce(t *testing.T) {
	p := newPair(t, nil)
	bug := &panicky{insurer: "bb", kind: qsync.EventAccepted}
	p.openWith(bug)
	p.seed("aa", "7301", sampleshop.ClaimDraft)
	p.seed("bb", "7301", "CLM-BB-1")

	s, err := p.qd.Once(p.ctx)
	var ie *qsync.InsurerError
	var pe *qsync.PanicError
	if !errors.As(err, &ie) || ie.Insurer != "bb" || !errors.As(err, &pe) || strings.Contains(err.Error(), "insurer aa") {
		t.Fatalf("Once: %v; want bb's pass failed with the panic, aa's not", err)
	}
	if bug.n.Load() != 1 {
		t.Errorf("the observer panicked %d times, want once", bug.n.Load())
	}
	if got := p.row("aa", "7301").Phase; got != qsync.PhaseDrafted || s.Drafted != 1 {
		t.Errorf("aa's 7301 is %s (summary %+v), want drafted by the same run", got, s)
	}
	if got := p.row("bb", "7301").Phase; got != qsync.PhaseAccepted {
		t.Errorf("bb's 7301 is %s: the accept committed before its event should stay", got)
	}
	if !p.panicLogged("bb") {
		t.Errorf("no error line of bb's panic with its stack: %v", p.logs.All())
	}
	var bbDone []qsync.Event
	for _, ev := range p.events.of(qsync.EventPassDone) {
		if ev.Insurer == "bb" {
			bbDone = append(bbDone, ev)
		}
	}
	if len(bbDone) != 1 || !errors.As(bbDone[0].Err, &pe) {
		t.Errorf("bb's pass done events: %+v; want one, failed with the panic", bbDone)
	}
	if _, err := p.qd.Once(p.ctx); err != nil {
		t.Errorf("the run after the panic: %v", err)
	}
}

// TestInsurerPassPanicsRun: under the scheduler (Daemon.Run), an
// observer panics at the end of each of bb's passes, on the pass's own
// goroutine: the daemon goes on, aa's passes succeed every second, each
// of bb's ticks reports the panic, and /healthz names bb as unhealthy
// while the daemon stays healthy.
func TestInsurerPassPanicsRun(t *testing.T) {
	p := newPair(t, func(s *qsync.Settings) { s.Sync.Schedule = "@every 1s" })
	bug := &panicky{insurer: "bb", kind: qsync.EventPassDone}
	p.openWith(bug)
	var prog qsync.Progress
	prog.Restart(time.Now())
	var mu gosync.Mutex
	ticks := map[string][]qsync.Tick{}
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- p.qd.Run(ctx, qsync.RunOptions{Lock: p.qd.Lock(), OnTick: func(tk qsync.Tick) {
			prog.Tick(tk, time.Now())
			mu.Lock()
			ticks[tk.Insurer] = append(ticks[tk.Insurer], tk)
			mu.Unlock()
		}})
	}()
	time.Sleep(1500 * time.Millisecond)
	p.seed("aa", "7301", sampleshop.ClaimDraft)
	waitFor(t, "aa's 7301 drafted while bb's passes panic", 10*time.Second, func() bool {
		r, err := p.qd.Store.Insurer("aa").Request(p.ctx, "7301")
		return err == nil && r.Phase == qsync.PhaseDrafted
	})
	time.Sleep(1500 * time.Millisecond) // bb's start is older than the 2s health_max_age
	ok, rep := p.qd.Health(time.Now(), &prog, 2*time.Second, nil)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	var pe *qsync.PanicError
	for _, tk := range ticks["bb"] {
		if !tk.Ran || !errors.As(tk.Err, &pe) || pe.Insurer != "bb" {
			t.Errorf("bb's tick %+v; want a pass failed with the panic", tk)
		}
	}
	aaOK := 0
	for _, tk := range ticks["aa"] {
		if tk.Ran && tk.Err == nil {
			aaOK++
		}
	}
	if len(ticks["bb"]) < 2 || aaOK < 2 || int(bug.n.Load()) != len(ticks["bb"]) {
		t.Errorf("ticks: bb %d (panics %d), aa %d good; want several of each, one panic per bb pass", len(ticks["bb"]), bug.n.Load(), aaOK)
	}
	if !p.panicLogged("bb") {
		t.Error("no error line of bb's panic with its stack")
	}
	if !ok || len(rep.Insurers) != 2 || rep.Insurers[0].Status != "ok" || rep.Insurers[1].Status != "unhealthy" ||
		!strings.Contains(rep.Insurers[1].Reason, "panicked") || !strings.Contains(rep.Reason, "insurer bb") {
		t.Errorf("/healthz: %v %+v; want healthy, naming bb's panicking passes", ok, rep)
	}
}
