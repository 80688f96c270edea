package sync

import (
	"fmt"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb/store"
)

// The reservation's decisions: a job number for a request, found by
// find_job or made by create_job, decided on what the reserve
// transaction reads (accept.go performs it; a dry run prints it), and the
// changes of a request that could not be reserved.

// reserveFacts is what the reserve transaction reads for a request: its
// row (the zero row when it has none), find_job's answer ("" when it
// found none, or was not asked because another writer reserved the
// request first), and whether create_job is configured.
type reserveFacts struct {
	cur       store.Request
	job       string
	canCreate bool
}

// reserveKind is what decideReserve decides.
type reserveKind int

const (
	reserveTaken  reserveKind = iota + 1 // another writer reserved it (or moved it on) first: left to it
	reserveFound                         // reserve find_job's job
	reserveCreate                        // create a job with create_job and reserve it
	reserveWait                          // the shop has no job for it: wait
)

// decideReserve decides a reservation on the facts read in its
// transaction.
func decideReserve(f reserveFacts) reserveKind {
	switch {
	case f.cur.Version != 0 && f.cur.Phase != PhaseWaiting:
		return reserveTaken
	case f.job != "":
		return reserveFound
	case f.canCreate:
		return reserveCreate
	}
	return reserveWait
}

// decideReserved is the change that records a request reserved with job
// (made by create_job when created; its booking date from booking_date;
// cur has Version 0 when the request had no row): a fresh start on the
// job, with the intent to accept it.
func decideReserved(cur store.Request, req remote.Request, job string, created bool, booking time.Time) change {
	next := requestRow(req)
	next.JobNumber, next.Phase, next.Intent, next.JobCreated = job, PhaseReserved, IntentAccept, created
	next.BookingDate, next.CreatedAt = booking, cur.CreatedAt
	how := "found by find_job"
	if created {
		how = "created by create_job"
	}
	return change{cur: cur, next: next, ev: Event{Kind: EventReserved, Job: job, Detail: "job " + job + " " + how}}
}

// decideWaiting is the change that records a request whose shop has no
// job yet: a waiting row the first time, nothing after that (ok false).
func decideWaiting(cur store.Request, req remote.Request) (change, bool) {
	if cur.Version != 0 {
		return change{}, false
	}
	next := requestRow(req)
	next.Phase, next.Reason = PhaseWaiting, ReasonNoJob
	return change{cur: cur, next: next, ev: Event{Kind: EventWaiting, Detail: Reason(ReasonNoJob).Words}}, true
}

// decideReserveFailed is the change that records a request whose job could
// not be found or created: waiting, with the reason and a backoff (spread
// by jitter, in [0, 1)); its event is logged only when the reason differs
// from the one stored.
func decideReserveFailed(cfg Config, now time.Time, jitter float64, cur store.Request, req remote.Request, cause error) change {
	next := triedAgain(cur, req, ReasonReserveFailed, cause)
	next.NextAttemptAt = now.Add(cfg.retryBackoff().Delay(next.Attempts, 0, jitter))
	ch := change{cur: cur, next: next}
	if store.CapText(next.LastError) != cur.LastError || cur.Reason != ReasonReserveFailed {
		ch.ev = Event{Kind: EventReserveFailed, Attempt: next.Attempts, Next: next.NextAttemptAt, Err: cause}
	}
	return ch
}

// decideShopLocked is the change that records a request whose
// reservation waited for a lock another session holds (the shop's program
// with a dialog open on the job counter) longer than shop.lock_wait:
// waiting, the attempt counted and the error (naming the holder) kept,
// and tried again at the next pass: shop.lock_wait already spaced the
// attempts, and the request is taken as soon as the lock is released. Its
// event is logged when the request first meets the lock, not at every
// pass it stays behind it.
func decideShopLocked(cur store.Request, req remote.Request, cause error) change {
	next := triedAgain(cur, req, ReasonShopLock, cause)
	next.NextAttemptAt = time.Time{}
	ch := change{cur: cur, next: next}
	if cur.Reason != ReasonShopLock {
		ch.ev = Event{Kind: EventReserveFailed, Reason: ReasonShopLock, Attempt: next.Attempts, Err: cause}
	}
	return ch
}

// decideTooLong is the change that rejects a request whose id, claim
// number or another value the shop refused as longer than its column
// (find_job or create_job): trying again cannot fix it, so it is not tried
// until a person widens the column and runs retry (back to waiting).
func decideTooLong(cur store.Request, req remote.Request, cause error) change {
	next := unreserved(cur, req)
	next.Phase, next.ResumePhase, next.Reason = PhaseRejected, PhaseWaiting, ReasonTooLong
	next.Attempts, next.NextAttemptAt = 0, time.Time{}
	next.LastError = fmt.Sprintf("%v: the shop refuses a value of this request as longer than its column; widen the column the error names (or change find_job/create_job), then run quotesync retry %s",
		cause, req.ID)
	return change{cur: cur, next: next, ev: Event{Kind: EventRejected, Reason: ReasonTooLong, Detail: next.LastError}}
}

// unreserved is the row a change of a request that holds no job starts
// from: the stored one, or a new one made of the listed request.
func unreserved(cur store.Request, req remote.Request) store.Request {
	if cur.Version == 0 {
		return requestRow(req)
	}
	return cur
}

// triedAgain is that row waiting for the reason, its failed attempt
// counted and its error kept.
func triedAgain(cur store.Request, req remote.Request, reason store.Reason, cause error) store.Request {
	next := unreserved(cur, req)
	next.Phase, next.Reason = PhaseWaiting, reason
	next.Attempts = cur.Attempts + 1
	next.LastError = cause.Error()
	return next
}
