package sync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// The executor: the one place that writes a request's state. Every change
// goes through commit (or commitTx, when what to write is decided on facts
// read in the same shop transaction): a pass's steps, the reservation of
// a job number, `quotesync retry` and `insurers end`; a move to another
// insurer (`insurers move`, an adoption) through commitMoves, a pass's
// markers through commitNotes, a notice that is no change of a row
// through commitNotice. Each checks the change against the state machine
// first (ErrTransition, and nothing is written), writes the row
// (compare-and-set on its version, which it bumps) and its event in one
// transaction, with the deliveries the event queues in the outbox, and
// then reports the event once to every observer registered at assembly
// (the log, the metrics, the outbox's deliverer, the demo, tests). No
// caller writes to a sink itself, and no other file of this package
// calls the store's writes of a request's state (a test reads the
// package to keep it so).

// change is one decided state change of one request: the row as read
// (cur; its Phase is phaseNew and its Version 0 when the request has no row
// yet), the row to write and the event that reports it. A change whose
// event has no Kind is written silently: an intent recorded before a call.
type change struct {
	cur, next store.Request
	ev        Event
	// release: run release_job for cur's job number in the transaction
	// that writes the change (a request taken elsewhere or gone before our
	// accept landed gives its job number up).
	release bool
	// move: the request goes to the insurer of the engine that commits
	// the change, with its events and deliveries; nothing else changes
	// (decideMove).
	move bool
}

// rowWriter writes rows and their events: the store, or a transaction of
// it.
type rowWriter interface {
	Insert(ctx context.Context, r store.Request, ev store.Event) (store.Request, error)
	Update(ctx context.Context, cur, next store.Request, ev store.Event) (store.Request, error)
}

// prepare checks that the state machine allows ch and completes its row
// and its event from what ch says; an error only when a decision is wrong.
func prepare(ch change) (change, error) {
	ch.cur.RequestID = cmp.Or(ch.cur.RequestID, ch.next.RequestID)
	if ch.move && (ch.cur.Version == 0 || !allowedMove(ch.cur.Phase, ch.next.Phase)) {
		return ch, &ErrTransition{Request: ch.cur.RequestID, From: ch.cur.Phase, To: ch.next.Phase, Move: true}
	}
	if !ch.move && !allowedFor(ch.cur.Phase, ch.next.Phase, ch.next.Reason) {
		te := &ErrTransition{Request: ch.cur.RequestID, From: ch.cur.Phase, To: ch.next.Phase}
		if allowed(ch.cur.Phase, ch.next.Phase) {
			p, _ := phaseInfo(ch.cur.Phase)
			te.Reason, te.Only = ch.next.Reason, p.Only[ch.next.Phase]
		}
		return ch, te
	}
	if ch.cur.Version != 0 {
		ch.next.RequestID = ch.cur.RequestID
	}
	if ch.ev.Kind != "" {
		ch.ev.Request, ch.ev.Claim = ch.next.RequestID, ch.next.ClaimNumber
		ch.ev.Job = cmp.Or(ch.ev.Job, ch.next.JobNumber)
		ch.ev.From, ch.ev.To = ch.cur.Phase, ch.next.Phase
		ch.ev.Reason = cmp.Or(ch.ev.Reason, ch.next.Reason)
	}
	if ch.release {
		// The row keeps the number it gives up, for the report.
		ch.next.JobNumber, ch.next.ReleasedJob = "", ch.cur.JobNumber
	}
	return ch, nil
}

// commit performs ch as the executor does every change (above), with
// release_job when ch asks. It returns the stored row and the event as
// reported; store.ErrStale or ErrExists when the row changed under us.
func (e *Engine) commit(ctx context.Context, ch change) (store.Request, Event, error) {
	if ch.move {
		return ch.cur, ch.ev, errors.New("commit: a move is committed by commitMoves, with the rows it carries")
	}
	if ch.release && ch.cur.JobNumber != "" {
		whole := ch.cur
		if whole.RequestJSON == nil {
			// A pass reads rows without their JSON; release_job's
			// parameters may need it.
			var err error
			if whole, err = e.store.Request(ctx, ch.cur.RequestID); err != nil {
				return ch.cur, ch.ev, err
			}
		}
		saved, ev, _, err := e.commitTx(ctx, newRequestOf(whole), func(context.Context, *store.Tx, *shopdb.Jobs) (change, bool, error) {
			return ch, true, nil
		})
		if err != nil {
			return ch.cur, ch.ev, err
		}
		return saved, ev, nil
	}
	ch, err := prepare(ch)
	if err != nil {
		return ch.cur, ch.ev, err
	}
	saved, err := e.write(ctx, e.store, ch)
	if err != nil {
		return ch.cur, ch.ev, err
	}
	return saved, e.report(saved, ch.ev), nil
}

// commitTx runs decide in one transaction of the shop's database for the
// request nr: quotesync's store opens it, and the mapping's job statements
// for nr run in it (jobs, on the store's transaction). decide reads what
// it needs there (the row, locked; the mapping's job queries) and returns
// the change to write, or false for none. The change is written in the
// same transaction (release_job with it when it asks), and reported after
// the commit. done is false when nothing was written.
func (e *Engine) commitTx(ctx context.Context, nr shopdb.NewRequest, decide func(ctx context.Context, tx *store.Tx, jobs *shopdb.Jobs) (change, bool, error)) (saved store.Request, ev Event, done bool, err error) {
	var ch change
	err = e.store.InTx(ctx, nr.RequestID, func(ctx context.Context, tx *store.Tx) error {
		jobs := e.shop.Jobs(tx.SQL(), nr)
		c, do, err := decide(ctx, tx, jobs)
		if err != nil || !do {
			return err
		}
		if c, err = prepare(c); err != nil {
			return err
		}
		if c.release && c.next.ReleasedJob != "" {
			if c, err = releaseJob(ctx, jobs, c); err != nil {
				return err
			}
		}
		saved, err = e.write(ctx, tx, c)
		ch, done = c, err == nil
		return err
	})
	if err != nil || !done {
		return ch.cur, ch.ev, false, err
	}
	return saved, e.report(saved, ch.ev), true, nil
}

// releaseJob runs release_job in tx for the job a prepared change gives
// up, and says in its event and its row which became of the job.
func releaseJob(ctx context.Context, jobs *shopdb.Jobs, ch change) (change, error) {
	job := ch.next.ReleasedJob
	released, err := jobs.Release(ctx, job, ch.cur.JobCreated)
	if err != nil {
		return ch, fmt.Errorf("release job %s: %w", job, err)
	}
	note := fmt.Sprintf("job %s, reserved for it, was released (shop.queries.release_job ran for it)", job)
	if !released {
		note = fmt.Sprintf("job %s, reserved for it, is unused: no shop.queries.release_job is configured, so the shop keeps it (cancel or reuse it)", job)
	}
	ch.ev.Detail = joinText(ch.ev.Detail, note)
	ch.next.LastError = joinText(ch.next.LastError, note)
	return ch, nil
}

// write writes a prepared change with w: an insert when the request has no
// row yet, else a compare-and-set update.
func (e *Engine) write(ctx context.Context, w rowWriter, ch change) (store.Request, error) {
	if ch.cur.Version == 0 {
		return w.Insert(ctx, ch.next, e.stored(ch.ev))
	}
	return w.Update(ctx, ch.cur, ch.next, e.stored(ch.ev))
}

// report tells of a change that is durable: the next pass reads the rows
// anew, and the observers get its event, stamped with the row's time.
func (e *Engine) report(saved store.Request, ev Event) Event {
	e.touched()
	if ev.Kind != "" {
		ev.At = saved.UpdatedAt
		e.emit(ev)
	}
	return ev
}

// apply commits ch for pass p, even while the pass is being cancelled:
// the outcome of a remote call that already happened must be recorded.
// It returns the stored row and true, or cur and false when the row
// changed under us (left to the next pass) or the write failed (a
// failure of the pass).
func (e *Engine) apply(ctx context.Context, p *pass, ch change) (store.Request, bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	saved, ev, err := e.commit(ctx, ch)
	if err != nil {
		e.writeFailed(p, saved, err) // saved is the row as read
		return saved, false
	}
	p.written(saved, ev)
	return saved, true
}

// writeFailed sorts the error of a write: a row that changed under us
// (another instance, a `retry` from the command line) is left to the
// next pass and reported; anything else fails the pass.
func (e *Engine) writeFailed(p *pass, cur store.Request, err error) {
	switch {
	case errors.As(err, new(*ErrTransition)):
		p.fail(err)
	case errors.Is(err, store.ErrStale), errors.Is(err, store.ErrExists):
		e.emit(Event{Kind: EventStale, Request: cur.RequestID, Claim: cur.ClaimNumber, Job: cur.JobNumber,
			From: cur.Phase, To: cur.Phase})
	default:
		p.fail(fmt.Errorf("save request %s: %w", cur.RequestID, err))
	}
}

// perform is the executor of a plan: the reservation, the change, the
// remote call and the change its answer decides, in that order, each only
// when the one before went through.
func (e *Engine) perform(ctx context.Context, p *pass, pl plan) (store.Request, bool) {
	r := pl.row
	if pl.reserve != nil {
		var ok bool
		if r, ok = e.reserve(ctx, p, *pl.reserve); !ok {
			return r, false
		}
	}
	if pl.marker != nil {
		e.note(p, r, *pl.marker)
	}
	if pl.change != nil {
		var ok bool
		if r, ok = e.apply(ctx, p, *pl.change); !ok {
			return r, false
		}
	}
	if pl.call.kind == callNone {
		return r, true
	}
	ch, ok := e.call(ctx, p, r, pl.call)
	if !ok {
		return r, false
	}
	saved, ok := e.apply(ctx, p, ch)
	if !ok || !pl.call.landed(saved) {
		return saved, false
	}
	if pl.call.kind == callSubmit {
		e.keepStatusForm(ctx)
	}
	return saved, true
}

// call makes c's remote call for r, within the pass's bound on calls in
// flight, and decides its answer. ok is false when the answer settles
// nothing: the pass was cancelled (the row stays as it is and the next
// pass repairs whatever happened), or the token was refused (the pass
// stops).
func (e *Engine) call(ctx context.Context, p *pass, r store.Request, c call) (change, bool) {
	if !p.acquire(ctx) {
		return change{}, false
	}
	start := time.Now()
	err := func() (err error) {
		defer p.release() // also when the call panics: the slot is the other requests'
		switch c.kind {
		case callAccept:
			_, err = e.remote.Accept(ctx, r.RequestID, r.JobNumber, r.BookingDate)
		case callCreateQuote:
			_, err = e.remote.CreateQuote(ctx, r.JobNumber, c.d.quote)
		case callUpdateDraft:
			_, err = e.remote.UpdateDraft(ctx, r.JobNumber, c.d.quote)
		case callSubmit:
			_, err = e.remote.SetStatus(ctx, r.JobNumber, e.cfg.Quote.Type, remote.StatusSubmitted)
		}
		return err
	}()
	d := time.Since(start)
	switch {
	case err != nil && ctx.Err() != nil:
		return change{}, false
	case errors.Is(err, remote.ErrUnauthorized):
		p.stop(fmt.Errorf("%w: %w", ErrUnauthorized, err))
		return change{}, false
	}
	return c.decide(e.cfg, r, answer{now: e.Now(), jitter: e.Rand(), err: err, d: d})
}

// note remembers, for commitNotes, the marker of a job examined with
// nothing to push (r's row, which stays in its phase: the machine must
// allow that, as for any change).
func (e *Engine) note(p *pass, r store.Request, u store.MarkerUpdate) {
	if !allowed(r.Phase, r.Phase) || u.RequestID != r.RequestID || u.Version != r.Version {
		p.fail(&ErrTransition{Request: r.RequestID, From: r.Phase, To: r.Phase})
		return
	}
	p.note(u)
}

// commitNotes writes the markers of the jobs examined with nothing to
// push (note) in one statement (store.Store.UpdateMarkers): a shop that
// touched ten thousand jobs without changing what they would push costs
// one write, not ten thousand. They are silent changes: no event.
func (e *Engine) commitNotes(ctx context.Context, p *pass) {
	if len(p.notes) == 0 {
		return
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	if _, err := e.store.UpdateMarkers(wctx, p.notes); err != nil {
		p.fail(fmt.Errorf("remember the change markers of %s: %w", Plural(len(p.notes), "job"), err))
	}
	e.touched()
}

// commitMoves moves the requests of chs (each a move: decideMove) to e's
// insurer, each with its event, and gives it what rest names besides
// (the adoption's settings and notice keys), in one transaction: each
// row compare-and-set on its version (store.ErrStale when one changed
// meanwhile, and nothing moves), its events and deliveries with it
// (store.ErrExists when e's insurer tracks one of the ids already). It
// reports each event, as e's insurer's, once all is durable, and returns
// the rows as stored and what moved.
func (e *Engine) commitMoves(ctx context.Context, chs []change, rest *store.Rekey) ([]store.Request, store.Adopted, error) {
	rows := make([]store.Request, len(chs))
	evs := make([]store.Event, len(chs))
	for i := range chs {
		ch, err := prepare(chs[i])
		if err != nil {
			return nil, store.Adopted{}, err
		}
		chs[i], rows[i], evs[i] = ch, ch.cur, e.stored(ch.ev)
	}
	saved, a, err := e.store.Move(ctx, rows, e.cfg.Insurer, evs, rest)
	if err != nil {
		return nil, store.Adopted{}, err
	}
	for i := range saved {
		e.report(saved[i], chs[i].ev)
	}
	return saved, a, nil
}

// commitNotice records ev, a notice that is no change of a row (a
// request close to its expiry, an episode of refused tokens), with the
// deliveries out queues, once while out's once key is held, and reports
// it as commit does. fresh is false when the key was held and nothing
// was written.
func (e *Engine) commitNotice(ctx context.Context, ev Event, out *store.Outbox) (fresh bool, err error) {
	s := e.stored(ev)
	s.Insurer, s.RequestID, s.At, s.Outbox = ev.Insurer, ev.Request, ev.At, out
	if fresh, err = e.store.RecordOnce(ctx, s); err != nil || !fresh {
		return false, err
	}
	e.emit(ev)
	return true, nil
}

// stored is the event log's row of ev with the deliveries it queues in the
// same transaction (write-back, notifications). Its message, like a row's
// last_error, is handed to the store whole: the store redacts the secrets
// from the whole text, then cuts it to what its tables keep (a cut here
// first could leave half of a secret that no longer matches).
func (e *Engine) stored(ev Event) store.Event {
	if ev.Kind == "" {
		return store.Event{}
	}
	msg := ev.Detail
	if ev.Err != nil {
		msg = joinText(msg, ev.Err.Error())
	}
	return store.Event{Kind: string(ev.Kind), Job: ev.Job, From: ev.From, To: ev.To, Reason: ev.Reason,
		Route: ev.Route, Status: ev.Status, Attempt: ev.Attempt, Duration: ev.Duration,
		Items: ev.Items, Hash: ev.Hash, Message: msg, Outbox: e.outbox.outboxOf(ev)}
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
func newRequestOf(r store.Request) shopdb.NewRequest {
	return shopdb.NewRequest{RequestID: r.RequestID, ClaimNumber: r.ClaimNumber, Expiry: r.Expiry, RequestJSON: r.RequestJSON}
}
