package sync

import (
	"cmp"
	"fmt"
	"strings"
	gosync "sync"
	"time"
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

// nextRun returns the n-th time c's schedule fires after t (n >= 1),
// zero when it stops firing before.
func nextRun(c Config, t time.Time, n int) time.Time {
	if runs := c.NextRuns(t, n); len(runs) == n {
		return runs[n-1]
	}
	return time.Time{}
}

// Progress is what the scheduler reported lately, for each insurer; the
// watchdog and /healthz read it (Daemon.Live, Daemon.Health). Safe for
// concurrent use.
type Progress struct {
	mu       gosync.Mutex
	baseline time.Time // start, or the last reload: ticks are expected after it
	insurers map[string]*progressView
}

// progressView is what one insurer's engine reported; a copy from
// viewOf is consistent, with the baseline.
type progressView struct {
	baseline    time.Time // set in viewOf's copies
	lastTick    time.Time // zero before the first tick since baseline
	leader      bool      // at the last tick
	standby     bool      // at the last tick the lock was held elsewhere
	lastErr     error     // of the last tick
	lastSuccess time.Time // end of the last successful pass; zero before one
}

// of returns the progress of insurer ("" is DefaultInsurer); p.mu held.
func (p *Progress) of(insurer string) *progressView {
	insurer = cmp.Or(insurer, DefaultInsurer)
	if p.insurers == nil {
		p.insurers = make(map[string]*progressView)
	}
	ip := p.insurers[insurer]
	if ip == nil {
		ip = &progressView{}
		p.insurers[insurer] = ip
	}
	return ip
}

// Restart sets the baseline after a start or a reload.
func (p *Progress) Restart(now time.Time) {
	p.mu.Lock()
	p.baseline = now
	for _, ip := range p.insurers {
		ip.lastTick = time.Time{}
	}
	p.mu.Unlock()
}

// Tick records one scheduled tick of t.Insurer's engine
// (RunOptions.OnTick calls it).
func (p *Progress) Tick(t Tick, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ip := p.of(t.Insurer)
	ip.lastTick, ip.leader, ip.lastErr = now, t.Leader, t.Err
	ip.standby = !t.Leader && t.Err == nil
	if t.Ran && t.Err == nil {
		ip.lastSuccess = now
	}
}

func (p *Progress) viewOf(insurer string) progressView {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := *p.of(insurer)
	v.baseline = p.baseline
	return v
}

// liveInput is what the watchdog decides on.
type liveInput struct {
	now         time.Time
	view        progressView
	busy        bool      // a pass runs
	busySince   time.Time // its start
	passTimeout time.Duration
	sched       Config // its Schedule and Location
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
	due := nextRun(in.sched, last, 1)
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
	// Insurers is each insurer's health, with several insurers (the
	// fields above are then the daemon's).
	Insurers []InsurerHealth `json:"insurers,omitempty"`
}

// InsurerHealth is one insurer's part of /healthz.
type InsurerHealth struct {
	Insurer     string `json:"insurer"`
	Status      string `json:"status"` // "ok" or "unhealthy"
	Reason      string `json:"reason"`
	LastSuccess string `json:"last_success,omitempty"`
	StaleAfter  string `json:"stale_after,omitempty"`
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
		stale = nextRun(in.sched, since, staleActivations)
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

// liveInput is what prog recorded of e, and whether a pass runs now.
func (e *Engine) liveInput(now time.Time, prog *Progress) liveInput {
	since, busy := e.Busy()
	return liveInput{now: now, view: prog.viewOf(e.cfg.Insurer), busy: busy, busySince: since,
		passTimeout: e.cfg.PassTimeout, sched: e.cfg}
}

// Live is the watchdog's question: does the daemon make progress? With
// several insurers it does while at least one engine's scheduler does:
// one insurer's stuck pass (a service that holds its calls far past
// sync.pass_timeout) is that insurer's trouble, which /healthz names,
// not a reason for systemd to restart the daemon and cut every other
// insurer's work short. Only when no engine makes progress is the
// process wedged. why names the engines that make none, also when ok.
func (d *Daemon) Live(now time.Time, prog *Progress) (ok bool, why string) {
	if len(d.Engines) == 1 {
		return evalLive(d.Engine.liveInput(now, prog))
	}
	var stuck []string
	for _, e := range d.Engines {
		if live, why := evalLive(e.liveInput(now, prog)); !live {
			stuck = append(stuck, "insurer "+e.cfg.Insurer+": "+why)
		} else {
			ok = true
		}
	}
	return ok, strings.Join(stuck, "; ")
}

// Health answers /healthz: for one insurer's engine, unhealthy when the
// database does not answer (dbErr), when the scheduler is stuck, or when
// the last successful pass is older than maxAge (0: three activations of
// the schedule). With several insurers, healthy while at least one
// insurer is (one insurer's service down stops no other's work), the
// reason naming those that are not, and each insurer's health in
// Insurers.
func (d *Daemon) Health(now time.Time, prog *Progress, maxAge time.Duration, dbErr error) (bool, HealthReport) {
	health := func(e *Engine) (bool, HealthReport) {
		return evalHealth(healthInput{liveInput: e.liveInput(now, prog), maxAge: maxAge, dbErr: dbErr})
	}
	if len(d.Engines) == 1 {
		return health(d.Engine)
	}
	var out HealthReport
	var good, bad []string
	for i, e := range d.Engines {
		ok, r := health(e)
		if i == 0 {
			out.Role, out.Database = r.Role, r.Database
		}
		if r.LastSuccess > out.LastSuccess { // RFC 3339 in UTC: text order is time order
			out.LastSuccess = r.LastSuccess
		}
		out.Insurers = append(out.Insurers, InsurerHealth{Insurer: e.cfg.Insurer, Status: r.Status, Reason: r.Reason,
			LastSuccess: r.LastSuccess, StaleAfter: r.StaleAfter})
		if ok {
			good = append(good, e.cfg.Insurer)
		} else {
			bad = append(bad, fmt.Sprintf("insurer %s: %s", e.cfg.Insurer, r.Reason))
		}
	}
	switch {
	case dbErr != nil:
		out.Status, out.Reason = "unhealthy", "the shop database does not answer"
	case len(good) == 0:
		out.Status, out.Reason = "unhealthy", "no insurer is healthy: "+strings.Join(bad, "; ")
	case len(bad) == 0 && out.Role == "standby":
		out.Status, out.Reason = "ok", "standby: another instance holds the lock and does the passes"
	case len(bad) > 0:
		out.Status, out.Reason = "ok", "passes succeed for "+strings.Join(good, ", ")+"; not for "+strings.Join(bad, "; ")
	default:
		out.Status, out.Reason = "ok", "passes succeed on schedule for every insurer"
	}
	return out.Status == "ok", out
}
