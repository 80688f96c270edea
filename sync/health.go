package sync

import (
	"fmt"
	gosync "sync"
	"time"

	"github.com/robfig/cron/v3"
)

// Health and watchdog tunables.
const (
	// staleActivations: by default /healthz fails once this many scheduled
	// activations have passed since the last successful pass.
	staleActivations = 3
	// tickGrace is how late a scheduled tick may be reported before the
	// watchdog counts the scheduler as stuck (the lock's queries are
	// bounded by shop.query_timeout, 30s by default).
	tickGrace = 2 * time.Minute
	// passGrace is how far past sync.pass_timeout a running pass may go
	// (it records what it did after the timeout) before the watchdog
	// counts it as stuck.
	passGrace = time.Minute
)

// schedule is sync.schedule, parsed, in its time zone.
type schedule struct {
	spec string
	s    cron.Schedule
	loc  *time.Location
}

// scheduleOf parses a configuration's schedule (already validated).
func scheduleOf(cfg Config) schedule {
	s, err := ParseSchedule(cfg.Schedule)
	if err != nil {
		s = cron.Every(DefaultPassTimeout) // unreachable: Validate refuses it
	}
	loc := cfg.Location
	if loc == nil {
		loc = time.Local
	}
	return schedule{spec: cfg.Schedule, s: s, loc: loc}
}

// next returns the n-th activation after t (n >= 1).
func (s schedule) next(t time.Time, n int) time.Time {
	t = t.In(s.loc)
	for range n {
		nt := s.s.Next(t)
		if nt.IsZero() {
			return nt // a schedule that never fires again
		}
		t = nt
	}
	return t
}

// Progress is what the scheduler reported lately; the watchdog and
// /healthz read it (Engine.Live, Engine.Health). Safe for concurrent use.
type Progress struct {
	mu          gosync.Mutex
	baseline    time.Time // start, or the last reload: ticks are expected after it
	lastTick    time.Time // zero before the first tick since baseline
	leader      bool      // at the last tick
	standby     bool      // at the last tick the lock was held elsewhere
	lastErr     error     // of the last tick
	lastSuccess time.Time // end of the last successful pass; zero before one
}

// Restart sets the baseline after a start or a reload.
func (p *Progress) Restart(now time.Time) {
	p.mu.Lock()
	p.baseline, p.lastTick = now, time.Time{}
	p.mu.Unlock()
}

// Tick records one scheduled tick (RunOptions.OnTick calls it).
func (p *Progress) Tick(t Tick, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastTick, p.leader, p.lastErr = now, t.Leader, t.Err
	p.standby = !t.Leader && t.Err == nil
	if t.Ran && t.Err == nil {
		p.lastSuccess = now
	}
}

// progressView is a consistent copy of progress.
type progressView struct {
	baseline, lastTick, lastSuccess time.Time
	leader, standby                 bool
	lastErr                         error
}

func (p *Progress) view() progressView {
	p.mu.Lock()
	defer p.mu.Unlock()
	return progressView{baseline: p.baseline, lastTick: p.lastTick, lastSuccess: p.lastSuccess,
		leader: p.leader, standby: p.standby, lastErr: p.lastErr}
}

// liveInput is what the watchdog decides on.
type liveInput struct {
	now         time.Time
	view        progressView
	busy        bool      // a pass runs
	busySince   time.Time // its start
	passTimeout time.Duration
	sched       schedule
}

// evalLive reports whether the scheduler makes progress: no pass running and
// the last scheduled tick came when due, or the running pass is younger
// than sync.pass_timeout plus a grace. reason says why not.
func evalLive(in liveInput) (ok bool, reason string) {
	if in.busy {
		if age := in.now.Sub(in.busySince); age > in.passTimeout+passGrace {
			return false, fmt.Sprintf("a pass has run for %s, longer than sync.pass_timeout (%s) + %s", age.Round(time.Second), in.passTimeout, passGrace)
		}
		return true, ""
	}
	last := in.view.lastTick
	if last.IsZero() {
		last = in.view.baseline
	}
	due := in.sched.next(last, 1)
	if !due.IsZero() && in.now.After(due.Add(tickGrace)) {
		return false, fmt.Sprintf("the scheduler has not ticked since %s (due %s)", last.Format(time.RFC3339), due.Format(time.RFC3339))
	}
	return true, ""
}

// healthInput is what /healthz decides on.
type healthInput struct {
	liveInput
	maxAge time.Duration // metrics.health_max_age; 0: staleActivations of the schedule
	dbErr  error         // of a short ping
}

// HealthReport is the body of /healthz.
type HealthReport struct {
	Status      string `json:"status"` // "ok" or "unhealthy"
	Reason      string `json:"reason"`
	Role        string `json:"role"` // "leader", "standby" or "starting"
	LastSuccess string `json:"last_success,omitempty"`
	StaleAfter  string `json:"stale_after,omitempty"`
	Database    string `json:"database"`
}

// evalHealth decides /healthz: unhealthy when the database does not answer,
// when the scheduler is stuck, or when the last successful pass is too old.
// A standby instance (the lock is held by another instance) does not pass,
// so its age is not held against it. Before the first success, the start
// (or the last reload) counts as one.
func evalHealth(in healthInput) (ok bool, r HealthReport) {
	v := in.view
	r.Database = "ok"
	switch {
	case v.lastTick.IsZero():
		r.Role = "starting"
	case v.standby:
		r.Role = "standby"
	default:
		r.Role = "leader"
	}
	if !v.lastSuccess.IsZero() {
		r.LastSuccess = v.lastSuccess.UTC().Format(time.RFC3339)
	}
	fail := func(reason string) (bool, HealthReport) {
		r.Status, r.Reason = "unhealthy", reason
		return false, r
	}
	if in.dbErr != nil {
		r.Database = in.dbErr.Error()
		return fail("the shop database does not answer")
	}
	if ok, why := evalLive(in.liveInput); !ok {
		return fail(why)
	}
	if v.standby {
		r.Status, r.Reason = "ok", "standby: another instance holds the lock and does the passes"
		return true, r
	}
	since := v.lastSuccess
	if since.IsZero() || since.Before(v.baseline) {
		since = v.baseline
	}
	var stale time.Time
	if in.maxAge > 0 {
		stale = since.Add(in.maxAge)
	} else {
		stale = in.sched.next(since, staleActivations)
		if stale.IsZero() {
			stale = since.Add(24 * time.Hour * 365) // a schedule that never fires
		}
		if in.busy && in.busySince.Add(in.passTimeout).After(stale) {
			stale = in.busySince.Add(in.passTimeout) // the running pass may still succeed
		}
	}
	r.StaleAfter = stale.UTC().Format(time.RFC3339)
	if in.now.After(stale) {
		what := "no successful pass since the start"
		if !v.lastSuccess.IsZero() {
			what = "the last successful pass was at " + r.LastSuccess
		}
		if v.lastErr != nil {
			what += "; the last one failed: " + v.lastErr.Error()
		}
		return fail(what)
	}
	r.Status, r.Reason = "ok", "passes succeed on schedule"
	if v.lastSuccess.IsZero() {
		r.Reason = "no pass has succeeded yet; not overdue"
	}
	return true, r
}

// Live is the watchdog's question: does the scheduler make progress? It
// reads what prog recorded and whether a pass runs now.
func (e *Engine) Live(now time.Time, prog *Progress) (bool, string) {
	since, busy := e.Busy()
	return evalLive(liveInput{now: now, view: prog.view(), busy: busy, busySince: since,
		passTimeout: e.cfg.PassTimeout, sched: scheduleOf(e.cfg)})
}

// Health answers /healthz: unhealthy when the database does not answer
// (dbErr), when the scheduler is stuck, or when the last successful pass
// is older than maxAge (0: three activations of the schedule).
func (e *Engine) Health(now time.Time, prog *Progress, maxAge time.Duration, dbErr error) (bool, HealthReport) {
	since, busy := e.Busy()
	return evalHealth(healthInput{
		liveInput: liveInput{now: now, view: prog.view(), busy: busy, busySince: since,
			passTimeout: e.cfg.PassTimeout, sched: scheduleOf(e.cfg)},
		maxAge: maxAge, dbErr: dbErr,
	})
}
