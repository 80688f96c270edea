package sync

import (
	"context"
	"errors"
	"fmt"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// routeAccept is the route name of the accept call in events and logs.
const routeAccept = "POST /requests/{id}"

// acceptAll performs the accept stage's steps, at most Concurrency remote
// calls at a time. It returns the rows that ended the stage accepted (or
// probably accepted: the first push confirms those), for the push stage of
// the same pass.
func (e *Engine) acceptAll(ctx context.Context, p *pass, steps []acceptStep) []store.Request {
	out := make([]*store.Request, len(steps))
	p.each(ctx, len(steps), func(ctx context.Context, i int) {
		pl := planAccept(p.now, steps[i])
		if r, ok := p.act.perform(ctx, p, pl); ok && pl.call.kind == callAccept {
			out[i] = &r
		}
	})
	var accepted []store.Request
	for _, r := range out {
		if r != nil {
			accepted = append(accepted, *r)
		}
	}
	return accepted
}

// reserve performs a plan's reservation: it gives the request a job number
// (find_job, else create_job) and records it reserved, in one shop
// transaction: a job create_job made and the row that records it commit
// together or not at all, and a request another writer reserved first is
// left to it. A request the shop has no job for is recorded waiting
// (once); one whose job cannot be found or created waits with the reason
// and a backoff. It returns the reserved row.
func (e *Engine) reserve(ctx context.Context, p *pass, req remote.Request) (store.Request, bool) {
	nr := newRequestOf(requestRow(req))
	var (
		kind         reserveKind
		tried        string // the job number tried
		creating     bool   // this reservation holds p.creating
		createWaited bool   // create_job itself waited for a lock
	)
	defer func() {
		if creating {
			p.creating.Unlock()
		}
	}()
	saved, ev, done, err := e.commitTx(ctx, nr, func(ctx context.Context, tx *store.Tx, jobs *shopdb.Jobs) (change, bool, error) {
		f, err := readReserveFacts(ctx, tx, jobs)
		if err != nil {
			return change{}, false, err
		}
		job, created := f.job, false
		switch kind = decideReserve(f); kind {
		case reserveTaken:
			return change{}, false, nil
		case reserveWait:
			ch, ok := decideWaiting(f.cur, req)
			return ch, ok, nil
		case reserveCreate:
			// One create_job of the pass at a time, until its
			// reservation's end is known (p.creating).
			if !creating {
				p.creating.Lock()
				creating = true
			}
			if first := p.counterLocked.Load(); first != nil {
				return change{}, false, lockedBefore{*first}
			}
			if job, err = jobs.Create(ctx); err != nil {
				createWaited = shopdb.IsLockWait(err)
				return change{}, false, err
			}
			created = true
		}
		tried = job
		booking, err := jobs.BookingDate(ctx, job)
		if err != nil {
			return change{}, false, err
		}
		return decideReserved(f.cur, req, job, created, booking), true, nil
	})
	switch {
	case err == nil && kind == reserveTaken:
		return store.Request{}, false
	case err == nil:
		if done {
			p.written(saved, ev)
		}
		if kind == reserveWait {
			p.add(&p.summary.Waiting, 1)
			return store.Request{}, false
		}
		return saved, true
	case ctx.Err() != nil:
		return store.Request{}, false // shutdown: the next pass tries again
	case errors.Is(err, store.ErrExists):
		return store.Request{}, false // another instance recorded it first; its row is authoritative
	case errors.As(err, new(*ErrTransition)):
		p.fail(err)
		return store.Request{}, false
	case errors.Is(err, store.ErrJobInUse):
		if h, herr := e.store.JobHolder(ctx, tried); herr == nil && h.RequestID != "" && (h.RequestID != nr.RequestID || h.Insurer != e.cfg.Insurer) {
			err = fmt.Errorf("job %s is already linked to request %s of insurer %s: %w", tried, h.RequestID, h.Insurer, err)
		}
	}
	err = fmt.Errorf("reserve request %s: %w", nr.RequestID, err)
	if errors.Is(err, store.ErrLockWait) {
		// A lock another session holds (the shop's program): this
		// request waits for the next pass, and the pass goes on with
		// the others instead of queueing behind the lock; the pass's
		// later create_jobs wait for the next pass too, naming this error.
		if createWaited {
			first := err // a copy: later lines may reassign err
			p.counterLocked.CompareAndSwap(nil, &first)
		}
		e.recordUnreserved(ctx, p, req, func(cur store.Request) change { return decideShopLocked(cur, req, err) })
		return store.Request{}, false
	}
	if shopdb.IsTooLong(err) {
		// The shop refuses a value of this request as longer than its
		// column: a fault of this request's data, rejected (the others go
		// on), never tried again on its own.
		e.recordUnreserved(ctx, p, req, func(cur store.Request) change { return decideTooLong(cur, req, err) })
		return store.Request{}, false
	}
	e.deferReserve(ctx, p, req, err)
	return store.Request{}, false
}

// behindShopLock takes the reservations of requests that waited behind a
// shop lock at their last attempt (reason shop_lock) out of steps, in
// order: the pass tries them after its push stage.
func behindShopLock(steps []acceptStep) (rest, behind []acceptStep) {
	for _, st := range steps {
		if st.kind == stepReserve && st.row != nil && st.row.Reason == ReasonShopLock {
			behind = append(behind, st)
		} else {
			rest = append(rest, st)
		}
	}
	return rest, behind
}

// lockedBefore is the error of a reservation whose create_job was not run
// because an earlier one of the same pass waited shop.lock_wait for a lock
// on it (the job counter): it would only wait again. It is
// store.ErrLockWait, and names what the first met.
type lockedBefore struct{ first error }

func (e lockedBefore) Error() string {
	return "create_job not run in this pass, whose earlier create_job waited for a lock: " + e.first.Error()
}

func (lockedBefore) Is(target error) bool { return target == store.ErrLockWait }

// readReserveFacts reads in tx what decideReserve needs: the request's
// row (locked until the transaction ends, in a read-write one) and,
// unless another writer reserved it first, find_job's answer (jobs, in
// the same transaction).
func readReserveFacts(ctx context.Context, tx *store.Tx, jobs *shopdb.Jobs) (reserveFacts, error) {
	cur, err := tx.Request(ctx)
	switch {
	case errors.Is(err, store.ErrNotFound):
		cur = store.Request{}
	case err != nil:
		return reserveFacts{}, err
	}
	f := reserveFacts{cur: cur, canCreate: jobs.CanCreate()}
	if decideReserve(f) != reserveTaken {
		f.job, err = jobs.Find(ctx)
	}
	return f, err
}

// reserveAction is how a dry run prints a reservation: what decideReserve
// decides on the facts read in a read-only transaction (create_job does
// not run).
func (e *Engine) reserveAction(ctx context.Context, a Action, req remote.Request) Action {
	nr := newRequestOf(requestRow(req))
	err := e.store.ReadTx(ctx, nr.RequestID, func(ctx context.Context, tx *store.Tx) error {
		f, err := readReserveFacts(ctx, tx, e.shop.Jobs(tx.SQL(), nr))
		if err != nil {
			return err
		}
		switch decideReserve(f) {
		case reserveTaken:
			if f.cur.JobNumber != "" {
				a.Job, a.Do, a.Why = f.cur.JobNumber, DoAccept, "reserved job "+f.cur.JobNumber
			}
		case reserveFound:
			a.Job, a.Do, a.Why = f.job, DoReserve, "find_job finds job "+f.job
		case reserveCreate:
			a.Do, a.Why = DoCreateJob, "find_job finds no job; create_job would make one"
		case reserveWait:
			a.Do, a.Why = DoWait, "find_job finds no job and no create_job is configured"
		}
		return nil
	})
	if err != nil {
		a.Do, a.Why = DoSkip, err.Error()
	}
	return a
}

// deferReserve records a request whose job number could not be allocated
// (a create_job statement failed, find_job returned a job another request
// holds, …): a waiting row with the reason, visible in status, tried again
// after a backoff. The other requests go on, and the pass does not fail:
// fixing the mapping or the shop's data releases it on a later pass. The
// row is read locked and written in one transaction, so that two daemons
// deferring at once count every attempt.
func (e *Engine) deferReserve(ctx context.Context, p *pass, req remote.Request, cause error) {
	now, jitter := e.Now(), e.Rand()
	e.recordUnreserved(ctx, p, req, func(cur store.Request) change {
		return decideReserveFailed(e.cfg, now, jitter, cur, req, cause)
	})
}

// recordUnreserved commits decide's change of a request that could not be
// reserved (cur is its waiting row, or the zero row when it has none),
// unless another instance reserved it meanwhile.
func (e *Engine) recordUnreserved(ctx context.Context, p *pass, req remote.Request, decide func(cur store.Request) change) {
	nr := newRequestOf(requestRow(req))
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	for range 5 { // a row inserted meanwhile by another instance: lock it and decide again
		saved, ev, done, err := e.commitTx(wctx, nr, func(ctx context.Context, tx *store.Tx, _ *shopdb.Jobs) (change, bool, error) {
			cur, err := tx.Request(ctx)
			switch {
			case errors.Is(err, store.ErrNotFound):
				cur = store.Request{}
			case err != nil:
				return change{}, false, err
			case cur.Phase != PhaseWaiting:
				return change{}, false, nil // reserved by another instance meanwhile
			}
			return decide(cur), true, nil
		})
		switch {
		case errors.Is(err, store.ErrExists):
			continue
		case err != nil:
			p.fail(fmt.Errorf("record request %s: %w (it could not be reserved)", req.ID, err))
		case done:
			p.written(saved, ev)
		}
		return
	}
}
