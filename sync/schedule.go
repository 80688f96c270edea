package sync

import (
	"context"
	"errors"
	"fmt"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"
	"go.uber.org/zap"

	"github.com/quotesync/quotesync/shopdb"
)

// Lease is the single-instance lock as the scheduler uses it;
// *shopdb.Lock implements it.
type Lease interface {
	// Lost is closed when the lock is found gone (its heartbeat checks).
	Lost() <-chan struct{}
	Release() error
}

// LockFunc acquires the single-instance lock. It returns an error wrapping
// shopdb.ErrNotLeader while another instance holds it.
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
	// pass in progress has finished on its own (not cancelled): a
	// configuration reload takes effect at the next pass this way.
	Drain <-chan struct{}
	// Now, when set, delivers requests for a pass at once: each starts a
	// tick outside the schedule unless a pass is running, and is answered
	// on its Reply channel. Requests are read only while Run schedules.
	Now <-chan NowRequest
}

// Tick is what one scheduled tick did.
type Tick struct {
	Leader  bool    // this instance held the lock (always true without a Lock)
	Ran     bool    // a pass ran
	Summary Summary // of the pass, when Ran
	Err     error   // of the pass or of the lock
}

// Run runs passes on the configured schedule until ctx is cancelled; then
// it waits for the pass in progress (which sees the cancellation and stops
// after recording what it already did), releases the lock and returns nil.
// When opts.Drain is closed instead, Run lets the pass in progress finish,
// releases the lock and returns nil. Passes never overlap.
func (e *Engine) Run(ctx context.Context, opts RunOptions) error {
	sched, err := ParseSchedule(e.cfg.Schedule)
	if err != nil {
		return err // Validate caught this already
	}
	cl := cronLogger{e.log.Named("cron")}
	c := cron.New(
		cron.WithLocation(e.cfg.Location),
		cron.WithLogger(cl),
		// SkipIfStillRunning outermost: robfig/cron v3.0.1 loses its token
		// when an inner job panics, so Recover must sit inside it.
		cron.WithChain(cron.SkipIfStillRunning(cl), cron.Recover(cl)),
	)
	s := &scheduler{e: e, opts: opts}
	stopOutbox := e.startOutbox(ctx, opts.Lock == nil)
	defer stopOutbox()
	id := c.Schedule(sched, cron.FuncJob(func() { s.tick(ctx) }))
	c.Start()
	// Ticks outside the schedule (the first, and those asked for) run
	// through the wrapped job, so that they share its skip guard; cron's
	// Stop does not wait for them, extra does.
	var extra gosync.WaitGroup
	tickNow := func() {
		extra.Add(1)
		go func() {
			defer extra.Done()
			c.Entry(id).WrappedJob.Run()
		}()
	}
	if !opts.SkipFirst {
		tickNow()
	}
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-opts.Drain: // nil channel: never
			break loop
		case req := <-opts.Now: // nil channel: never
			a := s.nowAnswer()
			if a.Outcome != NowRunning {
				tickNow()
			}
			req.Reply <- a
		}
	}
	<-c.Stop().Done()
	extra.Wait()
	s.release()
	return nil
}

// scheduler holds Run's state between ticks; only the cron goroutine of
// the running tick touches it (SkipIfStillRunning serialises ticks).
type scheduler struct {
	e        *Engine
	opts     RunOptions
	lease    Lease
	standby  bool // logged as standby since the last leadership
	lockErrs int  // consecutive lock errors

	// What a request for a pass at once reads from Run's goroutine.
	runningSince atomic.Int64 // UnixNano of the running tick's start; 0 between ticks
	follower     atomic.Bool  // the last tick found another instance leading
}

// nowAnswer says what a request for a pass at once gets now.
func (s *scheduler) nowAnswer() NowAnswer {
	if since := s.runningSince.Load(); since != 0 {
		return NowAnswer{Outcome: NowRunning, Since: time.Unix(0, since)}
	}
	if s.follower.Load() {
		return NowAnswer{Outcome: NowStandby}
	}
	return NowAnswer{Outcome: NowStarted}
}

func (s *scheduler) tick(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	s.runningSince.Store(time.Now().UnixNano())
	defer s.runningSince.Store(0)
	t := Tick{Leader: true}
	passCtx := ctx
	if s.opts.Lock != nil {
		lease, err := s.lead(ctx)
		s.follower.Store(lease == nil && err == nil)
		if lease == nil {
			t.Leader, t.Err = false, err
			s.report(t)
			return
		}
		var cancel context.CancelFunc
		passCtx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-lease.Lost():
				cancel()
			case <-passCtx.Done():
			}
		}()
	}
	t.Summary, t.Err = s.e.Pass(passCtx)
	t.Ran = true
	s.report(t)
}

func (s *scheduler) report(t Tick) {
	if s.opts.OnTick != nil {
		s.opts.OnTick(t)
	}
}

// lead returns the lease when this instance is the leader, acquiring it
// when needed; nil when another instance leads or the lock failed.
func (s *scheduler) lead(ctx context.Context) (Lease, error) {
	e := s.e
	if s.lease != nil {
		// The lease's heartbeat checks the lock on its own connection every
		// few seconds and closes Lost() the moment it is gone (a pass in
		// progress is cancelled then), so a tick asks no round trip of the
		// database: an idle pass costs what the pass itself reads.
		select {
		case <-s.lease.Lost():
		default:
			return s.lease, nil
		}
		e.emit(Event{Kind: EventLeaseLost, Err: errors.New("the single-instance lock's session ended or the lock was taken")})
		s.release()
	}
	lease, err := s.opts.Lock(ctx)
	switch {
	case errors.Is(err, shopdb.ErrNotLeader):
		s.lockErrs = 0
		if !s.standby {
			s.standby = true
			e.emit(Event{Kind: EventStandby})
		}
		return nil, nil
	case err != nil:
		s.lockErrs++
		if s.lockErrs == 1 || s.lockErrs%10 == 0 {
			e.emit(Event{Kind: EventLockFailed, Streak: s.lockErrs, Err: err})
		}
		return nil, err
	}
	s.lease, s.standby, s.lockErrs = lease, false, 0
	e.emit(Event{Kind: EventLeader})
	return lease, nil
}

// release gives the lock up, if held.
func (s *scheduler) release() {
	if s.lease == nil {
		return
	}
	if err := s.lease.Release(); err != nil {
		s.e.emit(Event{Kind: EventReleaseFailed, Err: err})
	}
	s.lease = nil
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
	shown := make([]string, len(runs))
	for i, t := range runs {
		shown[i] = t.Format("Mon 2006-01-02 15:04:05 MST")
	}
	return CheckItem{Status: CheckOK, Name: "sync.schedule", Detail: fmt.Sprintf("%q in time zone %s: next passes %s (and one at start)",
		c.Schedule, c.Location, strings.Join(shown, ", "))}
}
