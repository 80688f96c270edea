package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/quotesync/quotesync/shopdb/store"
	"github.com/robfig/cron/v3"
	"go.uber.org/zap"
)

// Lease is the single-instance lock as the scheduler uses it;
// *store.Lock implements it.
type Lease interface {
	// Lost is closed when the lock is found gone (its heartbeat checks).
	Lost() <-chan struct{}
	Release() error
}

// LockFunc acquires the single-instance lock. It returns an error wrapping
// store.ErrNotLeader while another instance holds it.
type LockFunc func(ctx context.Context) (Lease, error)

// RunOptions configures Run.
type RunOptions struct {
	// Lock acquires the single-instance lock before passes; nil runs
	// without one (a single instance).
	Lock LockFunc
	// OnTick, when set, is called after every scheduled tick, from the
	// scheduler's goroutine: after a pass, or after a standby instance
	// found the lock held elsewhere. The daemon pings systemd's watchdog
	// from it.
	OnTick func(Tick)
	// SkipFirst leaves out the pass Run otherwise starts at once, before
	// the schedule's first tick.
	SkipFirst bool
	// Drain, when closed, makes Run stop scheduling and return once the
	// passes in progress have finished on their own (not cancelled): a
	// configuration reload takes effect at the next pass this way.
	Drain <-chan struct{}
	// DrainWait, when positive, bounds that wait: the passes still running
	// DrainWait after Drain closed are cancelled, as at a stop (each
	// records what it did; an intent is written before its call, so the
	// next pass repairs a call cut short), so that one insurer's slow
	// service never holds a reload, and with it the other insurers' next
	// passes. Their ticks report ErrInterrupted.
	DrainWait time.Duration
	// Resume names insurers whose first pass runs at once even with
	// SkipFirst: their last pass was cut short by a drain.
	Resume []string
	// Now, when set, delivers requests for a pass at once: each starts a
	// tick outside the schedule unless a pass is running, and is answered
	// on its Reply channel. Requests are read only while Run schedules.
	Now <-chan NowRequest
}

// Tick is what one scheduled tick of one engine did.
type Tick struct {
	Insurer string  // the engine's insurer
	Leader  bool    // this instance held the lock (always true without a Lock)
	Ran     bool    // a pass ran
	Summary Summary // of the pass, when Ran
	Err     error   // of the pass or of the lock
}

// Run runs passes on the configured schedule until ctx is cancelled; then
// it waits for the pass in progress (which sees the cancellation and stops
// after recording what it already did), releases the lock and returns nil.
// When opts.Drain is closed instead, Run lets the pass in progress finish
// (cancelling it after opts.DrainWait, when set), releases the lock and
// returns nil. Passes never overlap.
func (e *Engine) Run(ctx context.Context, opts RunOptions) error {
	return runEngines(ctx, []*Engine{e}, e.outbox, opts)
}

// Run runs every engine's passes, each on its own schedule, as Engine.Run
// does for one: an engine's passes never overlap, the insurers' run side
// by side. They share the single-instance lock, held from the first tick
// that takes it until Run returns; when it is lost, every engine's pass
// in progress is cancelled. The outbox is worked beside them, for every
// insurer.
func (d *Daemon) Run(ctx context.Context, opts RunOptions) error {
	return runEngines(ctx, d.Engines, d.Outbox, opts)
}

// runEngines is Run for engines, which share outbox.
func runEngines(ctx context.Context, engines []*Engine, outbox *Outbox, opts RunOptions) error {
	first := engines[0]
	cl := cronLogger{first.log.Named("cron")}
	c := cron.New(
		cron.WithLocation(first.cfg.Location),
		cron.WithLogger(cl),
		// SkipIfStillRunning outermost: robfig/cron v3.0.1 loses its token
		// when an inner job panics, so Recover must sit inside it. It
		// wraps each engine's job apart: one insurer's long pass never
		// skips another's.
		cron.WithChain(cron.SkipIfStillRunning(cl), cron.Recover(cl)),
	)
	g := &group{opts: opts, emit: first.emitDaemon}
	stopOutbox := startOutbox(ctx, outbox, opts.Lock == nil)
	defer stopOutbox()
	// The passes run on passCtx: ctx's end cancels them, and so does a
	// drain that waited DrainWait.
	passCtx, cancelPasses := context.WithCancel(ctx)
	defer cancelPasses()
	for _, e := range engines {
		sched, err := ParseSchedule(e.cfg.Schedule)
		if err != nil {
			return err // Validate caught this already
		}
		s := &scheduler{e: e, g: g}
		s.id = c.Schedule(sched, cron.FuncJob(func() { s.tick(passCtx) }))
		g.scheds = append(g.scheds, s)
	}
	c.Start()
	// Ticks outside the schedule (the first, and those asked for) run
	// through the wrapped jobs, so that they share their skip guards;
	// cron's Stop does not wait for them, extra does.
	var extra gosync.WaitGroup
	tickNow := func(s *scheduler) { extra.Go(c.Entry(s.id).WrappedJob.Run) }
	for _, s := range g.scheds {
		if !opts.SkipFirst || slices.Contains(opts.Resume, s.e.cfg.Insurer) {
			tickNow(s)
		}
	}
	drained := false
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-opts.Drain: // nil channel: never
			drained = true
			break loop
		case req := <-opts.Now: // nil channel: never
			a, idle := g.nowAnswer()
			for _, s := range idle {
				tickNow(s)
			}
			req.Reply <- a
		}
	}
	ended := make(chan struct{})
	go func() {
		<-c.Stop().Done()
		extra.Wait()
		close(ended)
	}()
	if drained && opts.DrainWait > 0 {
		t := time.NewTimer(opts.DrainWait)
		select {
		case <-ended:
		case <-t.C:
			cancelPasses()
		}
		t.Stop()
	}
	<-ended
	g.release()
	return nil
}

// group is what the schedulers of Run's engines share: the lock.
type group struct {
	opts   RunOptions
	emit   func(Event) // the daemon's events (the lock's)
	scheds []*scheduler

	mu       gosync.Mutex // guards the lease and its counts
	lease    Lease
	standby  bool // logged as standby since the last leadership
	lockErrs int  // consecutive lock errors

	follower atomic.Bool // the last tick found another instance leading
}

// scheduler holds one engine's state between its ticks; only the cron
// goroutine of its running tick touches it (SkipIfStillRunning
// serialises an engine's ticks).
type scheduler struct {
	e  *Engine
	g  *group
	id cron.EntryID

	// What a request for a pass at once reads from Run's goroutine.
	runningSince atomic.Int64 // UnixNano of the running tick's start; 0 between ticks
}

// nowAnswer says what a request for a pass at once gets now, and which
// engines start one: those whose pass is not running. Every engine
// running: NowRunning, since the earliest start.
func (g *group) nowAnswer() (NowAnswer, []*scheduler) {
	var idle []*scheduler
	var since time.Time
	for _, s := range g.scheds {
		n := s.runningSince.Load()
		if n == 0 {
			idle = append(idle, s)
		} else if t := time.Unix(0, n); since.IsZero() || t.Before(since) {
			since = t
		}
	}
	switch {
	case len(idle) == 0:
		return NowAnswer{Outcome: NowRunning, Since: since}, nil
	case g.follower.Load():
		return NowAnswer{Outcome: NowStandby}, idle
	}
	return NowAnswer{Outcome: NowStarted}, idle
}

func (s *scheduler) tick(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	s.runningSince.Store(time.Now().UnixNano())
	defer s.runningSince.Store(0)
	t := Tick{Insurer: s.e.cfg.Insurer, Leader: true}
	reported := false
	defer func() {
		// A panic the pass did not recover itself (cron's Recover would
		// log it without the insurer, and report no tick): this
		// insurer's tick failed, the others' go on.
		if v := recover(); v != nil {
			t.Ran, t.Err = true, s.e.recovered(v)
			if !reported {
				s.report(t)
			}
		}
	}()
	passCtx := ctx
	if s.g.opts.Lock != nil {
		lease, err := s.g.lead(ctx)
		s.g.follower.Store(lease == nil && err == nil)
		if lease == nil {
			t.Leader, t.Err = false, err
			reported = true
			s.report(t)
			return
		}
		var cancel context.CancelFunc
		passCtx, cancel = whileHeld(ctx, lease)
		defer cancel()
	}
	t.Summary, t.Err = s.e.Pass(passCtx)
	t.Ran = true
	reported = true
	s.report(t)
}

// whileHeld returns a context of ctx that is cancelled when lease is lost.
func whileHeld(ctx context.Context, lease Lease) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-lease.Lost():
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

func (s *scheduler) report(t Tick) {
	if s.g.opts.OnTick != nil {
		s.g.opts.OnTick(t)
	}
}

// lead returns the lease when this instance is the leader, acquiring it
// when needed; nil when another instance leads or the lock failed.
func (g *group) lead(ctx context.Context) (Lease, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lease != nil {
		// The lease's heartbeat checks the lock on its own connection every
		// few seconds and closes Lost() the moment it is gone (a pass in
		// progress is cancelled then), so a tick asks no round trip of the
		// database: an idle pass costs what the pass itself reads.
		select {
		case <-g.lease.Lost():
		default:
			return g.lease, nil
		}
		g.emit(Event{Kind: EventLeaseLost, Err: errors.New("the single-instance lock's session ended or the lock was taken")})
		g.releaseLocked()
	}
	lease, err := g.opts.Lock(ctx)
	switch {
	case errors.Is(err, store.ErrNotLeader):
		g.lockErrs = 0
		if !g.standby {
			g.standby = true
			g.emit(Event{Kind: EventStandby})
		}
		return nil, nil
	case err != nil:
		g.lockErrs++
		if g.lockErrs == 1 || g.lockErrs%10 == 0 {
			g.emit(Event{Kind: EventLockFailed, Streak: g.lockErrs, Err: err})
		}
		return nil, err
	}
	g.lease, g.standby, g.lockErrs = lease, false, 0
	g.emit(Event{Kind: EventLeader})
	return lease, nil
}

// release gives the lock up, if held.
func (g *group) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.releaseLocked()
}

func (g *group) releaseLocked() {
	if g.lease == nil {
		return
	}
	if err := g.lease.Release(); err != nil {
		g.emit(Event{Kind: EventReleaseFailed, Err: err})
	}
	g.lease = nil
}

// cronLogger routes robfig/cron's logs to zap: its chatty Info at debug
// level, its errors (recovered panics) at error level.
type cronLogger struct{ l *zap.Logger }

func (c cronLogger) Info(msg string, keysAndValues ...any) {
	c.l.Sugar().Debugw(msg, keysAndValues...)
}

func (c cronLogger) Error(err error, msg string, keysAndValues ...any) {
	c.l.Sugar().Errorw(msg, append(keysAndValues, "error", err)...)
}

// scheduleShown is how many of the next passes `quotesync check` shows.
const scheduleShown = 3

// ScheduleItem is the line `quotesync check` prints for sync.schedule (c
// valid): the next passes it starts after now, in its time zone, so that
// a spec that means something else than intended shows it at once.
func ScheduleItem(c Config, now time.Time) CheckItem {
	c = c.withDefaults()
	runs := c.NextRuns(now, scheduleShown)
	if len(runs) == 0 { // unreachable: Validate refuses it
		return CheckItem{Status: CheckFail, Name: "sync.schedule", Detail: fmt.Sprintf("%q never fires", c.Schedule)}
	}
	shown := stringsOf(runs, func(t time.Time) string { return t.Format("Mon 2006-01-02 15:04:05 MST") })
	return CheckItem{Status: CheckOK, Name: "sync.schedule", Detail: fmt.Sprintf("%q in time zone %s: next passes %s (and one at start)",
		c.Schedule, c.Location, strings.Join(shown, ", "))}
}
