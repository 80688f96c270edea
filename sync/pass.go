package sync

import (
	"context"
	"errors"
	"fmt"
	"sort"
	gosync "sync"
	"time"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
)

// pass is the state of one pass in progress.
type pass struct {
	e   *Engine
	dry bool
	now time.Time
	log *zap.Logger

	stop  context.CancelCauseFunc // stops the whole pass (401)
	slots chan struct{}           // remote calls in flight, at most Concurrency

	mu      gosync.Mutex
	summary Summary
	actions []Action
	phases  map[string]shopdb.Phase // request id → phase after the pass
	errs    []error                 // pass-level failures

	interrupted bool // the caller cancelled the pass (shutdown)
	ctxSeen     bool // cancelled has recorded why the context ended
}

// count updates the summary under the pass's lock.
func (p *pass) count(f func(s *Summary)) {
	p.mu.Lock()
	f(&p.summary)
	p.mu.Unlock()
}

// plan records an action of a dry run.
func (p *pass) plan(a Action) {
	p.mu.Lock()
	p.actions = append(p.actions, a)
	p.mu.Unlock()
}

// fail records a pass-level failure.
func (p *pass) fail(err error) {
	p.mu.Lock()
	p.errs = append(p.errs, err)
	p.mu.Unlock()
}

// setPhase remembers a request's phase after a change, for the gauges.
func (p *pass) setPhase(id string, ph shopdb.Phase) {
	p.mu.Lock()
	p.phases[id] = ph
	p.mu.Unlock()
}

// acceptWork is one request the accept stage works on.
type acceptWork struct {
	req remote.Request
	row *shopdb.Request // nil for a request seen for the first time
	// probe: the row is reserved and the request left the pending list;
	// the accept is sent again to learn whether ours had landed.
	probe bool
}

func (e *Engine) pass(ctx context.Context, dry bool) (*pass, error) {
	p := &pass{e: e, dry: dry, now: e.Now(), log: e.log, phases: make(map[string]shopdb.Phase),
		slots: make(chan struct{}, e.cfg.Concurrency)}
	e.passStart.Store(time.Now().UnixNano())
	defer e.passStart.Store(0)
	ctx, cancel := context.WithTimeout(ctx, e.cfg.PassTimeout)
	defer cancel()
	ctx, p.stop = context.WithCancelCause(ctx)
	defer p.stop(nil)

	pending, listErr := e.listPending(ctx, p)
	if errors.Is(listErr, remote.ErrUnauthorized) {
		return p, e.finish(p, listErr)
	}
	if p.cancelled(ctx) {
		return p, e.finish(p, nil)
	}
	since := time.Time{}
	if e.cfg.WatchSubmitted > 0 {
		since = p.now.Add(-e.cfg.WatchSubmitted)
	} else {
		since = p.now.Add(time.Hour) // nothing submitted is watched
	}
	rows, err := e.store.OpenRequests(ctx, since)
	if err != nil {
		if p.cancelled(ctx) {
			return p, e.finish(p, nil)
		}
		e.Metrics.Error(ErrKindState)
		return p, e.finish(p, fmt.Errorf("load open requests: %w", err))
	}
	p.summary.Tracked = len(rows)
	for _, r := range rows {
		p.phases[r.RequestID] = r.Phase
	}

	var work []acceptWork
	if listErr == nil {
		c := e.classify(p, pending, rows)
		work = c.work
		for _, r := range c.vanished {
			e.markGone(ctx, p, r, "the request left the pending list before the shop had a job for it")
		}
	}
	accepted := e.acceptAll(ctx, p, work)
	rows = append(rows, accepted...)

	if ctx.Err() == nil {
		e.pushAll(ctx, p, rows)
	}
	p.cancelled(ctx)
	return p, e.finish(p, listErr)
}

// pendingList is the remote's pending list as the pass reads it.
type pendingList struct {
	requests []remote.Request // the decodable ones
	// skipped holds the ids of listed requests that could not be decoded:
	// they are pending all the same, and nothing may conclude otherwise.
	skipped map[string]bool
	// blind is set when an undecodable entry had no readable id: any
	// request may be among them, so no request counts as having left the
	// list in this pass.
	blind bool
}

// listed reports whether the remote listed request id as pending.
func (l pendingList) listed(id string, decoded map[string]remote.Request) bool {
	_, ok := decoded[id]
	return ok || l.skipped[id] || l.blind
}

// listPending lists the pending requests. A partial answer (some requests
// undecodable) is used for the good ones; each bad one is logged once.
func (e *Engine) listPending(ctx context.Context, p *pass) (pendingList, error) {
	pending, err := e.remote.ListRequests(ctx)
	l := pendingList{requests: pending}
	var de *remote.DecodeError
	if errors.As(err, &de) {
		// The good requests go on; each bad one is reported once per
		// process (it stays bad on every pass until the service fixes it).
		l.skipped = make(map[string]bool, len(de.Skipped))
		for _, sk := range de.Skipped {
			if sk.ID == "" {
				l.blind = true
			} else {
				l.skipped[sk.ID] = true
			}
			if e.warnOnce(fmt.Sprintf("undecodable:%s:%d:%v", sk.ID, sk.Index, sk.Err)) {
				e.log.Warn(MsgBadRequest, zap.String(FieldRequest, sk.ID), zap.Int(FieldIndex, sk.Index),
					zap.String(FieldField, sk.Field), zap.Error(sk.Err))
			}
		}
		e.Metrics.Error(ErrKindList)
		err = nil
	}
	if err != nil {
		if errors.Is(err, remote.ErrUnauthorized) {
			e.Metrics.Error(ErrKindUnauthorized)
			return pendingList{}, fmt.Errorf("list pending requests: %w: %w", ErrUnauthorized, err)
		}
		e.Metrics.Error(ErrKindList)
		return pendingList{}, fmt.Errorf("list pending requests: %w", err)
	}
	p.summary.Pending = len(pending) + len(l.skipped)
	return l, nil
}

// classified is the pending list and the open rows sorted by what the
// accept stage does with them.
type classified struct {
	work     []acceptWork     // to reserve, accept or probe, soonest expiry first
	vanished []shopdb.Request // waiting, no longer pending: gone
}

// classify sorts the pending list and the open rows by what the accept
// stage does with them.
func (e *Engine) classify(p *pass, l pendingList, rows []shopdb.Request) classified {
	var c classified
	decoded := make(map[string]remote.Request, len(l.requests))
	for _, r := range l.requests {
		decoded[r.ID] = r
	}
	known := make(map[string]bool, len(rows))
	for i := range rows {
		r := &rows[i]
		known[r.RequestID] = true
		if r.Phase != shopdb.PhaseWaiting && r.Phase != shopdb.PhaseReserved {
			continue
		}
		req, ok := decoded[r.RequestID]
		switch {
		case ok:
			if p.due(*r) {
				c.work = append(c.work, acceptWork{req: req, row: r})
			}
		case l.listed(r.RequestID, decoded):
			// Listed but undecodable: still pending; nothing to conclude.
		case r.Phase == shopdb.PhaseWaiting:
			c.vanished = append(c.vanished, *r)
		case p.due(*r):
			// Reserved and no longer pending: our accept landed, or the
			// request expired or was withdrawn first. A repeated accept
			// with the same referenceId tells which (see probe).
			c.work = append(c.work, acceptWork{row: r, probe: true,
				req: remote.Request{ID: r.RequestID, ClaimNumber: r.ClaimNumber, Expiry: r.Expiry}})
		}
	}
	for _, req := range l.requests {
		if known[req.ID] {
			continue
		}
		if p.expired(req.Expiry) {
			if e.warnOnce("expired:" + req.ID) {
				e.log.Warn(MsgExpiredUnseen, zap.String(FieldRequest, req.ID), zap.String(FieldClaim, req.ClaimNumber), zap.Time(FieldExpiry, req.Expiry))
			}
			continue
		}
		c.work = append(c.work, acceptWork{req: req})
	}
	// Soonest expiry first; requests without an expiry last.
	work := c.work
	sort.SliceStable(work, func(i, j int) bool {
		a, b := work[i].req.Expiry, work[j].req.Expiry
		switch {
		case a.IsZero() != b.IsZero():
			return b.IsZero()
		case !a.Equal(b):
			return a.Before(b)
		default:
			return work[i].req.ID < work[j].req.ID
		}
	})
	return c
}

// cancelled reports whether the pass's context ended, and records why:
// the token refused (a failure), the pass timeout (a failure), or the
// caller's cancellation (an interruption, not a failure).
func (p *pass) cancelled(ctx context.Context) bool {
	if ctx.Err() == nil {
		return false
	}
	if p.ctxSeen {
		return true
	}
	p.ctxSeen = true
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, ErrUnauthorized):
		p.fail(cause)
	case errors.Is(cause, context.DeadlineExceeded):
		p.fail(fmt.Errorf("pass timed out after %s; the rest is left for the next pass", p.e.cfg.PassTimeout))
	default:
		p.interrupted = true
	}
	return true
}

// due reports whether a row's backoff has run out.
func (p *pass) due(r shopdb.Request) bool {
	return r.NextAttemptAt.IsZero() || !p.now.Before(r.NextAttemptAt)
}

// expired reports whether an expiry time has passed.
func (p *pass) expired(t time.Time) bool {
	return !t.IsZero() && !p.now.Before(t)
}

// acquire waits for one of the Concurrency slots for a remote call; false
// when ctx ended first. release gives the slot back after the call.
//
// Concurrency bounds the calls to the remote, not the database work
// around them: each runs twice as many requests at once, so that one
// request's state writes overlap another's remote call, and a pass is
// bounded by the remote's latency, the configured concurrency and the rate
// limit rather than by the shop database's commits.
func (p *pass) acquire(ctx context.Context) bool {
	select {
	case p.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (p *pass) release() { <-p.slots }

// each runs fn for 0..n-1 with at most 2×Concurrency at once (see
// acquire), in order of i, stopping early when ctx ends.
func (p *pass) each(ctx context.Context, n int, fn func(ctx context.Context, i int)) {
	sem := make(chan struct{}, 2*p.e.cfg.Concurrency)
	var wg gosync.WaitGroup
	for i := 0; i < n; i++ {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case sem <- struct{}{}:
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			fn(ctx, i)
		}(i)
	}
	wg.Wait()
}

// finish logs the pass's outcome, reports metrics and returns its error.
func (e *Engine) finish(p *pass, listErr error) error {
	p.summary.Duration = e.Now().Sub(p.now)
	errs := p.errs
	if listErr != nil {
		errs = append([]error{listErr}, errs...)
	}
	err := errors.Join(errs...)
	if p.interrupted && err == nil {
		err = ErrInterrupted
	}
	if p.dry {
		return err
	}
	counts := make(map[shopdb.Phase]int)
	for _, ph := range p.phases {
		if !ph.Terminal() {
			counts[ph]++
		}
	}
	e.Metrics.OpenPhases(counts)
	e.Metrics.PassDone(p.summary.Duration, err)
	s := p.summary
	fields := []zap.Field{
		zap.Duration(FieldDuration, s.Duration),
		zap.Int(FieldPending, s.Pending), zap.Int(FieldTracked, s.Tracked),
		zap.Int(FieldAccepted, s.Accepted), zap.Int(FieldDrafted, s.Drafted), zap.Int(FieldRedrafted, s.Redrafted),
		zap.Int(FieldSubmitted, s.Submitted), zap.Int(FieldRejected, s.Rejected), zap.Int(FieldGone, s.Gone),
		zap.Int(FieldHeld, s.Held), zap.Int(FieldWaiting, s.Waiting), zap.Int(FieldRetrying, s.Retrying),
		zap.Int(FieldSupplements, s.Supplements),
	}
	e.mu.Lock()
	streak, logFail := e.failStreak, false
	if err != nil {
		e.failStreak++
		streak = e.failStreak
		if streak == 1 || p.now.Sub(e.lastFailLog) >= failLogInterval {
			logFail, e.lastFailLog = true, p.now
		}
	} else {
		e.failStreak = 0
	}
	e.mu.Unlock()
	switch {
	case errors.Is(err, ErrInterrupted):
		e.log.Info(MsgInterrupted, fields...)
	case err != nil && logFail:
		msg := MsgPassFailed
		if errors.Is(err, ErrUnauthorized) {
			msg = MsgUnauthorized
		}
		e.log.Error(msg, append(fields, zap.Int(FieldConsecutiveErrors, streak), zap.Error(err))...)
	case err != nil:
		e.log.Debug(MsgPassFailed, append(fields, zap.Int(FieldConsecutiveErrors, streak), zap.Error(err))...)
	case streak > 0:
		e.log.Info(MsgRecovered, append(fields, zap.Int(FieldConsecutiveErrors, streak))...)
	case s.Changed():
		e.log.Info(MsgPassDone, fields...)
	default:
		e.log.Debug(MsgPassDone, fields...)
	}
	return err
}
