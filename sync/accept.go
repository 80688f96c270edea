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

// acceptAll reserves job numbers for new and waiting requests and accepts
// every reserved request that is still pending, at most Concurrency at a
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
	row := w.row
	if row == nil || row.Phase == shopdb.PhaseWaiting {
		r, ok := e.reserve(ctx, p, w)
		if !ok {
			return shopdb.Request{}, false
		}
		row = &r
	}
	if p.dry {
		p.plan(Action{Request: row.RequestID, Claim: row.ClaimNumber, Job: row.JobNumber, Phase: row.Phase,
			Do: DoAccept, Why: fmt.Sprintf("reserved job %s; the request is still pending", row.JobNumber)})
		return shopdb.Request{}, false
	}
	if p.expired(row.Expiry) {
		// Never accept an expired request; the row leaves the flow when the
		// request leaves the pending list.
		return shopdb.Request{}, false
	}
	return e.accept(ctx, p, *row)
}

// reserve allocates a job number for a request (find_job or create_job)
// and records it as reserved, in one shop transaction. In a dry run it only
// looks the job up.
func (e *Engine) reserve(ctx context.Context, p *pass, w acceptWork) (shopdb.Request, bool) {
	nr := shopdb.NewRequest{RequestID: w.req.ID, ClaimNumber: w.req.ClaimNumber, Expiry: w.req.Expiry, RequestJSON: w.req.Raw}
	if p.dry {
		e.planReserve(ctx, p, w, nr)
		return shopdb.Request{}, false
	}
	r, err := e.store.Reserve(ctx, nr)
	fields := []zap.Field{zap.String(FieldRequest, nr.RequestID), zap.String(FieldClaim, nr.ClaimNumber)}
	switch {
	case errors.Is(err, shopdb.ErrNoJob):
		p.count(func(s *Summary) { s.Waiting++ })
		if w.row == nil {
			p.setPhase(nr.RequestID, shopdb.PhaseWaiting)
			e.log.Info(MsgWaiting, append(fields, zap.String(FieldPhase, string(shopdb.PhaseWaiting)))...)
		}
		return shopdb.Request{}, false
	case errors.Is(err, shopdb.ErrJobInUse):
		e.Metrics.Error(ErrKindReserve)
		if e.warnOnce("jobinuse:" + nr.RequestID + ":" + err.Error()) {
			e.log.Warn(MsgJobInUse, append(fields, zap.Error(err))...)
		}
		return shopdb.Request{}, false
	case err != nil:
		e.Metrics.Error(ErrKindReserve)
		if ctx.Err() == nil {
			p.fail(fmt.Errorf("reserve a job for request %s: %w", nr.RequestID, err))
		}
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
	if !p.acquire(ctx) {
		return r, false
	}
	start := time.Now()
	_, err := e.remote.Accept(ctx, r.RequestID, r.JobNumber, r.BookingDate)
	d := time.Since(start)
	p.release()
	switch {
	case err == nil:
		next := r
		next.Phase = shopdb.PhaseAccepted
		next.Attempts, next.LastError, next.NextAttemptAt = 0, "", time.Time{}
		ev := callEvent(routeAccept, nil, r.Attempts+1, d)
		ev.Kind, ev.Status = shopdb.EventPhase, 201
		saved, ok := e.save(ctx, p, r, next, ev)
		if ok {
			p.count(func(s *Summary) { s.Accepted++ })
			e.log.Info(MsgAccepted, append(requestFields(saved), zap.Int(FieldAttempt, r.Attempts+1), zap.Duration(FieldDuration, d))...)
		}
		return saved, ok
	case ctx.Err() != nil:
		// Cancelled (shutdown, 401 elsewhere, pass timeout): the row stays
		// reserved and the next pass repairs whatever happened.
		return r, false
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

// acceptConflict handles a 409 to an accept. Either our own earlier accept
// landed (the request leaves the pending list and the next pass marks it
// accepted) or the job number is taken on the remote by another request;
// after MaxConflicts conflicts while the request stays pending, it is
// rejected so that a person can look.
func (e *Engine) acceptConflict(ctx context.Context, p *pass, r shopdb.Request, err error, d time.Duration) {
	streak := 1
	if isConflictStreak(r) {
		streak = r.Attempts + 1
	}
	if streak >= e.cfg.MaxConflicts {
		e.reject(ctx, p, r, routeAccept, fmt.Errorf("accept request %s with job %s refused as a conflict %d times while the request stays pending: the job number is probably used by another request on the remote; fix find_job/create_job, then run quotesync retry %s: %w",
			r.RequestID, r.JobNumber, streak, r.RequestID, err), d)
		return
	}
	next := r
	next.Attempts = streak
	next.LastError = conflictPrefix + err.Error()
	next.NextAttemptAt = time.Time{} // look again next pass
	if saved, ok := e.save(ctx, p, r, next, callEvent(routeAccept, err, streak, d)); ok {
		e.log.Warn(MsgAcceptConflict,
			append(requestFields(saved), zap.Int(FieldAttempt, streak), zap.Error(err))...)
	}
}

// markAcceptedInferred moves a reserved row whose request left the pending
// list to accepted: our accept landed even if its answer was lost.
func (e *Engine) markAcceptedInferred(ctx context.Context, p *pass, r shopdb.Request) (shopdb.Request, bool) {
	if p.dry {
		p.plan(Action{Request: r.RequestID, Claim: r.ClaimNumber, Job: r.JobNumber, Phase: r.Phase,
			Do: DoMarkAccepted, Why: "reserved and no longer pending: our accept landed"})
		return r, false
	}
	next := r
	next.Phase = shopdb.PhaseAccepted
	next.Attempts, next.LastError, next.NextAttemptAt = 0, "", time.Time{}
	saved, ok := e.save(ctx, p, r, next, shopdb.Event{Kind: shopdb.EventPhase,
		Message: "no longer pending after our accept was sent: accepted"})
	if ok {
		p.count(func(s *Summary) { s.Accepted++ })
		e.log.Info(MsgAcceptInferred, requestFields(saved)...)
	}
	return saved, ok
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
		fields := append(requestFields(saved), zap.String(FieldFrom, string(r.Phase)), zap.String("reason", why))
		if !r.Expiry.IsZero() {
			fields = append(fields, zap.Time("expiry", r.Expiry))
		}
		e.log.Warn(MsgGone, fields...)
	}
}

// unauthorized stops the pass: every other call would be refused too.
func (e *Engine) unauthorized(p *pass, err error) {
	e.Metrics.Error(ErrKindUnauthorized)
	p.stop(fmt.Errorf("%w: %w", ErrUnauthorized, err))
}
