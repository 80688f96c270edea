package sync

import (
	"errors"
	"fmt"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// The push stage's decisions: pure functions from the rows, the shop's
// estimate states and lines and the remote's answers to plans and
// changes. The executor performs them (exec.go); a dry run prints them.

// Route names of the quote calls in events and logs.
const (
	routeCreateQuote = "POST /jobs/{id}/quotes"
	routeUpdateDraft = "update draft"
	routeSetStatus   = "status Submitted"
)

// pushJob is one job the push stage looks at.
type pushJob struct {
	row      store.Request
	state    shopdb.JobState
	stateErr error // estimate_state's row for the job is invalid
}

// pushCandidates are the rows whose jobs the push stage looks at: the
// accepted (or probably accepted) and drafted ones, and the submitted ones
// not yet flagged for a supplement.
func pushCandidates(rows []store.Request) (cands []*store.Request, jobs []string) {
	for i := range rows {
		r := &rows[i]
		switch r.Phase {
		case PhaseAccepted, PhaseAcceptUnknown, PhaseDrafted:
		case PhaseSubmitted:
			if r.SupplementNeeded {
				continue
			}
		default:
			continue
		}
		cands = append(cands, r)
		jobs = append(jobs, r.JobNumber)
	}
	return cands, jobs
}

// choosePush picks the jobs whose lines must be read: their change marker
// moved (or they have none), their estimate is final and not submitted, a
// push of theirs is in flight, or they are held and every held job is to
// be examined again (after a start or a reload). A job whose backoff has
// not run out waits; a job with an invalid estimate state is held.
func choosePush(now time.Time, cands []*store.Request, states map[string]shopdb.JobState, bad map[string]error, examineHeld bool) (work []pushJob, need []string) {
	for _, rp := range cands {
		r := *rp
		if berr, isBad := bad[r.JobNumber]; isBad {
			if r.Phase != PhaseSubmitted {
				// Held with no marker remembered, so that the job is read
				// again as soon as its estimate state is valid.
				work = append(work, pushJob{row: r, state: shopdb.JobState{Job: r.JobNumber}, stateErr: berr})
			}
			continue
		}
		st, ok := states[r.JobNumber]
		if !ok {
			continue // no estimate in the shop yet
		}
		isHeld := held(r)
		changed := st.Marker == "" || st.Marker != r.PushedMarker
		finalDue := submitDue(r, st) && !isHeld
		inFlight := r.Intent == IntentPush
		if (changed || finalDue || inFlight || (isHeld && examineHeld)) && due(now, r) {
			work = append(work, pushJob{row: r, state: st})
			need = append(need, r.JobNumber)
		}
	}
	return work, need
}

// jobDecision is what a push of a job carries to the decision on its
// answer.
type jobDecision struct {
	final   bool // the estimate is final: submit once the remote holds it
	quote   remote.Quote
	hash    string
	release bool // the job was held and no longer is
}

// planJob is the plan of one job of the push stage, decided on its row,
// its estimate state and its lines (or the error that makes them
// invalid), and the quote built from them; now is the pass's start.
func planJob(now time.Time, r store.Request, st shopdb.JobState, lines []shopdb.Line, badErr error, q remote.Quote, hash string) plan {
	if badErr == nil && st.Final && len(lines) == 0 && r.Phase != PhaseSubmitted {
		badErr = fmt.Errorf("job %s: the estimate is final but has no lines; add lines or take it back to draft", r.JobNumber)
		return planHold(r, st, ReasonFinalNoLines, badErr)
	}
	if badErr != nil {
		if r.Phase == PhaseSubmitted {
			return plan{row: r}
		}
		return planHold(r, st, holdReason(badErr), badErr)
	}
	switch {
	case r.Phase == PhaseSubmitted && hash == r.PushedHash:
		return planNote(r, st, false)
	case r.Phase == PhaseSubmitted:
		ch := decideSupplement(r, st)
		return plan{row: r, do: DoFlagSupplement, why: "the shop's lines changed after the quote was submitted", change: &ch}
	case first(r) && len(lines) == 0 && r.Intent != IntentPush:
		// Nothing to push until the shop writes lines. (With a push in
		// flight, a first Draft may exist: the empty quote is pushed over
		// whatever the remote holds.)
		return planNote(r, st, false)
	case first(r) || hash != r.PushedHash || r.Intent == IntentPush:
		return planPush(now, r, st, jobDecision{quote: q, hash: hash, final: submitDue(r, st), release: held(r)})
	}
	return planNote(r, st, submitDue(r, st))
}

// planHold is the plan that holds r back for reason (decideHold: nothing
// to write when it is held so already).
func planHold(r store.Request, st shopdb.JobState, reason store.Reason, cause error) plan {
	pl := plan{row: r, do: DoHold, why: fmt.Sprintf("%s: %v", Reason(reason).Words, cause)}
	if ch, ok := decideHold(r, st, reason, cause); ok {
		pl.change = &ch
	}
	return pl
}

// planNote is the plan of a job examined with nothing to push: remember
// its marker (decideNote). When only the marker changes it is written
// with the others at the end of the stage, unless the job goes on to its
// submit (final): then it is written first, on its own.
func planNote(r store.Request, st shopdb.JobState, final bool) plan {
	ch, ok := decideNote(r, st)
	switch {
	case !ok:
		return plan{row: r, final: final}
	case ch.ev.Kind == "" && !final:
		return plan{row: r, marker: &store.MarkerUpdate{RequestID: r.RequestID, Version: r.Version, Marker: st.Marker}}
	}
	return plan{row: r, change: &ch, final: final}
}

// planPush is the plan that pushes the job's quote as a Draft: created on
// the first push, updated (per remote.Config.DraftUpdate) after that.
// Intent before effect: unless a push is in flight already, the intent is
// recorded first, so that a push whose answer is lost (a kill, a dropped
// connection) is pushed again by the next pass even if the shop meanwhile
// went back to what was pushed before.
func planPush(now time.Time, r store.Request, st shopdb.JobState, d jobDecision) plan {
	why, kind := "lines changed since the last push", callUpdateDraft
	switch {
	case r.Phase == PhaseAcceptUnknown:
		why, kind = "first draft of the job's lines; it confirms that our accept landed", callCreateQuote
	case first(r):
		why, kind = "first draft of the job's lines", callCreateQuote
	}
	pl := plan{row: r, do: DoPushDraft, why: why, items: len(d.quote.Items), final: d.final,
		call: call{kind: kind, st: st, d: d}}
	if r.Intent != IntentPush {
		ch := decideIntent(r, now)
		pl.change = &ch
	}
	return pl
}

// planSubmit is the plan that changes the quote's status to Submitted,
// the submit recorded as in flight first (decideSubmitIntent).
func planSubmit(now time.Time, r store.Request) plan {
	pl := plan{row: r, do: DoSubmit, why: "the estimate is final and the remote holds its content", call: call{kind: callSubmit}}
	if r.SubmittedAt.IsZero() {
		ch := decideSubmitIntent(r, now)
		pl.change = &ch
	}
	return pl
}

// submitDue reports whether r is to be submitted once the remote holds
// the content of its estimate st: st is final and r not submitted yet. A
// Draft whose answer could not be read is not submitted until it is
// pushed again (the lines change, or a person runs retry): what the
// remote holds is not known to be what the shop has. Every path to a
// submit asks this, whether the lines were read in full or only hashed.
func submitDue(r store.Request, st shopdb.JobState) bool {
	return st.Final && r.Phase != PhaseSubmitted && r.Reason != ReasonUnreadable
}

// first reports whether r has no acknowledged Draft yet.
func first(r store.Request) bool { return r.Phase == PhaseAccepted || r.Phase == PhaseAcceptUnknown }

// holdReason is the reason a job is held for err.
func holdReason(err error) store.Reason {
	var re *shopdb.RowError
	if errors.As(err, &re) {
		switch re.Kind {
		case shopdb.RowUnmapped:
			return ReasonUnmappedCode
		case shopdb.RowCredit:
			return ReasonCredits
		case shopdb.RowBounds:
			return ReasonOutOfBounds
		}
		return ReasonShopData
	}
	var se *shopdb.StateError
	if errors.As(err, &se) {
		return ReasonEstimateState
	}
	return ReasonShopData
}

// decideHold is the change that holds r for reason, or ok false when r is
// held for the same reason with the same marker already. The event is only
// there when the reason (or its details) changed: a hold is logged once.
func decideHold(r store.Request, st shopdb.JobState, reason store.Reason, cause error) (change, bool) {
	msg := cause.Error()
	kept := store.CapText(msg) // as last_error keeps it, to compare
	if r.Reason == reason && r.LastError == kept && r.PushedMarker == st.Marker {
		return change{}, false
	}
	next := r
	next.Reason, next.LastError, next.PushedMarker = reason, msg, st.Marker
	ch := change{cur: r, next: next}
	if r.Reason != reason || r.LastError != kept {
		ch.ev = Event{Kind: EventHeld, Reason: reason, Detail: Reason(reason).Words, Err: cause}
	}
	return ch, true
}

// decideNote is the change that remembers r's current marker (its lines
// were examined and need no push), releasing a held job; ok false when
// nothing changes.
func decideNote(r store.Request, st shopdb.JobState) (change, bool) {
	wasHeld := held(r)
	if r.PushedMarker == st.Marker && !wasHeld {
		return change{}, false
	}
	ch := change{cur: r, next: r}
	ch.next.PushedMarker = st.Marker
	if wasHeld {
		ch.next.Reason, ch.next.LastError = ReasonNone, ""
		ch.ev = Event{Kind: EventReleased, Detail: "the job's data is valid again (it was held: " + string(r.Reason) + ")"}
	}
	return ch, true
}

// decideSupplement is the change that flags a submitted job whose lines
// changed: a supplement is needed, and is never pushed.
func decideSupplement(r store.Request, st shopdb.JobState) change {
	next := r
	next.SupplementNeeded, next.PushedMarker = true, st.Marker
	return change{cur: r, next: next, ev: Event{Kind: EventSupplement,
		Detail: "the shop's lines changed after the quote was submitted; a supplement is needed and was not pushed"}}
}

// decideIntent is the silent change that records a push in flight before
// it is sent.
func decideIntent(r store.Request, now time.Time) change {
	next := r
	next.Intent, next.PushedAt = IntentPush, now
	return change{cur: r, next: next}
}

// decidePush turns the answer a to c, a Draft push, into a change; ok is
// false when the answer settles nothing (cancelled, or the token was
// refused).
func decidePush(cfg Config, cur store.Request, c call, a answer) (change, bool) {
	err := a.err
	route := routeUpdateDraft
	if c.kind == callCreateQuote {
		route = routeCreateQuote
	}
	call := callEvent(route, cur, a)
	status := call.Status
	isFirst := first(cur)
	switch {
	case err == nil, errors.Is(err, remote.ErrUnreadable):
		next := cur
		next.Phase, next.Intent = PhaseDrafted, IntentNone
		next.PushedHash, next.PushedMarker, next.PushedAt = c.d.hash, c.st.Marker, a.now
		next.SubmittedAt = time.Time{} // the remote's quote is a Draft: no submit of ours landed
		next.Attempts, next.NextAttemptAt, next.Reason, next.LastError = 0, time.Time{}, ReasonNone, ""
		ev := call
		ev.Kind, ev.Items, ev.Hash, ev.Released, ev.Err = EventRedrafted, len(c.d.quote.Items), c.d.hash, c.d.release, nil
		if isFirst {
			ev.Kind = EventDrafted
		}
		if cur.Phase == PhaseAcceptUnknown {
			ev.Inferred, ev.Detail = true, "the first Draft push to our job landed: our accept had landed"
		}
		if err != nil {
			next.Reason = ReasonUnreadable
			next.LastError = fmt.Sprintf("push draft of job %s: %v", cur.JobNumber, err)
			ev.Kind, ev.Reason, ev.Detail = EventUnreadable, ReasonUnreadable, joinText(ev.Detail, next.LastError)
		}
		return change{cur: cur, next: next, ev: ev}, true
	case errors.Is(err, remote.ErrUnauthorized):
		return change{}, false
	case errors.Is(err, remote.ErrConflict) && !cur.SubmittedAt.IsZero():
		// A submit of ours was sent and its answer lost: it landed, the
		// remote holds a Submitted quote, and the new lines need a
		// supplement.
		next := cur
		next.Phase, next.Intent, next.SupplementNeeded = PhaseSubmitted, IntentNone, true
		next.SubmittedAt, next.PushedMarker = a.now, c.st.Marker
		next.Attempts, next.NextAttemptAt, next.Reason, next.LastError = 0, time.Time{}, ReasonNone, ""
		ev := call
		ev.Kind, ev.Err = EventSubmitted, nil
		ev.Hash = cur.PushedHash // the Draft the remote holds as Submitted, for the timeline
		ev.Detail = "the remote quote is already Submitted (a submit of ours landed without its answer); the shop's newer lines need a supplement: " + err.Error()
		return change{cur: cur, next: next, ev: ev}, true
	case errors.Is(err, remote.ErrConflict):
		return rejected(cur, ReasonPushConflict, fmt.Sprintf("push draft of job %s: the remote refused it as a conflict and no submit of ours was sent; if the service does not let a new POST replace a Draft, set remote.draft_update: put, then run quotesync retry %s: %v",
			cur.JobNumber, cur.RequestID, err), call), true
	case errors.Is(err, remote.ErrNotFound) && cur.Phase == PhaseAcceptUnknown:
		return giveUp(cur, PhaseTakenElsewhere, ReasonNotOurs, fmt.Sprintf("the first Draft push to job %s answered %d: the remote has no such job, so our accept never landed and someone else has the request", cur.JobNumber, status), call), true
	case errors.Is(err, remote.ErrNotFound), errors.Is(err, remote.ErrRejected):
		return rejected(cur, ReasonRefused, fmt.Sprintf("push draft of job %s: %v", cur.JobNumber, err), call), true
	}
	return decideRetrying(cfg, a.now, a.jitter, cur, call), true
}

// rejected is the change of a request the remote refused for good; retry
// puts it back into the phase it was refused in.
func rejected(cur store.Request, reason store.Reason, why string, call Event) change {
	next := cur
	next.Phase, next.ResumePhase, next.Reason = PhaseRejected, cur.Phase, reason
	next.NextAttemptAt, next.LastError = time.Time{}, why
	ev := call
	ev.Kind, ev.Detail, ev.Err = EventRejected, why, nil
	return change{cur: cur, next: next, ev: ev}
}

// decideSubmitIntent is the silent change that records a submit in flight
// before it is sent: only a row that says a submit was sent may read a
// later 409 to a Draft push as "already Submitted".
func decideSubmitIntent(r store.Request, now time.Time) change {
	next := r
	next.SubmittedAt = now
	return change{cur: r, next: next}
}

// decideSubmit turns the answer to the status change into a change; ok
// is false when the answer settles nothing.
func decideSubmit(cfg Config, cur store.Request, a answer) (change, bool) {
	err, now := a.err, a.now
	call := callEvent(routeSetStatus, cur, a)
	status := call.Status
	switch {
	case err == nil, errors.Is(err, remote.ErrConflict), errors.Is(err, remote.ErrUnreadable):
		next := cur
		next.Phase, next.SubmittedAt = PhaseSubmitted, now
		next.Attempts, next.NextAttemptAt, next.Reason, next.LastError = 0, time.Time{}, ReasonNone, ""
		ev := call
		ev.Kind, ev.Err = EventSubmitted, nil
		ev.Hash = cur.PushedHash // the Draft the remote holds as Submitted, for the timeline
		switch {
		case err == nil:
			ev.Status = 200
		case errors.Is(err, remote.ErrConflict):
			ev.Detail = "already Submitted on the remote (a submit of ours landed without its answer): " + err.Error()
		default:
			next.Reason, next.LastError = ReasonUnreadable, fmt.Sprintf("submit quote of job %s: %v", cur.JobNumber, err)
			ev.Detail = next.LastError
		}
		return change{cur: cur, next: next, ev: ev}, true
	case errors.Is(err, remote.ErrUnauthorized):
		return change{}, false
	case status == 404 || status == 405:
		return rejected(cur, ReasonStatusPath, fmt.Sprintf("submit quote of job %s: the remote does not serve this status change (%v); set remote.status_path: auto (it finds the form the service serves) and reload, then run quotesync retry %s",
			cur.JobNumber, err, cur.RequestID), call), true
	case errors.Is(err, remote.ErrNotFound), errors.Is(err, remote.ErrRejected):
		return rejected(cur, ReasonRefused, fmt.Sprintf("submit quote of job %s: %v", cur.JobNumber, err), call), true
	}
	return decideRetrying(cfg, now, a.jitter, cur, call), true
}
