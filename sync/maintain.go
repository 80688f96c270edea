package sync

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/quotesync/quotesync/shopdb/store"
)

// The maintenance of insurers (`quotesync insurers`): giving the rows
// written before insurers had names to one, and moving or ending the
// requests of an insurer no longer configured. Each goes through the
// executor, so that the machine allows it and every observer sees each
// request's event.

// Kinds of the events of a request that changes insurer.
const (
	EventMoved   EventKind = "moved"   // moved to another insurer (quotesync insurers move)
	EventAdopted EventKind = "adopted" // written before insurers had names, given to the one insurer
)

// decideMove is the change that moves cur to the insurer to, its row,
// its events and its deliveries, nothing else changing: a rename
// (EventMoved), or the adoption of a row written before insurers had
// names (EventAdopted).
func decideMove(cur store.Request, kind EventKind, to string) change {
	detail := fmt.Sprintf("moved from insurer %s to %s (quotesync insurers move)", cur.Insurer, to)
	if kind == EventAdopted {
		detail = "written before insurers had names; given to insurer " + to
	}
	return change{cur: cur, next: cur, move: true, ev: Event{Kind: kind, Detail: detail}}
}

// decideEnd is the change that ends a live request of an insurer no
// longer configured: gone, for that reason. release_job never runs: the
// job may hold work the shop keeps.
//
// A request the insurer's service may hold accepted with our job number
// as its referenceId (accept_unknown, accepted, drafted; reserved with an
// accept sent or due) keeps its job number on the ended row: the shop's
// job is that insurer's job, and the unique key on job_number keeps any
// other request, of any insurer, from being given it. The others
// (waiting; reserved with no accept in flight) free their job for the
// shop, kept in ReleasedJob for the report.
func decideEnd(cur store.Request) (change, error) {
	if !IsOpen(cur.Phase) {
		return change{}, fmt.Errorf("end request %s: it is %s already, not live", cur.RequestID, cur.Phase)
	}
	next := cur
	next.Phase, next.Reason, next.Intent = PhaseGone, ReasonInsurerEnded, IntentNone
	next.Attempts, next.NextAttemptAt = 0, time.Time{}
	detail := "ended with its insurer (quotesync insurers end)"
	switch {
	case cur.JobNumber == "":
	case acceptMayHaveLanded(cur):
		detail += fmt.Sprintf("; job %s stays held by this request: the insurer's service may hold it accepted with that job number, so no other request is given it", cur.JobNumber)
	default:
		next.JobNumber, next.ReleasedJob = "", cur.JobNumber
		detail += fmt.Sprintf("; job %s is no longer held by quotesync: the shop keeps it", cur.JobNumber)
	}
	next.LastError = detail
	return change{cur: cur, next: next, ev: Event{Kind: EventGone, Detail: detail}}, nil
}

// acceptMayHaveLanded reports whether the insurer's service may hold r
// accepted with r's job number: it confirmed the accept, or may have
// (the answer was lost), or an accept was sent or is due.
func acceptMayHaveLanded(r store.Request) bool {
	switch r.Phase {
	case PhaseAcceptUnknown, PhaseAccepted, PhaseDrafted:
		return true
	case PhaseReserved:
		return r.Intent == IntentAccept || r.Attempts > 0
	}
	return false
}

// maintenance returns a state-only engine of the insurer name, which is
// not configured: its requests are changed through the executor as the
// configured insurers' are, and reach the same observers.
func (d *Daemon) maintenance(name string) (*Engine, error) {
	if err := d.unconfigured(name); err != nil {
		return nil, err
	}
	cfg := d.Engine.cfg
	cfg.Insurer = name
	e, err := New(cfg, d.Engine.remote, d.Shop.Insurer(name), d.Store.Insurer(name), d.Engine.log, d.obs...)
	if err != nil {
		return nil, err
	}
	e.outbox = d.Outbox
	return e, nil
}

// unconfigured refuses name when it is a configured insurer's, or not an
// insurer's name.
func (d *Daemon) unconfigured(name string) error {
	if d.EngineOf(name) != nil {
		return fmt.Errorf("insurer %s is configured: remove it from remotes: first (the daemon would go on working its requests)", name)
	}
	return store.CheckInsurerName(name)
}

// Adopt gives the rows written before insurers had names to the
// configured insurer name (see Engine.adopt), with the status form auto
// mode found then and the once keys of the notices recorded then.
// Requests it leaves unadopted, name tracking their ids already, are an
// error wrapping ErrAdoptKept that explains them; the rest is adopted.
func (d *Daemon) Adopt(ctx context.Context, name string) (store.Adopted, error) {
	e := d.EngineOf(name)
	if e == nil {
		return store.Adopted{}, fmt.Errorf("adopt the rows written before insurers: insurer %s is not configured (configured: %s)", name, d.names())
	}
	a, err := e.adopt(ctx, d.Store)
	if err == nil && len(a.Kept) > 0 {
		err = keptError(d.Shop.Config().TablePrefix, name, a.Kept)
	}
	return a, err
}

// MoveRequests moves every request of the insurer from, which is not
// configured, to the configured insurer to (a rename), each with its
// events and deliveries, through the executor of to's engine: an event
// "moved" each, as to's. A request id to tracks already is not moved;
// its error is among errs, and the others go on. Then what is keyed by
// from beside its requests moves too (see rekey; to's own status form
// wins). It returns the rows as moved.
func (d *Daemon) MoveRequests(ctx context.Context, from, to string) (moved []store.Request, errs []error, err error) {
	e := d.EngineOf(to)
	if e == nil {
		return nil, nil, fmt.Errorf("move requests to insurer %s: it is not configured (configured: %s)", to, d.names())
	}
	if err := d.unconfigured(from); err != nil {
		return nil, nil, fmt.Errorf("move the requests of insurer %s: %w", from, err)
	}
	rows, err := d.Store.ListRequests(ctx, store.ListQuery{Insurer: from})
	if err != nil {
		return nil, nil, err
	}
	for _, r := range slices.Backward(rows) { // oldest first
		saved, _, err := e.commitMoves(ctx, []change{decideMove(r, EventMoved, to)}, nil)
		if err != nil {
			errs = append(errs, err) // it names the request
			continue
		}
		moved = append(moved, saved[0])
	}
	// What is from's beside its requests: its notices of no request
	// (auth_failing), the once keys of its notices, its status form.
	if _, err := d.Store.MoveRest(ctx, to, rekey(from, to)); err != nil {
		errs = append(errs, err)
	}
	return moved, errs, nil
}

// End ends every live request of the insurer from, which is not
// configured (see decideEnd), through the executor. It returns the rows
// as ended; a row that changed meanwhile is among errs.
func (d *Daemon) End(ctx context.Context, from string) (ended []store.Request, errs []error, err error) {
	e, err := d.maintenance(from)
	if err != nil {
		return nil, nil, fmt.Errorf("end the requests of insurer %s: %w", from, err)
	}
	rows, err := d.Store.ListRequests(ctx, store.ListQuery{Insurer: from, Hide: ClosedPhases()})
	if err != nil {
		return nil, nil, err
	}
	for _, r := range slices.Backward(rows) {
		ch, err := decideEnd(r)
		if err == nil {
			var saved store.Request
			if saved, _, err = e.commit(ctx, ch); err == nil {
				ended = append(ended, saved)
				continue
			}
		}
		errs = append(errs, fmt.Errorf("end request %s: %w", r.RequestID, err))
	}
	return ended, errs, nil
}

// names lists the configured insurers, for messages.
func (d *Daemon) names() string {
	return strings.Join(stringsOf(d.Engines, func(e *Engine) string { return e.cfg.Insurer }), ", ")
}
