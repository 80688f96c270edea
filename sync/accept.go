package sync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
)

// routeAccept is the route name of the accept call in events and logs.
const routeAccept = "POST /requests/{id}"

// acceptAll reserves job numbers for new and waiting requests, accepts
// every reserved request that is still pending, and probes the reserved
// ones that left the pending list, at most Concurrency remote calls at a
// time. It returns the rows that ended the stage accepted, for the push
// stage of the same pass.
func (e *Engine) acceptAll(ctx context.Context, p *pass, work []acceptWork) []shopdb.Request {
	out := make([]*shopdb.Request, len(work))
	p.each(ctx, len(work), func(ctx context.Context, i int) {
		if r, ok := e.acceptOne(ctx, p, work[i]); ok {
			out[i] = &r
		}
	})
	var accepted []shopdb.Request
	for _, r := range out {
		if r != nil && r.Phase == shopdb.PhaseAccepted {
			accepted = append(accepted, *r)
		}
	}
	return accepted
}

// acceptOne takes one request through reserve (when it has no job number
// yet) and accept. It returns the row when it ended accepted by this call.
func (e *Engine) acceptOne(ctx context.Context, p *pass, w acceptWork) (shopdb.Request, bool) {
	if w.probe {
		return e.probe(ctx, p, *w.row)
	}
	row := w.row
	if row == nil || row.Phase == shopdb.PhaseWaiting {
		r, ok := e.reserve(ctx, p, w)
		if !ok {
			return shopdb.Request{}, false
		}
		row = &r
	}
	if p.expired(row.Expiry) {
		// Never accept an expired request. When it leaves the pending list,
		// the probe finds it expired (404/410) and the row goes gone.
		return shopdb.Request{}, false
	}
	if p.dry {
		p.plan(Action{Request: row.RequestID, Claim: row.ClaimNumber, Job: row.JobNumber, Phase: row.Phase,
			Do: DoAccept, Why: fmt.Sprintf("reserved job %s; the request is still pending", row.JobNumber)})
		return shopdb.Request{}, false
	}
	return e.accept(ctx, p, *row)
}

// reserve allocates a job number for a request (find_job or create_job)
// and records it as reserved, in one shop transaction. In a dry run it only
// looks the job up. A request that cannot be reserved is recorded as
// waiting with the reason and a backoff (see deferReserve).
func (e *Engine) reserve(ctx context.Context, p *pass, w acceptWork) (shopdb.Request, bool) {
	nr := shopdb.NewRequest{RequestID: w.req.ID, ClaimNumber: w.req.ClaimNumber, Expiry: w.req.Expiry, RequestJSON: w.req.Raw}
	if p.dry {
		e.planReserve(ctx, p, w, nr)
		return shopdb.Request{}, false
	}
	r, err := e.store.Reserve(ctx, nr)
	switch {
	case errors.Is(err, shopdb.ErrNoJob):
		p.count(func(s *Summary) { s.Waiting++ })
		if w.row == nil {
			p.setPhase(nr.RequestID, shopdb.PhaseWaiting)
			e.log.Info(MsgWaiting, zap.String(FieldRequest, nr.RequestID), zap.String(FieldClaim, nr.ClaimNumber),
				zap.String(FieldPhase, string(shopdb.PhaseWaiting)))
		}
		return shopdb.Request{}, false
	case err != nil && ctx.Err() != nil:
		return shopdb.Request{}, false // shutdown: the next pass tries again
	case err != nil:
		e.deferReserve(ctx, p, w, nr, err)
		return shopdb.Request{}, false
	}
	if r.Phase != shopdb.PhaseReserved {
		// Another instance got there first; its row is authoritative.
		return shopdb.Request{}, false
	}
	p.count(func(s *Summary) { s.Reserved++ })
	p.setPhase(r.RequestID, r.Phase)
	e.Metrics.Transition(shopdb.PhaseWaiting, shopdb.PhaseReserved)
	e.log.Info(MsgReserved, requestFields(r)...)
	return r, true
}

// deferReserve records a request whose job number could not be allocated
// (a create_job statement failed, find_job returned a job another request
// holds, …): a waiting row with the reason, visible in status, tried again
// after a backoff. The other requests go on, and the pass does not fail:
// fixing the mapping or the shop's data releases it on a later pass.
func (e *Engine) deferReserve(ctx context.Context, p *pass, w acceptWork, nr shopdb.NewRequest, cause error) {
	e.Metrics.Error(ErrKindReserve)
	p.count(func(s *Summary) { s.Retrying++ })
	attempts, last := 0, ""
	if w.row != nil {
		attempts, last = w.row.Attempts, w.row.LastError
	}
	reason := capText(cause.Error())
	next := p.now.Add(e.backoff(attempts+1, 0))
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	r, err := e.store.Defer(wctx, nr, reason, next)
	if err != nil {
		e.Metrics.Error(ErrKindState)
		p.fail(fmt.Errorf("record request %s as waiting: %w (it could not be reserved: %v)", nr.RequestID, err, cause))
		return
	}
	p.setPhase(r.RequestID, r.Phase)
	if reason != last {
		e.log.Warn(MsgReserveFailed, append(requestFields(r), zap.Int(FieldAttempt, r.Attempts),
			zap.Time(FieldNext, r.NextAttemptAt), zap.Error(cause))...)
	}
}

// planReserve records what reserve would do.
func (e *Engine) planReserve(ctx context.Context, p *pass, w acceptWork, nr shopdb.NewRequest) {
	a := Action{Request: nr.RequestID, Claim: nr.ClaimNumber}
	if w.row != nil {
		a.Phase = w.row.Phase
	}
	job, create, err := e.store.PlanReserve(ctx, nr)
	switch {
	case errors.Is(err, shopdb.ErrNoJob):
		a.Do, a.Why = DoWait, "find_job finds no job and no create_job is configured"
	case err != nil:
		a.Do, a.Why = DoSkip, err.Error()
	case create:
		a.Do, a.Why = DoCreateJob, "find_job finds no job; create_job would make one"
	default:
		a.Job, a.Do, a.Why = job, DoReserve, "find_job finds job "+job
	}
	p.plan(a)
}

// accept sends the accept call for a reserved row and records its outcome.
func (e *Engine) accept(ctx context.Context, p *pass, r shopdb.Request) (shopdb.Request, bool) {
	d, sent, err := e.sendAccept(ctx, p, r)
	if !sent {
		return r, false
	}
	switch {
	case err == nil:
		return e.markAccepted(ctx, p, r, 201, d, "")
	case ctx.Err() != nil:
		// Cancelled (shutdown, 401 elsewhere, pass timeout): the row stays
		// reserved and the next pass repairs whatever happened.
	case errors.Is(err, remote.ErrUnauthorized):
		e.unauthorized(p, err)
	case errors.Is(err, remote.ErrNotFound):
		e.markGone(ctx, p, r, fmt.Sprintf("the remote no longer knows the request (%v)", err))
	case errors.Is(err, remote.ErrConflict):
		e.acceptConflict(ctx, p, r, err, d)
	case errors.Is(err, remote.ErrRejected):
		e.reject(ctx, p, r, routeAccept, fmt.Errorf("accept request %s with job %s: %w", r.RequestID, r.JobNumber, err), d)
	default:
		e.retryLater(ctx, p, r, routeAccept, err, d)
	}
	return r, false
}

// probe settles a reserved row whose request left the pending list: either
// our accept landed (perhaps with its answer lost), or the request expired,
// was withdrawn or was taken before it did. The accept is sent again with
// the same referenceId, which cannot accept the request twice: a 409 (the
// request is accepted already) confirms ours, a 404 or 410 says it is gone,
// a success means it was still open after all.
func (e *Engine) probe(ctx context.Context, p *pass, r shopdb.Request) (shopdb.Request, bool) {
	if p.dry {
		p.plan(Action{Request: r.RequestID, Claim: r.ClaimNumber, Job: r.JobNumber, Phase: r.Phase, Do: DoConfirm,
			Why: "reserved and no longer pending: a repeated accept tells whether ours landed"})
		return r, false
	}
	d, sent, err := e.sendAccept(ctx, p, r)
	if !sent {
		return r, false
	}
	switch {
	case err == nil:
		return e.markAccepted(ctx, p, r, 201, d, "")
	case ctx.Err() != nil:
	case errors.Is(err, remote.ErrConflict):
		return e.markAccepted(ctx, p, r, statusOf(err), d,
			"left the pending list, and a repeated accept with the same referenceId answered 409: ours had landed")
	case errors.Is(err, remote.ErrUnauthorized):
		e.unauthorized(p, err)
	case errors.Is(err, remote.ErrNotFound):
		e.markGone(ctx, p, r, fmt.Sprintf("the request left the pending list before our accept landed (%v)", err))
	case errors.Is(err, remote.ErrRejected):
		e.reject(ctx, p, r, routeAccept, fmt.Errorf("confirm the accept of request %s with job %s: %w", r.RequestID, r.JobNumber, err), d)
	default:
		e.retryLater(ctx, p, r, routeAccept, err, d)
	}
	return r, false
}

// sendAccept sends the accept of a reserved row under a remote-call slot;
// sent is false when the pass ended before a slot was free.
func (e *Engine) sendAccept(ctx context.Context, p *pass, r shopdb.Request) (d time.Duration, sent bool, err error) {
	if !p.acquire(ctx) {
		return 0, false, nil
	}
	defer p.release()
	start := time.Now()
	_, err = e.remote.Accept(ctx, r.RequestID, r.JobNumber, r.BookingDate)
	return time.Since(start), true, err
}

// markAccepted records a confirmed acceptance. inferred, when not empty,
// says how a lost answer was confirmed.
func (e *Engine) markAccepted(ctx context.Context, p *pass, r shopdb.Request, status int, d time.Duration, inferred string) (shopdb.Request, bool) {
	next := r
	next.Phase = shopdb.PhaseAccepted
	next.Attempts, next.LastError, next.NextAttemptAt = 0, "", time.Time{}
	ev := callEvent(routeAccept, nil, r.Attempts+1, d)
	ev.Kind, ev.Status, ev.Message = shopdb.EventPhase, status, inferred
	saved, ok := e.save(ctx, p, r, next, ev)
	if !ok {
		return saved, false
	}
	p.count(func(s *Summary) { s.Accepted++ })
	msg := MsgAccepted
	if inferred != "" {
		msg = MsgAcceptInferred
	}
	e.log.Info(msg, append(requestFields(saved), zap.Int(FieldAttempt, r.Attempts+1), zap.Int(FieldStatus, status),
		zap.Duration(FieldDuration, d))...)
	return saved, true
}

// acceptConflict handles a 409 to an accept while the request is still
// pending: the job number is taken on the remote by another request (our
// own landed accept would have taken the request off the pending list).
// One 409 can be a race with the list, so the next pass looks again; after
// MaxConflicts in a row the request is rejected, back to waiting without a
// job number, so that `quotesync retry` allocates one again after the shop
// or the mapping is fixed.
func (e *Engine) acceptConflict(ctx context.Context, p *pass, r shopdb.Request, err error, d time.Duration) {
	streak := 1
	if isConflictStreak(r) {
		streak = r.Attempts + 1
	}
	if streak >= e.cfg.MaxConflicts {
		reason := fmt.Errorf("accept request %s with job %s refused as a conflict %d times while the request stays pending: the remote has job number %s for another request; give the shop's job another number (or fix find_job/create_job), then run quotesync retry %s, which looks the job up again: %w",
			r.RequestID, r.JobNumber, streak, r.JobNumber, r.RequestID, err)
		next := r
		next.JobNumber = ""
		e.rejectAs(ctx, p, r, next, shopdb.PhaseWaiting, routeAccept, reason, d)
		return
	}
	next := r
	next.Attempts = streak
	next.LastError = conflictPrefix + err.Error()
	next.NextAttemptAt = time.Time{} // look again next pass
	if saved, ok := e.save(ctx, p, r, next, callEvent(routeAccept, err, streak, d)); ok {
		e.log.Warn(MsgAcceptConflict, append(requestFields(saved), zap.Int(FieldAttempt, streak), zap.Error(err))...)
	}
}

// markGone moves a waiting or reserved row to gone.
func (e *Engine) markGone(ctx context.Context, p *pass, r shopdb.Request, why string) {
	if p.dry {
		p.plan(Action{Request: r.RequestID, Claim: r.ClaimNumber, Job: r.JobNumber, Phase: r.Phase, Do: DoMarkGone, Why: why})
		return
	}
	next := r
	next.Phase = shopdb.PhaseGone
	next.LastError = why
	next.NextAttemptAt = time.Time{}
	saved, ok := e.save(ctx, p, r, next, shopdb.Event{Kind: shopdb.EventPhase, Message: why})
	if ok {
		p.count(func(s *Summary) { s.Gone++ })
		fields := append(requestFields(saved), zap.String(FieldFrom, string(r.Phase)), zap.String(FieldReason, why))
		if !r.Expiry.IsZero() {
			fields = append(fields, zap.Time(FieldExpiry, r.Expiry))
		}
		e.log.Warn(MsgGone, fields...)
	}
}

// unauthorized stops the pass: every other call would be refused too.
func (e *Engine) unauthorized(p *pass, err error) {
	e.Metrics.Error(ErrKindUnauthorized)
	p.stop(fmt.Errorf("%w: %w", ErrUnauthorized, err))
}
