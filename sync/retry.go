package sync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quotesync/quotesync/shopdb/store"
)

// ErrNotRetryable: the request is in a phase `retry` cannot help
// (submitted: done; a change after submission is a supplement).
var ErrNotRetryable = errors.New("nothing to retry")

// decideRetry is the change a person asks for with `quotesync retry`: every
// phase a person can see as stuck has one.
//
//   - rejected: back into the phase it was refused in (a request without a
//     job number goes back to waiting, so that its job is looked up again);
//   - accept_unknown: reserved again, so that the accept is sent again;
//   - gone, taken_elsewhere: waiting, so that the job is looked up again
//     and the request accepted should the remote list it again (not a
//     request ended with its insurer that keeps its job: ErrNotRetryable);
//   - an open phase that waits (a backoff, a hold): due now, and a held job
//     is read again at the next pass;
//   - submitted, or an open phase that waits for nothing: ErrNotRetryable.
func decideRetry(cur store.Request, note string) (change, error) {
	next := cur
	next.Attempts, next.NextAttemptAt, next.LastError, next.Reason = 0, time.Time{}, "", ReasonNone
	switch cur.Phase {
	case PhaseRejected:
		next.Phase, next.ResumePhase = cur.ResumePhase, ""
		if next.Phase == "" || next.Phase == PhaseRejected || !allowed(PhaseRejected, next.Phase) {
			next.Phase = PhaseReserved
		}
	case PhaseAcceptUnknown:
		next.Phase = PhaseReserved
	case PhaseGone, PhaseTakenElsewhere:
		if cur.Reason == ReasonInsurerEnded && cur.JobNumber != "" {
			// Back to waiting would free the job its insurer's service may
			// hold accepted with our job number (see decideEnd).
			return change{}, fmt.Errorf("retry request %s: it was ended with its insurer while the insurer's service may hold it accepted with job %s, which stays held for it; "+
				"settle it with the insurer (a retry would free the job for other requests): %w", cur.RequestID, cur.JobNumber, ErrNotRetryable)
		}
		next.Phase, next.JobNumber, next.JobCreated = PhaseWaiting, "", false
	case PhaseSubmitted:
		return change{}, fmt.Errorf("retry request %s: it is submitted; a change after submission needs a supplement, arranged with the insurer: %w", cur.RequestID, ErrNotRetryable)
	default:
		if !IsOpen(cur.Phase) {
			return change{}, fmt.Errorf("retry request %s: phase %q is unknown to this quotesync: %w", cur.RequestID, cur.Phase, ErrNotRetryable)
		}
		if cur.Reason == ReasonNone && cur.NextAttemptAt.IsZero() {
			return change{}, fmt.Errorf("retry request %s: it is %s and not stuck; the daemon takes it up on its own: %w", cur.RequestID, cur.Phase, ErrNotRetryable)
		}
		if held(cur) {
			next.PushedMarker = "" // read the job again at the next pass
		}
		if cur.Reason == ReasonUnreadable {
			// The answer to the last write could not be read: push the
			// Draft again, so that the remote's answer is read anew.
			next.PushedHash, next.PushedMarker = "", ""
		}
	}
	if next.Phase == PhaseReserved && cur.JobNumber == "" {
		next.Phase = PhaseWaiting
	}
	if next.Phase == PhaseReserved {
		next.Intent = IntentAccept
	}
	return change{cur: cur, next: next, ev: Event{Kind: EventRetry, Detail: note}}, nil
}

// Retry puts a request back into the flow (see decideRetry), recording
// note in its event log, through the executor like every change: its
// event is logged and reaches every observer, and queues what the notice
// table gives it. It writes only quotesync's own row (compare and set), so
// it is safe while the daemon runs: store.ErrStale when the row changed
// meanwhile, store.ErrNotFound for a request quotesync does not track,
// ErrNotRetryable for a submitted one. It returns the row before and
// after.
func (e *Engine) Retry(ctx context.Context, requestID, note string) (before, after store.Request, err error) {
	cur, err := e.store.Request(ctx, requestID)
	if err != nil {
		return store.Request{}, store.Request{}, err
	}
	ch, err := decideRetry(cur, note)
	if err != nil {
		return cur, store.Request{}, err
	}
	saved, _, err := e.commit(ctx, ch)
	if err != nil {
		return cur, store.Request{}, fmt.Errorf("retry request %s: %w", requestID, err)
	}
	return cur, saved, nil
}
