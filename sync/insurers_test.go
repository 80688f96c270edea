package sync_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// pair is the daemon assembled by qsync.Open with two insurers, aa and bb,
// each an emulator of its own over real HTTP with its own token, on one
// sample shop on the real MariaDB.
type pair struct {
	t      *testing.T
	ctx    context.Context
	d      *shopdbtest.Database
	shop   *sampleshop.Shop
	emu    map[string]*emulator.Emulator
	url    map[string]string
	set    qsync.Settings
	qd     *qsync.Daemon
	events *recorder
	logs   *observer.ObservedLogs
}

// pairNames are the pair's insurers, in the order of its settings.
var pairNames = []string{"aa", "bb"}

func pairToken(name string) string { return "token-of-" + name }

// newPair builds the pair; edit changes the settings before Open.
func newPair(t *testing.T, edit func(*qsync.Settings)) *pair {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	p := &pair{t: t, ctx: ctx, emu: map[string]*emulator.Emulator{}, url: map[string]string{}, events: &recorder{}}
	p.d = shopdbtest.NewSampleShop(t)
	p.shop = p.d.Shop()
	sc := qsync.DefaultConfig()
	sc.RetryBackoffMin, sc.RetryBackoffMax = time.Minute, 10*time.Minute
	p.set = qsync.Settings{Shop: p.d.Config(), Sync: sc}
	for _, name := range pairNames {
		emu, err := emulator.New(emulator.Options{Token: pairToken(name), Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(emu)
		t.Cleanup(srv.Close)
		p.emu[name], p.url[name] = emu, srv.URL
		p.set.Insurers = append(p.set.Insurers, qsync.Insurer{Name: name, Key: "remotes[" + name + "]",
			Remote: remote.Config{BaseURL: srv.URL, RateLimit: -1, MaxAttempts: 2, Timeout: 5 * time.Second,
				BackoffInitial: time.Millisecond, BackoffMax: 20 * time.Millisecond},
			Tokens: remote.StaticToken(pairToken(name))})
	}
	if edit != nil {
		edit(&p.set)
	}
	p.open()
	return p
}

// open assembles the daemon from p.set, as a start does.
func (p *pair) open() {
	p.t.Helper()
	qd, err := p.tryOpen()
	if err != nil {
		p.t.Fatal(err)
	}
	p.qd = qd
}

func (p *pair) tryOpen() (*qsync.Daemon, error) {
	core, logs := observer.New(zap.DebugLevel)
	p.logs = logs
	qd, err := qsync.Open(p.ctx, p.set, qsync.OpenOptions{Migrate: true, Log: zap.New(core), Observers: []qsync.Observer{p.events}})
	if err == nil {
		p.t.Cleanup(func() { qd.Close() })
	}
	return qd, err
}

// seed adds a pending request with its id and claim to insurer's service.
func (p *pair) seed(insurer, id, claim string) {
	p.emu[insurer].AddRequests(emulator.SeedRequest{ID: id, ClaimNumber: claim, Vehicle: json.RawMessage(`{"registration":"AB12 CDE"}`)})
}

// row reads insurer's state row of a request.
func (p *pair) row(insurer, id string) store.Request {
	p.t.Helper()
	r, err := p.qd.Store.Insurer(insurer).Request(p.ctx, id)
	if err != nil {
		p.t.Fatalf("read %s's state row %s: %v", insurer, id, err)
	}
	return r
}

// remoteRequest is a request as insurer's service holds it.
func (p *pair) remoteRequest(insurer, id string) emulator.RequestState {
	p.t.Helper()
	rs, ok := p.emu[insurer].State().Request(id)
	if !ok {
		p.t.Fatalf("%s's service has no request %s", insurer, id)
	}
	return rs
}

// quote is the Estimate of job at insurer's service.
func (p *pair) quote(insurer, job string) (emulator.QuoteState, bool) {
	j, ok := p.emu[insurer].State().Job(job)
	if !ok {
		return emulator.QuoteState{}, false
	}
	return j.Quote("Estimate")
}

// writes counts the remote writes insurer's service took.
func (p *pair) writes(insurer string) int {
	n := 0
	for route, c := range p.emu[insurer].Calls() {
		if route != emulator.RouteListRequests {
			n += c
		}
	}
	return n
}

// TestInsurersCollidingRequestIDs: both services send request 7301; each
// is tracked under its insurer with its own job, accepted at its own
// service with that job as referenceId, its events and log lines carrying
// the insurer. A claim both services send finds the same shop job: the
// first to reserve it holds it, the other waits (a job number is held by
// one live request across all insurers). An idle pass writes nothing.
func TestInsurersCollidingRequestIDs(t *testing.T) {
	p := newPair(t, nil)
	p.seed("aa", "7301", sampleshop.ClaimDraft)
	p.seed("bb", "7301", "CLM-BB-1")
	if _, err := p.qd.Once(p.ctx); err != nil {
		t.Fatalf("first pass: %v", err)
	}
	a, b := p.row("aa", "7301"), p.row("bb", "7301")
	if a.Insurer != "aa" || b.Insurer != "bb" {
		t.Fatalf("rows of 7301 carry insurers %q and %q", a.Insurer, b.Insurer)
	}
	newJob, err := p.shop.FindJob(p.ctx, "CLM-BB-1")
	if err != nil || newJob == "" {
		t.Fatalf("create_job made no job for bb's request: %q, %v", newJob, err)
	}
	if a.JobNumber != sampleshop.JobDraft || b.JobNumber != newJob || a.JobNumber == b.JobNumber {
		t.Fatalf("7301's jobs: aa %q, bb %q; want %s and bb's own new job %s", a.JobNumber, b.JobNumber, sampleshop.JobDraft, newJob)
	}
	if a.Phase != qsync.PhaseDrafted || b.Phase != qsync.PhaseAccepted {
		t.Errorf("phases: aa %s (want drafted: its job has lines), bb %s (want accepted: no lines yet)", a.Phase, b.Phase)
	}
	for ins, job := range map[string]string{"aa": a.JobNumber, "bb": b.JobNumber} {
		if rs := p.remoteRequest(ins, "7301"); rs.Status != emulator.RequestAccepted || rs.ReferenceID != job {
			t.Errorf("%s's service holds 7301 as %+v, want accepted with referenceId %s", ins, rs, job)
		}
	}
	if _, ok := p.quote("bb", a.JobNumber); ok {
		t.Errorf("aa's job %s reached bb's service", a.JobNumber)
	}
	rows, err := p.qd.Store.RequestsByID(p.ctx, "7301")
	if err != nil || len(rows) != 2 || rows[0].Insurer != "aa" || rows[1].Insurer != "bb" {
		t.Errorf("RequestsByID(7301) = %d rows, %v; want aa's and bb's", len(rows), err)
	}
	for _, ins := range pairNames {
		evs, err := p.qd.Store.Insurer(ins).Events(p.ctx, "7301", 0)
		if err != nil || len(evs) == 0 {
			t.Fatalf("%s's events of 7301: %d, %v", ins, len(evs), err)
		}
		for _, ev := range evs {
			if ev.Insurer != ins {
				t.Errorf("%s's timeline of 7301 holds an event of %q: %+v", ins, ev.Insurer, ev)
			}
		}
		n := p.logs.FilterMessage("request accepted").FilterField(zap.String("insurer", ins)).FilterField(zap.String("request", "7301")).Len()
		if n != 1 {
			t.Errorf("%d log lines \"request accepted\" of %s's 7301, want 1", n, ins)
		}
	}
	for _, ev := range p.events.of(qsync.EventAccepted) {
		if ev.Insurer == "" {
			t.Errorf("an accepted event without its insurer: %+v", ev)
		}
	}

	// The same claim at both services, in the same pass: one shop job,
	// held by whichever request reserved it first; the other waits,
	// naming the holder, and is not accepted.
	p.seed("aa", "7302", sampleshop.ClaimFinal)
	p.seed("bb", "9302", sampleshop.ClaimFinal)
	if _, err := p.qd.Once(p.ctx); err != nil {
		t.Fatalf("second pass: %v", err)
	}
	holder, other := [2]string{"aa", "7302"}, [2]string{"bb", "9302"}
	if p.row("bb", "9302").JobNumber == sampleshop.JobFinal {
		holder, other = other, holder
	}
	if got := p.row(holder[0], holder[1]); got.JobNumber != sampleshop.JobFinal || got.Phase != qsync.PhaseSubmitted {
		t.Errorf("%s's %s: job %q phase %s, want %s submitted", holder[0], holder[1], got.JobNumber, got.Phase, sampleshop.JobFinal)
	}
	if got := p.row(other[0], other[1]); got.JobNumber != "" || got.Phase != qsync.PhaseWaiting ||
		!strings.Contains(got.LastError, holder[1]+" of insurer "+holder[0]) {
		t.Errorf("%s's %s: job %q phase %s (%s); want waiting without a job, naming %s's %s as the holder",
			other[0], other[1], got.JobNumber, got.Phase, got.LastError, holder[0], holder[1])
	}
	if rs := p.remoteRequest(other[0], other[1]); rs.Status == emulator.RequestAccepted {
		t.Errorf("%s's %s was accepted with %s, a job %s's request holds", other[0], other[1], rs.ReferenceID, holder[0])
	}

	before := map[string]int{"aa": p.writes("aa"), "bb": p.writes("bb")}
	if _, err := p.qd.Once(p.ctx); err != nil {
		t.Fatalf("idle pass: %v", err)
	}
	for _, ins := range pairNames {
		if got := p.writes(ins) - before[ins]; got != 0 {
			t.Errorf("an idle pass made %d remote writes to %s", got, ins)
		}
	}
	if _, _, err := p.qd.Retry(p.ctx, "", "7301", "test"); !errors.Is(err, qsync.ErrAmbiguous) {
		t.Errorf("retry of 7301 without an insurer: %v, want ErrAmbiguous", err)
	}
	if _, after, err := p.qd.Retry(p.ctx, "", other[1], "test"); err != nil || after.Insurer != other[0] {
		t.Errorf("retry of %s (tracked for %s only): %+v, %v", other[1], other[0], after, err)
	}
}

// TestInsurerDownOthersWork: one insurer's service is down (every call
// answered 503, or its token refused) for ten passes, the passes of both
// run together as the daemon runs them; the other insurer's work is
// neither stopped nor delayed: accepts, Drafts and submits in the same
// pass, a change re-drafted and a final submitted across passes. The
// failing insurer is named in the pass's error and in /healthz, which
// stays healthy; a refused token is notified once, naming the insurer.
// When the service is back, the next pass does its work.
func TestInsurerDownOthersWork(t *testing.T) {
	for _, tc := range []struct {
		name string
		down func(p *pair) (restore func())
		want error
	}{
		{"Unavailable", func(p *pair) func() {
			id := p.emu["bb"].AddFault(emulator.Fault{Route: "*", Action: emulator.FaultStatus, Status: 503})
			return func() { p.emu["bb"].RemoveFault(id) }
		}, remote.ErrTemporary},
		{"TokenRefused", func(p *pair) func() {
			p.set.Insurers[1].Tokens = remote.StaticToken("a-token-bb-no-longer-takes")
			p.open()
			return func() { p.set.Insurers[1].Tokens = remote.StaticToken(pairToken("bb")); p.open() }
		}, qsync.ErrUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) { testInsurerDown(t, tc.down, tc.want) })
	}
}

func testInsurerDown(t *testing.T, down func(p *pair) func(), want error) {
	rc := newReceiver(t)
	p := newPair(t, func(s *qsync.Settings) {
		s.Notify = qsync.NotifyConfig{Webhook: qsync.WebhookConfig{URL: rc.srv.URL, Timeout: 5 * time.Second}}
	})
	p.seed("aa", "7301", sampleshop.ClaimDraft)
	p.seed("aa", "7302", sampleshop.ClaimFinal)
	p.seed("bb", "7301", "CLM-BB-1")
	restore := down(p)
	var prog qsync.Progress
	prog.Restart(time.Now().Add(-time.Hour)) // started long enough ago for a pass to be overdue
	for pass := 1; pass <= 10; pass++ {
		start := time.Now()
		s, err := p.qd.Once(p.ctx)
		var ie *qsync.InsurerError
		if !errors.As(err, &ie) || ie.Insurer != "bb" || !errors.Is(err, want) {
			t.Fatalf("pass %d: %v; want bb's failure (%v), naming bb", pass, err, want)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("pass %d took %s with bb down", pass, d)
		}
		now := time.Now()
		prog.Tick(qsync.Tick{Insurer: "aa", Leader: true, Ran: true}, now)
		prog.Tick(qsync.Tick{Insurer: "bb", Leader: true, Ran: true, Err: err}, now)
		switch pass {
		case 1:
			// aa's work of the same pass as bb's failure.
			if s.Accepted != 2 || s.Drafted != 2 || s.Submitted != 1 {
				t.Errorf("pass 1 did %+v; want aa's 2 accepts, 2 Drafts, 1 submit", s)
			}
			if got := p.row("aa", "7302").Phase; got != qsync.PhaseSubmitted {
				t.Errorf("aa's final 7302 is %s after pass 1, want submitted", got)
			}
			lines, err := p.shop.Lines(p.ctx, sampleshop.JobDraft)
			if err != nil {
				t.Fatal(err)
			}
			l := lines[0]
			l.Description += " (revised)"
			if err := p.shop.EditLine(p.ctx, l); err != nil {
				t.Fatal(err)
			}
		case 2:
			if q, _ := p.quote("aa", sampleshop.JobDraft); !strings.Contains(string(q.Body), "(revised)") {
				t.Errorf("aa's change was not re-drafted in pass 2: %s", q.Body)
			}
			if err := p.shop.SetFinal(p.ctx, sampleshop.JobDraft, true); err != nil {
				t.Fatal(err)
			}
		case 3:
			if q, _ := p.quote("aa", sampleshop.JobDraft); q.Status != "Submitted" || q.SubmitCount != 1 {
				t.Errorf("aa's 7301 is %s (submitted %d times) after pass 3, want Submitted once", q.Status, q.SubmitCount)
			}
		}
		if _, err := p.qd.Store.Insurer("bb").Request(p.ctx, "7301"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("pass %d: bb's 7301 has a row (%v) while its service cannot be listed", pass, err)
		}
	}
	ok, rep := p.qd.Health(time.Now(), &prog, 0, nil)
	if !ok || len(rep.Insurers) != 2 || rep.Insurers[0].Status != "ok" || rep.Insurers[1].Status != "unhealthy" ||
		!strings.Contains(rep.Reason, "insurer bb") || strings.Contains(rep.Reason, "insurer aa") {
		t.Errorf("/healthz with bb down: %v %+v; want healthy, naming bb as unhealthy", ok, rep)
	}
	p.qd.Outbox.Work(p.ctx)
	var auth []qsync.Notice
	for _, n := range rc.got() {
		if n.Event == qsync.NoticeAuthFailing {
			auth = append(auth, n)
		}
	}
	if wantAuth := errors.Is(want, qsync.ErrUnauthorized); wantAuth && (len(auth) != 1 || auth[0].Insurer != "bb") {
		t.Errorf("auth_failing notices: %+v; want one, of bb", auth)
	} else if !wantAuth && len(auth) != 0 {
		t.Errorf("auth_failing notices with bb's token good: %+v", auth)
	}

	restore()
	if _, err := p.qd.Once(p.ctx); err != nil {
		t.Fatalf("the pass after bb recovered: %v", err)
	}
	b := p.row("bb", "7301")
	if b.Phase != qsync.PhaseAccepted || b.JobNumber == "" {
		t.Errorf("bb's 7301 after recovery: %s with job %q, want accepted with its own job", b.Phase, b.JobNumber)
	}
	if rs := p.remoteRequest("bb", "7301"); rs.Status != emulator.RequestAccepted || rs.ReferenceID != b.JobNumber {
		t.Errorf("bb's service holds 7301 as %+v, want accepted with %s", rs, b.JobNumber)
	}
	if rs := p.remoteRequest("aa", "7301"); rs.ReferenceID != sampleshop.JobDraft {
		t.Errorf("aa's 7301 has referenceId %s, want %s", rs.ReferenceID, sampleshop.JobDraft)
	}
	prog.Tick(qsync.Tick{Insurer: "bb", Leader: true, Ran: true}, time.Now())
	if ok, rep := p.qd.Health(time.Now(), &prog, 0, nil); !ok || rep.Reason != "passes succeed on schedule for every insurer" {
		t.Errorf("/healthz after recovery: %v %+v", ok, rep)
	}
}

// TestRunInsurersIsolated runs the daemon's scheduler (Daemon.Run) with
// one insurer's service answering slowly: each engine works on its own
// schedule under one lock, the fast insurer's requests are accepted and
// drafted while the slow one's pass is still running, and sync-now starts
// a pass for the insurer that is idle.
func TestRunInsurersIsolated(t *testing.T) {
	p := newPair(t, func(s *qsync.Settings) {
		s.Sync.Schedule = "@every 1s"
		s.Insurers[1].Schedule = "@every 1h"
		s.Insurers[1].Remote.Timeout = 30 * time.Second
	})
	p.emu["bb"].AddFault(emulator.Fault{Route: emulator.RouteListRequests, Action: emulator.FaultLatency, Latency: 8 * time.Second})
	p.seed("bb", "9001", "CLM-BB-1")
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	now := make(chan qsync.NowRequest)
	done := make(chan error, 1)
	var mu gosync.Mutex
	var ticks []qsync.Tick
	go func() {
		done <- p.qd.Run(ctx, qsync.RunOptions{Lock: p.qd.Lock(), Now: now, OnTick: func(tk qsync.Tick) {
			mu.Lock()
			ticks = append(ticks, tk)
			mu.Unlock()
		}})
	}()
	time.Sleep(1500 * time.Millisecond) // bb's first pass waits for its listing
	p.seed("aa", "7301", sampleshop.ClaimDraft)
	waitFor(t, "aa's 7301 drafted while bb's pass waits", 6*time.Second, func() bool {
		r, err := p.qd.Store.Insurer("aa").Request(p.ctx, "7301")
		return err == nil && r.Phase == qsync.PhaseDrafted
	})
	if _, err := p.qd.Store.Insurer("bb").Request(p.ctx, "9001"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bb's 9001 has a row (%v) before bb's slow listing answered", err)
	}
	reply := make(chan qsync.NowAnswer, 1)
	now <- qsync.NowRequest{Reply: reply}
	if a := <-reply; a.Outcome != qsync.NowStarted {
		t.Errorf("sync-now while only bb's pass runs: %+v, want started (aa's)", a)
	}
	waitFor(t, "bb's slow pass to accept 9001", 20*time.Second, func() bool {
		r, err := p.qd.Store.Insurer("bb").Request(p.ctx, "9001")
		return err == nil && r.Phase == qsync.PhaseAccepted
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	leaders := 0
	for _, ev := range p.events.of(qsync.EventLeader) {
		leaders++
		if ev.Insurer != "" {
			t.Errorf("the leadership event names insurer %q: the lock is the daemon's", ev.Insurer)
		}
	}
	if leaders != 1 {
		t.Errorf("%d leadership events, want 1: the engines share one lock", leaders)
	}
	var aaTicks, bbTicks int
	for _, tk := range ticks {
		switch tk.Insurer {
		case "aa":
			aaTicks++
		case "bb":
			bbTicks++
		}
	}
	if aaTicks < 3 || bbTicks < 1 || bbTicks > 2 {
		t.Errorf("ticks: aa %d (every second), bb %d (its first, hourly after); want aa several, bb one or two", aaTicks, bbTicks)
	}
}

// TestOpenRefusesStrandedRequests: live requests of an insurer no longer
// configured stop the start, and check, naming them and the fix; its
// closed requests do not.
func TestOpenRefusesStrandedRequests(t *testing.T) {
	p := newPair(t, nil)
	old := p.qd.Store.Insurer("old")
	for i, ph := range []store.Phase{qsync.PhaseAccepted, qsync.PhaseWaiting, qsync.PhaseSubmitted, qsync.PhaseGone} {
		if _, err := old.Insert(p.ctx, store.Request{RequestID: fmt.Sprint("55", i), Phase: ph}, store.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := p.tryOpen()
	if !errors.Is(err, qsync.ErrStranded) {
		t.Fatalf("Open with insurer old's live requests: %v, want ErrStranded", err)
	}
	for _, w := range []string{"insurer old: 2 live requests (550, 551)", "configured: aa, bb", "quotesync insurers move OLD NEW --force", "quotesync insurers end OLD --force"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the refusal %q does not say %q", err, w)
		}
	}
	items := qsync.Check(p.ctx, p.set)
	i := slices.IndexFunc(items, func(it qsync.CheckItem) bool { return it.Name == "insurers" })
	if i < 0 || items[i].Status != qsync.CheckFail || !strings.Contains(items[i].Detail, "550, 551") {
		t.Errorf("check's insurers line: %+v", items)
	}

	// The requests moved to a configured insurer: the start goes on.
	if _, err := p.d.SQL.ExecContext(p.ctx, "UPDATE quotesync_requests SET phase = 'rejected' WHERE insurer = 'old'"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.tryOpen(); err != nil {
		t.Errorf("Open with insurer old's requests all closed: %v", err)
	}
}

// TestInsurersMoveAndEnd: the requests of an insurer no longer
// configured are moved to a configured one (a rename) with their events,
// or ended (gone, insurer_ended), each through the executor; a request
// id the new insurer tracks already is not moved. An ended request that
// old's service may hold accepted keeps its job, which no other request
// is given; the others free theirs.
func TestInsurersMoveAndEnd(t *testing.T) {
	p := newPair(t, nil)
	old := p.qd.Store.Insurer("old")
	for _, r := range []store.Request{
		{RequestID: "551", Phase: qsync.PhaseAccepted, JobNumber: "RO-OLD-1"},
		{RequestID: "552", Phase: qsync.PhaseAccepted, ClaimNumber: sampleshop.ClaimDraft, JobNumber: sampleshop.JobDraft},
		{RequestID: "553", Phase: qsync.PhaseSubmitted, JobNumber: "RO-OLD-3"},
	} {
		if _, err := old.Insert(p.ctx, r, store.Event{Kind: "seen"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.qd.Store.Insurer("aa").Insert(p.ctx, store.Request{RequestID: "552", Phase: qsync.PhaseWaiting}, store.Event{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.qd.MoveRequests(p.ctx, "old", "zz"); err == nil {
		t.Error("a move to an insurer not configured went through")
	}
	if _, _, err := p.qd.MoveRequests(p.ctx, "bb", "aa"); err == nil {
		t.Error("a move of a configured insurer's requests went through")
	}
	moved, errs, err := p.qd.MoveRequests(p.ctx, "old", "aa")
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) != 2 || len(errs) != 1 || !errors.Is(errs[0], store.ErrExists) {
		t.Fatalf("move old -> aa: moved %d, errors %v; want 551 and 553 moved, 552 refused (aa tracks a 552)", len(moved), errs)
	}
	r := p.row("aa", "551")
	if r.JobNumber != "RO-OLD-1" || r.Phase != qsync.PhaseAccepted {
		t.Errorf("aa's 551 after the move: %+v", r)
	}
	evs, err := p.qd.Store.Insurer("aa").Events(p.ctx, "551", 0)
	if err != nil || len(evs) != 2 || evs[0].Kind != string(qsync.EventMoved) || evs[1].Kind != "seen" {
		t.Errorf("aa's timeline of 551: %+v, %v; want the moved event over the one it had", evs, err)
	}
	if got := p.events.of(qsync.EventMoved); len(got) != 2 || got[0].Insurer != "aa" {
		t.Errorf("moved events observed: %+v; want 2, of aa", got)
	}
	if n := p.logs.FilterMessage("request moved to another insurer").FilterField(zap.String("insurer", "aa")).Len(); n != 2 {
		t.Errorf("%d log lines of the moves, want 2", n)
	}

	// Live requests of old in every open phase: those old's service may
	// hold accepted with our job number keep it; the others free it.
	for _, r := range []store.Request{
		{RequestID: "554", Phase: qsync.PhaseWaiting},
		{RequestID: "555", Phase: qsync.PhaseReserved, JobNumber: "RO-OLD-5"},
		{RequestID: "556", Phase: qsync.PhaseReserved, JobNumber: "RO-OLD-6", Intent: qsync.IntentAccept},
		{RequestID: "557", Phase: qsync.PhaseDrafted, JobNumber: "RO-OLD-7"},
		{RequestID: "558", Phase: qsync.PhaseAcceptUnknown, JobNumber: "RO-OLD-8"},
	} {
		if _, err := old.Insert(p.ctx, r, store.Event{Kind: "seen"}); err != nil {
			t.Fatal(err)
		}
	}
	ended, errs, err := p.qd.End(p.ctx, "old")
	if err != nil || len(errs) != 0 || len(ended) != 6 {
		t.Fatalf("end old: %d ended, %v, %v; want 552 and 554 to 558", len(ended), errs, err)
	}
	for id, want := range map[string][2]string{ // job held, job released
		"552": {sampleshop.JobDraft, ""}, "554": {"", ""}, "555": {"", "RO-OLD-5"},
		"556": {"RO-OLD-6", ""}, "557": {"RO-OLD-7", ""}, "558": {"RO-OLD-8", ""},
	} {
		g, err := old.Request(p.ctx, id)
		if err != nil || g.Phase != qsync.PhaseGone || g.Reason != qsync.ReasonInsurerEnded || g.JobNumber != want[0] || g.ReleasedJob != want[1] {
			t.Errorf("old's %s after end: phase %s reason %s job %q released %q (%v); want gone, insurer_ended, job %q, released %q",
				id, g.Phase, g.Reason, g.JobNumber, g.ReleasedJob, err, want[0], want[1])
		}
	}
	if got := p.events.of(qsync.EventGone); len(got) != 6 || got[0].Insurer != "old" {
		t.Errorf("gone events observed: %+v; want 6, of old", got)
	}
	if _, err := p.tryOpen(); err != nil {
		t.Errorf("Open after old's requests were settled: %v", err)
	}

	// The shop's job of old's accepted 552 is old's insurer's job: a
	// request of aa for the same claim is not given it, nor accepted
	// with it.
	p.seed("aa", "7401", sampleshop.ClaimDraft)
	if _, err := p.qd.Once(p.ctx); err != nil {
		t.Fatal(err)
	}
	if got := p.row("aa", "7401"); got.JobNumber != "" || got.Phase != qsync.PhaseWaiting || !strings.Contains(got.LastError, "552 of insurer old") {
		t.Errorf("aa's 7401 for the claim of old's ended 552: job %q, %s (%s); want waiting, naming old's 552 as the holder of %s",
			got.JobNumber, got.Phase, got.LastError, sampleshop.JobDraft)
	}
	if rs := p.remoteRequest("aa", "7401"); rs.Status == emulator.RequestAccepted {
		t.Errorf("aa's 7401 was accepted with %s, the job of old's ended 552", rs.ReferenceID)
	}
}

// TestInsurerWorkTypes: a job's lines are read with its insurer's work
// types, the shop's merged with its own: bb's GLASS line is pushed as
// Miscellaneous, the same code on aa's job holds it (unmapped), in the
// same pass; preview reads a job as its insurer's pass does.
func TestInsurerWorkTypes(t *testing.T) {
	p := newPair(t, func(s *qsync.Settings) {
		wt := maps.Clone(s.Shop.WorkTypes)
		wt["GLASS"] = "Miscellaneous"
		s.Insurers[1].WorkTypes = wt
	})
	jobs := map[string]string{}
	for _, ins := range pairNames {
		claim := "CLM-GLASS-" + ins
		job, err := p.shop.CreateJob(p.ctx, claim, "GL "+ins)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.shop.AddLine(p.ctx, job, sampleshop.Line{Code: "GLASS", Description: "Windscreen", Qty: d("1"), UnitPrice: price("310")}); err != nil {
			t.Fatal(err)
		}
		jobs[ins] = job
		p.seed(ins, "7301", claim)
	}
	if _, err := p.qd.Once(p.ctx); err != nil {
		t.Fatal(err)
	}
	b := p.row("bb", "7301")
	if b.Phase != qsync.PhaseDrafted {
		t.Errorf("bb's job with a GLASS line: %s (%s), want drafted", b.Phase, b.LastError)
	}
	if q, _ := p.quote("bb", jobs["bb"]); !strings.Contains(string(q.Body), `"Miscellaneous"`) {
		t.Errorf("bb's Draft: %s, want the GLASS line as Miscellaneous", q.Body)
	}
	a := p.row("aa", "7301")
	if a.Phase != qsync.PhaseAccepted || a.Reason != qsync.ReasonUnmappedCode || !strings.Contains(a.LastError, `"GLASS", which is not under shop.work_types`) {
		t.Errorf("aa's job with a GLASS line: %s %s (%s), want held as unmapped", a.Phase, a.Reason, a.LastError)
	}
	for ins, wantHeld := range map[string]bool{"aa": true, "bb": false} {
		view, err := qsync.JobShop(p.ctx, p.qd.Shop, p.qd.Store, p.set, jobs[ins], "")
		if err != nil {
			t.Fatal(err)
		}
		pv, err := qsync.PreviewJob(p.ctx, view, p.qd.Store, p.set.Sync, jobs[ins])
		if err != nil || (len(pv.Held) > 0) != wantHeld || pv.Insurer != ins {
			t.Errorf("preview of %s's job %s: held %v (%v), insurer %q; want held %v", ins, jobs[ins], pv.Held, err, pv.Insurer, wantHeld)
		}
	}
}
