package sync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
)

// routeAccept is the route name of the accept call in events and logs.
const routeAccept = "POST /requests/{id}"

// acceptAll performs the accept stage's steps, at most Concurrency remote
// calls at a time. It returns the rows that ended the stage accepted (or
// probably accepted: the first push confirms those), for the push stage of
// the same pass.
func (e *Engine) acceptAll(ctx context.Context, p *pass, steps []acceptStep) []shopdb.Request {
	out := make([]*shopdb.Request, len(steps))
	p.each(ctx, len(steps), func(ctx context.Context, i int) {
		if r, ok := e.acceptOne(ctx, p, steps[i]); ok {
			out[i] = &r
		}
	})
	var accepted []shopdb.Request
	for _, r := range out {
		if r != nil {
			accepted = append(accepted, *r)
		}
	}
	return accepted
}

// acceptOne performs one step; it returns the row when the step ended with
// the request accepted.
func (e *Engine) acceptOne(ctx context.Context, p *pass, st acceptStep) (shopdb.Request, bool) {
	switch st.kind {
	case stepExpired:
		e.record(ctx, p, decideGoneUnseen(st.req), DoMarkGone)
		return shopdb.Request{}, false
	case stepVanished:
		e.record(ctx, p, decideVanished(p.now, *st.row), DoMarkGone)
		return shopdb.Request{}, false
	case stepRelist:
		if p.dry {
			p.plan(actionOf(*st.row, DoAccept, "the remote lists the request as pending again: our accept did not land"))
			return shopdb.Request{}, false
		}
		row, ok := e.apply(ctx, p, decideRelisted(*st.row))
		if !ok {
			return row, false
		}
		return e.accept(ctx, p, row, true, false)
	case stepReserve:
		row, ok := e.reserve(ctx, p, st)
		if !ok {
			return shopdb.Request{}, false
		}
		return e.accept(ctx, p, row, true, false)
	case stepAccept:
		return e.accept(ctx, p, *st.row, true, true)
	case stepProbe:
		if p.dry {
			p.plan(actionOf(*st.row, DoConfirm, "reserved and no longer pending: a repeated accept tells whether ours landed"))
			return shopdb.Request{}, false
		}
		return e.accept(ctx, p, *st.row, false, true)
	}
	return shopdb.Request{}, false
}

// record applies a change that needs no remote call, or plans it.
func (e *Engine) record(ctx context.Context, p *pass, ch change, do string) {
	if p.dry {
		a := actionOf(ch.cur, do, ch.next.LastError)
		if ch.cur.Version == 0 {
			a = actionOf(ch.next, do, ch.next.LastError)
			a.Phase = ""
		}
		p.plan(a)
		return
	}
	e.apply(ctx, p, ch)
}

// actionOf is a dry run's action on row.
func actionOf(r shopdb.Request, do, why string) Action {
	return Action{Request: r.RequestID, Claim: r.ClaimNumber, Job: r.JobNumber, Phase: r.Phase, Do: do, Why: why}
}

// reserve gives a request a job number (find_job, else create_job) and
// records it reserved, in one shop transaction: a job create_job made and
// the row that records it commit together or not at all. A request the
// shop has no job for is recorded waiting (once); one whose job cannot be
// found or created waits with the reason and a backoff. In a dry run it
// only looks the job up.
func (e *Engine) reserve(ctx context.Context, p *pass, st acceptStep) (shopdb.Request, bool) {
	nr := shopdb.NewRequest{RequestID: st.req.ID, ClaimNumber: st.req.ClaimNumber, Expiry: st.req.Expiry, RequestJSON: st.req.Raw}
	if p.dry {
		e.planReserve(ctx, p, st, nr)
		return shopdb.Request{}, false
	}
	var (
		wait  bool           // the shop has no job for it
		other shopdb.Request // the row another instance reserved first
		tried string         // the job number tried
	)
	saved, ev, done, err := e.commitTx(ctx, nr, func(ctx context.Context, tx *shopdb.Tx) (change, bool, error) {
		cur, err := tx.Request(ctx)
		switch {
		case err == nil && cur.Phase != PhaseWaiting:
			other = cur // another instance reserved it first
			return change{}, false, nil
		case errors.Is(err, shopdb.ErrNotFound):
			cur = shopdb.Request{}
		case err != nil:
			return change{}, false, err
		}
		var o reserveOutcome
		if o.job, err = tx.FindJob(ctx); err != nil {
			return change{}, false, err
		}
		if o.job == "" && tx.CanCreateJob() {
			if o.job, err = tx.CreateJob(ctx); err != nil {
				return change{}, false, err
			}
			o.created = true
		}
		tried = o.job
		if o.job == "" {
			wait = true
			ch, ok := decideWaiting(cur, st.req)
			return ch, ok, nil
		}
		if o.booking, err = tx.BookingDate(ctx, o.job); err != nil {
			return change{}, false, err
		}
		return decideReserved(p.now, cur, st.req, o), true, nil
	})
	switch {
	case err == nil && other.Version != 0:
		return shopdb.Request{}, false
	case err == nil && wait:
		p.countWaiting()
		if done {
			p.written(saved, ev)
		}
		return shopdb.Request{}, false
	case err == nil:
		p.written(saved, ev)
		p.reserved(saved.RequestID)
		return saved, true
	case ctx.Err() != nil:
		return shopdb.Request{}, false // shutdown: the next pass tries again
	case errors.Is(err, shopdb.ErrExists):
		return shopdb.Request{}, false // another instance recorded it first; its row is authoritative
	case errors.As(err, new(*ErrTransition)):
		p.fail(err)
		return shopdb.Request{}, false
	case errors.Is(err, shopdb.ErrJobInUse):
		if holder, herr := e.store.JobHolder(ctx, tried); herr == nil && holder != "" && holder != nr.RequestID {
			err = fmt.Errorf("reserve request %s: job %s is already linked to request %s: %w", nr.RequestID, tried, holder, err)
		}
	}
	err = fmt.Errorf("reserve request %s: %w", nr.RequestID, err)
	if shopdb.IsTooLong(err) {
		// The shop refuses a value of this request as longer than its
		// column: a fault of this request's data, rejected (the others go
		// on), never tried again on its own.
		e.recordUnreserved(ctx, p, st, func(cur shopdb.Request) change { return decideTooLong(cur, st.req, err) })
		return shopdb.Request{}, false
	}
	e.deferReserve(ctx, p, st, err)
	return shopdb.Request{}, false
}

// deferReserve records a request whose job number could not be allocated
// (a create_job statement failed, find_job returned a job another request
// holds, …): a waiting row with the reason, visible in status, tried again
// after a backoff. The other requests go on, and the pass does not fail:
// fixing the mapping or the shop's data releases it on a later pass. The
// row is read locked and written in one transaction, so that two daemons
// deferring at once count every attempt.
func (e *Engine) deferReserve(ctx context.Context, p *pass, st acceptStep, cause error) {
	now, jitter := e.Now(), e.Rand()
	e.recordUnreserved(ctx, p, st, func(cur shopdb.Request) change { return decideReserveFailed(e.cfg, now, jitter, cur, st.req, cause) })
}

// recordUnreserved commits decide's change of a request that could not be
// reserved (cur is its waiting row, or the zero row when it has none),
// unless another instance reserved it meanwhile.
func (e *Engine) recordUnreserved(ctx context.Context, p *pass, st acceptStep, decide func(cur shopdb.Request) change) {
	nr := shopdb.NewRequest{RequestID: st.req.ID, ClaimNumber: st.req.ClaimNumber, Expiry: st.req.Expiry, RequestJSON: st.req.Raw}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	for range 5 { // a row inserted meanwhile by another instance: lock it and decide again
		saved, ev, done, err := e.commitTx(wctx, nr, func(ctx context.Context, tx *shopdb.Tx) (change, bool, error) {
			cur, err := tx.Request(ctx)
			switch {
			case errors.Is(err, shopdb.ErrNotFound):
				cur = shopdb.Request{}
			case err != nil:
				return change{}, false, err
			case cur.Phase != PhaseWaiting:
				return change{}, false, nil // reserved by another instance meanwhile
			}
			return decide(cur), true, nil
		})
		switch {
		case errors.Is(err, shopdb.ErrExists):
			continue
		case err != nil:
			p.fail(fmt.Errorf("record request %s: %w (it could not be reserved)", st.req.ID, err))
		case done:
			p.written(saved, ev)
		}
		return
	}
}

// planReserve records what reserve would do.
func (e *Engine) planReserve(ctx context.Context, p *pass, st acceptStep, nr shopdb.NewRequest) {
	a := Action{Request: nr.RequestID, Claim: nr.ClaimNumber}
	if st.row != nil {
		a.Phase = st.row.Phase
	}
	err := e.store.ReadTx(ctx, nr, func(ctx context.Context, tx *shopdb.Tx) error {
		if cur, err := tx.Request(ctx); err == nil && cur.JobNumber != "" {
			a.Job, a.Do, a.Why = cur.JobNumber, DoAccept, "reserved job "+cur.JobNumber
			return nil
		}
		job, err := tx.FindJob(ctx)
		switch {
		case err != nil:
			return err
		case job != "":
			a.Job, a.Do, a.Why = job, DoReserve, "find_job finds job "+job
		case tx.CanCreateJob():
			a.Do, a.Why = DoCreateJob, "find_job finds no job; create_job would make one"
		default:
			a.Do, a.Why = DoWait, "find_job finds no job and no create_job is configured"
		}
		return nil
	})
	if err != nil {
		a.Do, a.Why = DoSkip, err.Error()
	}
	p.plan(a)
}

// accept sends the accept for a reserved row and records its outcome.
// listed says the remote listed the request as pending in this pass;
// maybeLanded that an earlier accept of ours may have landed.
func (e *Engine) accept(ctx context.Context, p *pass, r shopdb.Request, listed, maybeLanded bool) (shopdb.Request, bool) {
	if listed && expired(p.now, r.Expiry) {
		// Never accept an expired request. When it leaves the pending list,
		// the probe finds it expired and the row goes gone.
		return r, false
	}
	if p.dry {
		p.plan(actionOf(r, DoAccept, fmt.Sprintf("reserved job %s; the request is still pending", r.JobNumber)))
		return r, false
	}
	if p.reservedNow(r.RequestID) {
		maybeLanded = false // reserved by this pass: no accept was sent before
	}
	if !p.acquire(ctx) {
		return r, false
	}
	start := time.Now()
	_, err := e.remote.Accept(ctx, r.RequestID, r.JobNumber, r.BookingDate)
	d := time.Since(start)
	p.release()
	switch {
	case err != nil && ctx.Err() != nil:
		// Cancelled (shutdown, 401 elsewhere, pass timeout): the row stays
		// reserved and the next pass repairs whatever happened.
		return r, false
	case errors.Is(err, remote.ErrUnauthorized):
		e.unauthorized(p, err)
		return r, false
	}
	ch, ok := decideAccept(e.cfg, r, acceptFacts{now: e.Now(), jitter: e.Rand(), listed: listed, maybeLanded: maybeLanded,
		err: err, d: d, maxConflict: e.cfg.MaxConflicts})
	if !ok {
		return r, false
	}
	saved, ok := e.apply(ctx, p, ch)
	return saved, ok && (saved.Phase == PhaseAccepted || saved.Phase == PhaseAcceptUnknown)
}

// unauthorized stops the pass: every other call would be refused too.
func (e *Engine) unauthorized(p *pass, err error) {
	p.stop(fmt.Errorf("%w: %w", ErrUnauthorized, err))
}
