package sync

import (
	"context"
	"errors"
	"fmt"

	"github.com/quotesync/quotesync/shopdb"
)

// change is one decided state change of one request: the row as read
// (cur; its Phase is phaseNew and its Version 0 when the request has no row
// yet), the row to write and the event that reports it. A change whose
// event has no Kind is written silently: an intent recorded before a call.
type change struct {
	cur, next shopdb.Request
	ev        Event
	// release: run release_job for cur's job number in the transaction
	// that writes the change (a request taken elsewhere or gone before our
	// accept landed gives its job number up).
	release bool
}

// rowWriter writes rows and their events: the store, or a transaction of
// it.
type rowWriter interface {
	Insert(ctx context.Context, r shopdb.Request, ev shopdb.Event) (shopdb.Request, error)
	Update(ctx context.Context, cur, next shopdb.Request, ev shopdb.Event) (shopdb.Request, error)
}

// prepare checks that the state machine allows ch and completes its row
// and its event from what ch says; an error only when a decision is wrong.
func prepare(ch change) (change, error) {
	if ch.cur.RequestID == "" {
		ch.cur.RequestID = ch.next.RequestID
	}
	if !allowed(ch.cur.Phase, ch.next.Phase) {
		return ch, &ErrTransition{Request: ch.cur.RequestID, From: ch.cur.Phase, To: ch.next.Phase}
	}
	if ch.cur.Version != 0 {
		ch.next.RequestID = ch.cur.RequestID
	}
	ch.next.LastError = capText(ch.next.LastError)
	if ch.ev.Kind != "" {
		ch.ev.Request, ch.ev.Claim = ch.next.RequestID, ch.next.ClaimNumber
		if ch.ev.Job == "" {
			ch.ev.Job = ch.next.JobNumber
		}
		ch.ev.From, ch.ev.To = ch.cur.Phase, ch.next.Phase
		if ch.ev.Reason == "" {
			ch.ev.Reason = ch.next.Reason
		}
	}
	return ch, nil
}

// write writes a prepared change with w: an insert when the request has no
// row yet, else a compare-and-set update.
func (e *Engine) write(ctx context.Context, w rowWriter, ch change) (shopdb.Request, error) {
	if ch.cur.Version == 0 {
		return w.Insert(ctx, ch.next, e.stored(ch.ev))
	}
	return w.Update(ctx, ch.cur, ch.next, e.stored(ch.ev))
}

// written reports a change that is durable: the pass's counts and phases,
// then the observers.
func (e *Engine) written(p *pass, saved shopdb.Request, ev Event) {
	e.touched()
	p.setPhase(saved.RequestID, saved.Phase)
	if ev.Kind != "" {
		ev.At = saved.UpdatedAt
		p.count(ev)
		e.emit(ev)
	}
}

// apply performs ch: it checks that the state machine allows it, writes
// the row and the event in one transaction (with release_job when asked),
// and then hands the event to the observers. It runs even while the pass
// is being cancelled: the outcome of a remote call that already happened
// must be recorded. It returns the stored row and true, or cur and false
// when the row changed under us (left to the next pass) or the write
// failed (a failure of the pass).
func (e *Engine) apply(ctx context.Context, p *pass, ch change) (shopdb.Request, bool) {
	ch, err := prepare(ch)
	if err != nil {
		p.fail(err)
		return ch.cur, false
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	var saved shopdb.Request
	ev := ch.ev
	if ch.release {
		saved, ev, err = e.applyRelease(ctx, ch.cur, ch.next, ev)
	} else {
		saved, err = e.write(ctx, e.store, ch)
	}
	if !e.writeOK(p, ch.cur, err) {
		return ch.cur, false
	}
	e.written(p, saved, ev)
	return saved, true
}

// writeOK sorts the error of a write: nil is fine; a row that changed
// under us (another instance, a `retry` from the command line) is left to
// the next pass and reported; anything else fails the pass.
func (e *Engine) writeOK(p *pass, cur shopdb.Request, err error) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, shopdb.ErrStale), errors.Is(err, shopdb.ErrExists):
		e.emit(Event{Kind: EventStale, Request: cur.RequestID, Claim: cur.ClaimNumber, Job: cur.JobNumber,
			From: cur.Phase, To: cur.Phase})
	default:
		p.fail(fmt.Errorf("save request %s: %w", cur.RequestID, err))
	}
	return false
}

// applyRelease writes a change that gives cur's job number up: in one
// transaction, release_job (when the mapping has one) and the row, whose
// ReleasedJob keeps the number for the report. The event says which.
func (e *Engine) applyRelease(ctx context.Context, cur, next shopdb.Request, ev Event) (shopdb.Request, Event, error) {
	job := cur.JobNumber
	next.JobNumber, next.ReleasedJob = "", job
	if job == "" {
		saved, err := e.store.Update(ctx, cur, next, e.stored(ev))
		return saved, ev, err
	}
	whole := cur
	if whole.RequestJSON == nil {
		// A pass reads rows without their JSON; release_job's parameters
		// may need it.
		var err error
		if whole, err = e.store.Request(ctx, cur.RequestID); err != nil {
			return shopdb.Request{}, ev, err
		}
	}
	var saved shopdb.Request
	err := e.store.InTx(ctx, newRequestOf(whole), func(ctx context.Context, tx *shopdb.Tx) error {
		released, err := tx.ReleaseJob(ctx, job, cur.JobCreated)
		if err != nil {
			return fmt.Errorf("release job %s: %w", job, err)
		}
		note := fmt.Sprintf("job %s, reserved for it, was released (shop.queries.release_job ran for it)", job)
		if !released {
			note = fmt.Sprintf("job %s, reserved for it, is unused: no shop.queries.release_job is configured, so the shop keeps it (cancel or reuse it)", job)
		}
		ev.Detail = joinText(ev.Detail, note)
		next.LastError = capText(joinText(next.LastError, note))
		saved, err = tx.Update(ctx, cur, next, e.stored(ev))
		return err
	})
	return saved, ev, err
}

// stored is the event log's row of ev.
func stored(ev Event) shopdb.Event {
	if ev.Kind == "" {
		return shopdb.Event{}
	}
	msg := ev.Detail
	if ev.Err != nil {
		msg = joinText(msg, ev.Err.Error())
	}
	return shopdb.Event{Kind: string(ev.Kind), Job: ev.Job, From: ev.From, To: ev.To, Reason: ev.Reason,
		Route: ev.Route, Status: ev.Status, Attempt: ev.Attempt, Duration: ev.Duration,
		Items: ev.Items, Hash: ev.Hash, Message: capText(msg)}
}

// stored is the event log's row of ev with the deliveries it queues in the
// same transaction (write-back, notifications).
func (e *Engine) stored(ev Event) shopdb.Event {
	s := stored(ev)
	if s.Kind != "" {
		s.Outbox = e.outbox.outboxOf(ev)
	}
	return s
}

// joinText joins two texts with "; ", either may be empty.
func joinText(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// newRequestOf is what the mapping's queries need to know of a row's
// request.
func newRequestOf(r shopdb.Request) shopdb.NewRequest {
	return shopdb.NewRequest{RequestID: r.RequestID, ClaimNumber: r.ClaimNumber, Expiry: r.Expiry, RequestJSON: r.RequestJSON}
}
