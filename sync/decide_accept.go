package sync

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb/store"
)

// The accept stage's decisions: pure functions from the pending list, the
// rows, the shop's jobs and the remote's answers to steps, plans and
// changes. The executor performs them (exec.go, accept.go); a dry run
// prints them.

// acceptKind is what the accept stage does with one request.
type acceptKind int

const (
	stepReserve  acceptKind = iota + 1 // find or create its job, record it reserved
	stepAccept                         // send the accept of a reserved row
	stepProbe                          // reserved, no longer listed: send the same accept to learn what happened
	stepRelist                         // accept_unknown, listed again: our accept did not land; back to reserved
	stepVanished                       // waiting, no longer listed: gone
	stepExpired                        // listed, never tracked, already expired: recorded gone
)

// acceptStep is one request the accept stage works on.
type acceptStep struct {
	kind acceptKind
	req  remote.Request // as listed, or built from the row when it is not
	row  *store.Request // nil for a request seen for the first time
}

// pendingList is the remote's pending list as the pass reads it.
type pendingList struct {
	requests []remote.Request // the decodable ones
	// skipped holds the ids of listed requests that could not be decoded:
	// they are pending all the same, and nothing may conclude otherwise.
	skipped map[string]bool
	// blind is set when an undecodable entry had no readable id: any
	// request may be among them, so no request counts as having left the
	// list in this pass.
	blind bool
}

// ids are the ids the list names, decodable or not.
func (l pendingList) ids() []string {
	out := make([]string, 0, len(l.requests)+len(l.skipped))
	for _, r := range l.requests {
		out = append(out, r.ID)
	}
	return slices.AppendSeq(out, maps.Keys(l.skipped))
}

// classify sorts the pending list and the rows into the accept stage's
// steps, soonest expiry first. A step whose backoff has not run out is
// left for a later pass.
func classify(now time.Time, l pendingList, rows []store.Request) []acceptStep {
	decoded := make(map[string]remote.Request, len(l.requests))
	for _, r := range l.requests {
		decoded[r.ID] = r
	}
	listed := func(id string) bool {
		_, ok := decoded[id]
		return ok || l.skipped[id] || l.blind
	}
	var steps []acceptStep
	known := make(map[string]bool, len(rows))
	for i := range rows {
		r := &rows[i]
		known[r.RequestID] = true
		req, ok := decoded[r.RequestID]
		switch r.Phase {
		case PhaseWaiting, PhaseReserved:
		case PhaseAcceptUnknown:
			if ok {
				steps = append(steps, acceptStep{kind: stepRelist, req: req, row: r})
			}
			continue
		default:
			continue
		}
		switch {
		case ok && due(now, *r) && r.Phase == PhaseWaiting:
			steps = append(steps, acceptStep{kind: stepReserve, req: req, row: r})
		case ok && due(now, *r):
			steps = append(steps, acceptStep{kind: stepAccept, req: req, row: r})
		case ok, listed(r.RequestID):
			// Listed (decodable or not): pending; nothing to conclude.
		case r.Phase == PhaseWaiting:
			steps = append(steps, acceptStep{kind: stepVanished, req: requestOf(*r), row: r})
		case due(now, *r):
			// Reserved and no longer pending: our accept landed, or the
			// request expired, was withdrawn or taken first. A repeated
			// accept with the same referenceId tells which (decideAccept).
			steps = append(steps, acceptStep{kind: stepProbe, req: requestOf(*r), row: r})
		}
	}
	for _, req := range l.requests {
		if known[req.ID] {
			continue
		}
		if expired(now, req.Expiry) {
			steps = append(steps, acceptStep{kind: stepExpired, req: req})
			continue
		}
		steps = append(steps, acceptStep{kind: stepReserve, req: req})
	}
	sort.SliceStable(steps, func(i, j int) bool {
		a, b := steps[i].req.Expiry, steps[j].req.Expiry
		switch {
		case a.IsZero() != b.IsZero():
			return b.IsZero()
		case !a.Equal(b):
			return a.Before(b)
		default:
			return steps[i].req.ID < steps[j].req.ID
		}
	})
	return steps
}

// requestOf is the remote request a row stands for.
func requestOf(r store.Request) remote.Request {
	return remote.Request{ID: r.RequestID, ClaimNumber: r.ClaimNumber, Expiry: r.Expiry, Raw: r.RequestJSON}
}

// due reports whether a row's backoff has run out.
func due(now time.Time, r store.Request) bool {
	return r.NextAttemptAt.IsZero() || !now.Before(r.NextAttemptAt)
}

// expired reports whether an expiry time has passed.
func expired(now, t time.Time) bool { return !t.IsZero() && !now.Before(t) }

// planAccept is the plan of one accept step: what the stage does with
// the request, as data. now is the pass's start. An expired request is
// never accepted: its plan stops before the call.
func planAccept(now time.Time, st acceptStep) plan {
	accept := func(listed, maybeLanded bool, expiry time.Time) call {
		if listed && expired(now, expiry) {
			return call{}
		}
		return call{kind: callAccept, listed: listed, maybeLanded: maybeLanded}
	}
	switch st.kind {
	case stepExpired:
		ch := decideGoneUnseen(st.req)
		return plan{row: requestRow(st.req), do: DoMarkGone, why: ch.next.LastError, change: &ch}
	case stepVanished:
		ch := decideVanished(now, *st.row)
		return plan{row: *st.row, do: DoMarkGone, why: ch.next.LastError, change: &ch}
	case stepRelist:
		ch := decideRelisted(*st.row)
		return plan{row: *st.row, do: DoAccept, why: "the remote lists the request as pending again: our accept did not land",
			change: &ch, call: accept(true, false, st.row.Expiry)}
	case stepReserve:
		// Reserved by this pass: no accept of ours was sent before.
		row := requestRow(st.req)
		if st.row != nil {
			row.Phase = st.row.Phase
		}
		return plan{row: row, reserve: &st.req, call: accept(true, false, st.req.Expiry)}
	case stepAccept:
		c := accept(true, true, st.row.Expiry)
		if c.kind == callNone {
			// When it leaves the pending list, the probe finds it expired
			// and the row goes gone.
			return plan{row: *st.row}
		}
		return plan{row: *st.row, do: DoAccept, why: fmt.Sprintf("reserved job %s; the request is still pending", st.row.JobNumber), call: c}
	case stepProbe:
		return plan{row: *st.row, do: DoConfirm, why: "reserved and no longer pending: a repeated accept tells whether ours landed",
			call: accept(false, true, st.row.Expiry)}
	}
	return plan{}
}

// requestRow is the row a listed request would have: what a plan shows of
// a request quotesync has no row for.
func requestRow(req remote.Request) store.Request {
	return store.Request{RequestID: req.ID, ClaimNumber: req.ClaimNumber, Expiry: req.Expiry, RequestJSON: req.Raw}
}

// decideGoneUnseen records a listed request that expired before quotesync
// could take it: a gone row, so that it is reported once.
func decideGoneUnseen(req remote.Request) change {
	next := requestRow(req)
	next.Phase, next.Reason = PhaseGone, ReasonExpired
	next.LastError = fmt.Sprintf("the request expired at %s, before quotesync could accept it", req.Expiry.UTC().Format(time.RFC3339))
	return change{next: next, ev: Event{Kind: EventGone, Detail: next.LastError}}
}

// decideVanished is the change of a waiting row whose request left the
// pending list: gone, expired or left the list.
func decideVanished(now time.Time, cur store.Request) change {
	next := cur
	next.Phase, next.NextAttemptAt, next.Attempts = PhaseGone, time.Time{}, 0
	if expired(now, cur.Expiry) {
		next.Reason = ReasonExpired
		next.LastError = "the request expired before the shop had a job for it"
	} else {
		next.Reason = ReasonLeftList
		next.LastError = "the request left the pending list before the shop had a job for it: declined or withdrawn by the insurer, or accepted by someone else"
	}
	return change{cur: cur, next: next, ev: Event{Kind: EventGone, Detail: next.LastError}}
}

// decideRelisted is the change of a request whose accept we took for
// probably landed and that the remote lists as pending again: our accept
// did not land; the request is reserved again and its accept is due.
func decideRelisted(cur store.Request) change {
	next := cur
	next.Phase, next.Reason, next.Intent = PhaseReserved, ReasonNone, IntentAccept
	next.Attempts, next.NextAttemptAt, next.LastError = 0, time.Time{}, ""
	return change{cur: cur, next: next, ev: Event{Kind: EventReserved, Job: cur.JobNumber,
		Detail: "the remote lists the request as pending again: our accept did not land; it is sent again"}}
}

// decideAccept turns the answer a to c, an accept (sent for a reserved
// row, or repeated to probe one that left the pending list), into a
// change; ok is false when the answer settles nothing (the pass was
// cancelled, or the token was refused: the caller stops the pass).
func decideAccept(cfg Config, cur store.Request, c call, a answer) (change, bool) {
	err := a.err
	call := callEvent(routeAccept, cur, a)
	status := call.Status
	accepted := func(inferred string) change {
		next := cur
		next.Phase, next.Reason, next.Intent = PhaseAccepted, ReasonNone, IntentNone
		next.Attempts, next.LastError, next.NextAttemptAt = 0, "", time.Time{}
		ev := call
		ev.Kind, ev.Err = EventAccepted, nil
		ev.Status = cmp.Or(status, 201)
		if inferred != "" {
			ev.Inferred, ev.Detail = true, inferred
		}
		return change{cur: cur, next: next, ev: ev}
	}
	switch {
	case err == nil:
		return accepted(""), true
	case errors.Is(err, remote.ErrUnreadable):
		return accepted("the remote answered 2xx; its body could not be read: " + err.Error()), true
	case errors.Is(err, remote.ErrUnauthorized):
		return change{}, false
	case errors.Is(err, remote.ErrTemporary):
		return decideRetrying(cfg, a.now, a.jitter, cur, call), true
	case errors.Is(err, remote.ErrNotFound):
		reason := ReasonUnknownRequest
		if expired(a.now, cur.Expiry) {
			reason = ReasonExpired
		}
		return giveUp(cur, PhaseGone, reason, fmt.Sprintf("the remote no longer knows the request (status %d): it expired, or was withdrawn before our accept landed", status), call), true
	case c.listed && remoteInfo(err).Attempts > 1:
		// The client sent the accept again within this call after an
		// attempt whose outcome is unknown, and the later attempt was
		// refused: the first may have landed, and the list this pass read
		// is older than both. The next pass reads the list again first.
		next := cur
		next.Reason, next.NextAttemptAt = ReasonRetrying, time.Time{}
		next.LastError = fmt.Sprintf("the accept was sent again after an attempt whose answer was lost, and refused (%v); the next pass reads the pending list again before concluding", err)
		ev := call
		ev.Kind, ev.Detail = EventRetrying, next.LastError
		return change{cur: cur, next: next, ev: ev}, true
	case errors.Is(err, remote.ErrConflict) && c.listed:
		return decideAcceptConflict(cfg, cur, call), true
	}
	// The request left the pending list and the repeated accept was
	// refused: someone accepted it. Who?
	ref, reqID := remote.Holder(err)
	aboutUs := reqID == "" || reqID == cur.RequestID
	refused := "a repeated accept was refused: " + err.Error()
	switch {
	case !c.listed && errors.Is(err, remote.ErrConflict) && ref != "" && ref == cur.JobNumber && aboutUs:
		return accepted(fmt.Sprintf("the request left the pending list, and a repeated accept answered %d naming our referenceId %s: ours had landed", status, ref)), true
	case !c.listed && errors.Is(err, remote.ErrConflict) && ref != "" && aboutUs:
		return giveUp(cur, PhaseTakenElsewhere, ReasonOtherReference, fmt.Sprintf("the remote says the request was accepted with referenceId %s, not ours (%s)", ref, cur.JobNumber), call), true
	case !c.listed && c.maybeLanded:
		next := cur
		next.Phase, next.Reason = PhaseAcceptUnknown, ReasonAcceptLost
		next.Attempts, next.NextAttemptAt = 0, time.Time{}
		next.LastError = fmt.Sprintf("an earlier accept of ours may have landed (its answer was lost); the request left the pending list and %s; taken as probably ours: the first Draft push to job %s confirms it", refused, cur.JobNumber)
		ev := call
		ev.Kind, ev.Detail = EventAcceptUnknown, next.LastError
		return change{cur: cur, next: next, ev: ev}, true
	case !c.listed && errors.Is(err, remote.ErrConflict):
		return giveUp(cur, PhaseTakenElsewhere, ReasonOtherReference, "the request left the pending list and the remote answered 409 (already accepted) without naming the referenceId; no accept of ours can have landed", call), true
	case !c.listed:
		reason, why := ReasonLeftList, "the request left the pending list before our accept landed, and "+refused
		if expired(a.now, cur.Expiry) {
			reason = ReasonExpired
		}
		return giveUp(cur, PhaseGone, reason, why, call), true
	}
	next := cur
	next.Phase, next.ResumePhase, next.Reason, next.Intent = PhaseRejected, cur.Phase, ReasonRefused, IntentNone
	next.NextAttemptAt = time.Time{}
	next.LastError = fmt.Sprintf("accept request %s with job %s: %v", cur.RequestID, cur.JobNumber, err)
	ev := call
	ev.Kind, ev.Detail = EventRejected, next.LastError
	return change{cur: cur, next: next, ev: ev}, true
}

// decideAcceptConflict handles a 409 to an accept while the request is
// still pending: the job number is taken on the remote by another request
// (our own landed accept would have taken the request off the pending
// list). One 409 can be a race with the list, so the next pass looks again;
// after MaxConflicts in a row the request is rejected back to waiting
// without a job number, so that `quotesync retry` looks the job up again
// after the shop or the mapping is fixed.
func decideAcceptConflict(cfg Config, cur store.Request, call Event) change {
	streak := 1
	if cur.Reason == ReasonAcceptConflict {
		streak = cur.Attempts + 1
	}
	next := cur
	if streak >= cfg.MaxConflicts {
		next.Phase, next.ResumePhase, next.Reason, next.Intent = PhaseRejected, PhaseWaiting, ReasonJobConflict, IntentNone
		next.JobNumber, next.JobCreated, next.NextAttemptAt, next.Attempts = "", false, time.Time{}, streak
		next.LastError = fmt.Sprintf("accept request %s with job %s refused as a conflict %s while the request stays pending: the remote has job number %s for another request; give the shop's job another number (or fix find_job/create_job), then run quotesync retry %s, which looks the job up again: %v",
			cur.RequestID, cur.JobNumber, Plural(streak, "time"), cur.JobNumber, cur.RequestID, call.Err)
		ev := call
		ev.Kind, ev.Job, ev.Attempt, ev.Detail = EventRejected, cur.JobNumber, streak, next.LastError
		return change{cur: cur, next: next, ev: ev}
	}
	next.Reason, next.Attempts, next.NextAttemptAt = ReasonAcceptConflict, streak, time.Time{}
	next.LastError = call.Err.Error()
	ev := call
	ev.Kind, ev.Attempt = EventAcceptConflict, streak
	return change{cur: cur, next: next, ev: ev}
}

// decideRetrying records a temporary failure of a remote call on cur:
// attempts counted, the error kept, the next attempt pushed back (at least
// the server's Retry-After; spread by jitter, in [0, 1)). The intent
// stays: the call may have landed.
func decideRetrying(cfg Config, now time.Time, jitter float64, cur store.Request, call Event) change {
	next := cur
	next.Attempts = cur.Attempts + 1
	next.Reason = ReasonRetrying
	next.LastError = call.Err.Error()
	next.NextAttemptAt = now.Add(cfg.retryBackoff().Delay(next.Attempts, remoteInfo(call.Err).RetryAfter, jitter))
	ev := call
	ev.Kind, ev.Attempt, ev.Next = EventRetrying, next.Attempts, next.NextAttemptAt
	return change{cur: cur, next: next, ev: ev}
}

// giveUp moves cur to a phase where quotesync no longer works on it, with
// the event of the same name: gone (it went away before our accept
// landed) or taken_elsewhere (someone else accepted it). Its job number
// is given up (release_job, in the same transaction).
func giveUp(cur store.Request, phase store.Phase, reason store.Reason, why string, call Event) change {
	next := cur
	next.Phase, next.Reason, next.Intent = phase, reason, IntentNone
	next.Attempts, next.NextAttemptAt, next.LastError = 0, time.Time{}, why
	ev := call
	ev.Kind, ev.Detail, ev.Err = EventKind(phase), why, nil
	return change{cur: cur, next: next, ev: ev, release: cur.JobNumber != ""}
}

// remoteInfo is the remote.Error in err (its status, attempts,
// Retry-After), the zero one when there is none.
func remoteInfo(err error) remote.Error {
	var re *remote.Error
	if errors.As(err, &re) {
		return *re
	}
	return remote.Error{}
}

// callEvent is the event of a remote call on cur with its answer a,
// before the decision on it gives its kind.
func callEvent(route string, cur store.Request, a answer) Event {
	return Event{Route: route, Status: remoteInfo(a.err).Status, Attempt: cur.Attempts + 1, Duration: a.d, Err: a.err}
}
