package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// passKind says what a pass does besides its work.
type passKind int

const (
	passKeep passKind = iota // keeps what it read for the next pass (see cache.go)
	passLast                 // the engine's last: keeps nothing
	passDry                  // prints its plans, performs nothing (Plan)
)

// pass is the state of one pass in progress.
type pass struct {
	e    *Engine
	act  performer // performs the plans: the engine (the executor), or a dry run's printer
	keep bool      // keeps what it read for the next pass (see cache.go)
	now  time.Time

	stop  context.CancelCauseFunc // stops the whole pass (401)
	slots chan struct{}           // remote calls in flight, at most Concurrency

	mu      gosync.Mutex
	summary Summary
	actions []Action
	phases  map[string]store.Phase // request id → phase after the pass
	errs    []error                // pass-level failures

	interrupted bool // the caller cancelled the pass (shutdown)
	reported    bool // its end was handed to the performer (guarded by mu)
	ctxSeen     bool // cancelled has recorded why the context ended

	soft time.Time // no step starts after it: the rest waits for the next pass

	fp         *shopdb.Fingerprint  // read first, when shop_changed is configured
	cachedAt   time.Time            // when the rows the pass works on were read
	shop       jobStates            // the estimate states the pass read
	rowsCached bool                 // the rows the pass works on are a copy of the cache's
	notes      []store.MarkerUpdate // markers to remember, written at once
	ahead      *statesRun           // estimate states read ahead (statesAhead)
	// counterLocked is create_job's first lock wait in this pass: the
	// reservations after it that need create_job wait for the next pass
	// without queueing behind the same lock.
	counterLocked atomic.Pointer[error]
	// creating lets one reservation that runs create_job go at a time,
	// until its transaction ended and a lock wait of its create_job is in
	// counterLocked: reservations run side by side, and without it each
	// that started before the first lock wait ended would wait
	// shop.lock_wait too, holding a pooled connection. create_jobs of one
	// counter wait for each other on the server anyway.
	creating gosync.Mutex
}

// add adds n to count, a count of p's summary.
func (p *pass) add(count *int, n int) {
	p.mu.Lock()
	*count += n
	p.mu.Unlock()
}

// note remembers a job's marker to write with the others at the end of the
// push stage.
func (p *pass) note(u store.MarkerUpdate) {
	p.mu.Lock()
	p.notes = append(p.notes, u)
	p.mu.Unlock()
}

// fail records a pass-level failure.
func (p *pass) fail(err error) {
	p.mu.Lock()
	p.errs = append(p.errs, err)
	p.mu.Unlock()
}

// written counts a change the executor committed for this pass: the
// request's phase after the pass, and its event in the summary.
func (p *pass) written(saved store.Request, ev Event) {
	p.mu.Lock()
	p.phases[saved.RequestID] = saved.Phase
	if ev.Kind != "" {
		p.summary.count(ev)
	}
	p.mu.Unlock()
}

func (e *Engine) pass(ctx context.Context, kind passKind) (_ *pass, err error) {
	p := &pass{e: e, act: e, keep: kind == passKeep, now: e.Now(), phases: make(map[string]store.Phase),
		slots: make(chan struct{}, e.cfg.Concurrency)}
	if kind == passDry {
		p.act = printer{e} // the one place a dry run differs: the performer (plan.go)
	}
	defer func() { // runs last: the pass's own deferred clean-up is done
		if v := recover(); v != nil {
			err = e.passPanicked(p, v)
		}
	}()
	e.passStart.Store(time.Now().UnixNano())
	defer e.passStart.Store(0)
	p.soft = time.Now().Add(e.cfg.PassTimeout * 8 / 10)
	ctx, cancel := context.WithTimeout(ctx, e.cfg.PassTimeout)
	defer cancel()
	ctx, p.stop = context.WithCancelCause(ctx)
	defer p.stop(nil)
	p.ahead = e.statesAhead(ctx, p)
	defer func() { p.ahead.stop() }()

	pending, listErr := e.listPending(ctx, p)
	if errors.Is(listErr, remote.ErrUnauthorized) {
		return p, e.finish(p, nil, listErr)
	}
	if p.cancelled(ctx) {
		return p, e.finish(p, nil, nil)
	}
	rows, err := e.readRows(ctx, p, pending)
	switch {
	case err != nil && p.act.untracked(err):
		rows = nil // a dry run on a fresh install: plan as if nothing were tracked
	case err != nil && p.cancelled(ctx):
		return p, e.finish(p, nil, nil)
	case err != nil:
		return p, e.finish(p, nil, fmt.Errorf("load open requests: %w", err))
	}
	p.summary.Tracked = len(rows)
	for _, r := range rows {
		p.phases[r.RequestID] = r.Phase
	}
	read := rows
	var behind []acceptStep
	if listErr == nil {
		steps, later := sliceNew(classify(p.now, pending, rows), e.cfg.MaxNewPerPass)
		p.add(&p.summary.Later, later)
		steps, behind = behindShopLock(steps)
		if accepted := e.acceptAll(ctx, p, steps); len(accepted) > 0 {
			rows = append(slices.Clone(rows), accepted...)
		}
	}
	if ctx.Err() == nil {
		e.loadStatusForm(ctx)
		e.pushAll(ctx, p, rows)
	}
	if len(behind) > 0 && ctx.Err() == nil {
		// Tried last: while the shop's program keeps its lock, each waits
		// shop.lock_wait again, and the pushes above did not wait for it.
		// One accepted now has its Draft pushed by the next pass.
		if accepted := e.acceptAll(ctx, p, behind); len(accepted) > 0 {
			rows = append(slices.Clone(rows), accepted...)
		}
	}
	p.cancelled(ctx)
	err = e.finish(p, rows, listErr)
	e.keepCache(p, read, pending.ids(), err)
	return p, err
}

// sliceNew keeps at most max steps that take a new request on (reserve),
// soonest expiry first as classify sorted them; it returns how many it
// left for a later pass. max < 0: no bound.
func sliceNew(steps []acceptStep, max int) ([]acceptStep, int) {
	if max < 0 {
		return steps, 0
	}
	kept, later, n := steps[:0:0], 0, 0
	for _, st := range steps {
		if st.kind == stepReserve {
			if n >= max {
				later++
				continue
			}
			n++
		}
		kept = append(kept, st)
	}
	return kept, later
}

// openQuery selects the rows a pass reads: every open one, the submitted
// ones still watched for changes, and those of the listed requests (so
// that a request quotesync knows, in whatever phase, is never taken for a
// new one).
func (e *Engine) openQuery(now time.Time, l pendingList) store.OpenQuery {
	q := store.OpenQuery{Phases: openPhases(), IDs: l.ids()}
	if e.cfg.WatchSubmitted > 0 {
		q.Recent, q.Since = []store.Phase{PhaseSubmitted}, now.Add(-e.cfg.WatchSubmitted)
	}
	return q
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
// acquire), in order of i, stopping early when ctx ends, and starting
// nothing once the pass has used most of its time (the soft deadline): what
// is left waits for the next pass, and the pass ends well.
func (p *pass) each(ctx context.Context, n int, fn func(ctx context.Context, i int)) {
	sem := make(chan struct{}, 2*p.e.cfg.Concurrency)
	var wg gosync.WaitGroup
	for i := 0; i < n; i++ {
		if !p.soft.IsZero() && time.Now().After(p.soft) {
			p.add(&p.summary.Later, n-i)
			break
		}
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case sem <- struct{}{}:
		}
		wg.Go(func() {
			defer func() { <-sem }()
			defer func() {
				if v := recover(); v != nil {
					p.fail(p.e.recovered(v))
				}
			}()
			fn(ctx, i)
		})
	}
	wg.Wait()
}

// finish ends the pass: its outcome, reported by its performer (rows are
// those it worked on, nil when it stopped early), and returned.
func (e *Engine) finish(p *pass, rows []store.Request, listErr error) error {
	p.summary.Duration = e.Now().Sub(p.now)
	p.summary.Interrupted = p.interrupted
	errs := p.errs
	if listErr != nil {
		errs = append([]error{listErr}, errs...)
	}
	err := errors.Join(errs...)
	if p.interrupted && err == nil {
		err = ErrInterrupted
	}
	p.mu.Lock()
	p.reported = true
	p.mu.Unlock()
	p.act.finished(p, rows, err)
	return err
}

// untracked: the executor's pass fails when quotesync's rows cannot be
// read, whatever the reason; the tables exist once the daemon started.
func (e *Engine) untracked(error) bool { return false }

// finished reports the end of a pass the executor performed: the streak
// of failed passes, EventPassDone, and the notices of requests close to
// their expiry.
func (e *Engine) finished(p *pass, rows []store.Request, err error) {
	streak := int(e.failStreak.Load())
	switch {
	case err != nil && !errors.Is(err, ErrInterrupted):
		streak = int(e.failStreak.Add(1))
	case err == nil:
		e.failStreak.Store(0)
		e.heldExamined.Store(true)
	}
	s := p.summary
	e.emit(Event{Kind: EventPassDone, At: e.Now(), Summary: &s, Err: err, Streak: streak, Duration: s.Duration})
	e.outbox.watchExpiry(e.cfg.Insurer, p.now, rows, p.phases)
}
