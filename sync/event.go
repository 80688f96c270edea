package sync

import (
	"time"

	"github.com/quotesync/quotesync/shopdb/store"
)

// EventKind names what happened. A kind that goes with a state change is
// stored in the event log with that change, in the same transaction.
type EventKind string

// Kinds of events of one request.
const (
	EventWaiting        EventKind = "waiting"         // first seen; the shop has no job for it yet
	EventReserveFailed  EventKind = "reserve_failed"  // finding or creating the job failed; tried again later
	EventReserved       EventKind = "reserved"        // a job number is committed locally, before the accept
	EventAccepted       EventKind = "accepted"        // the remote confirmed our accept
	EventAcceptUnknown  EventKind = "accept_unknown"  // our accept probably landed; to be confirmed
	EventAcceptConflict EventKind = "accept_conflict" // 409 to an accept while the request is pending
	EventTakenElsewhere EventKind = "taken_elsewhere" // someone else accepted the request
	EventDrafted        EventKind = "drafted"         // the first Draft was pushed
	EventRedrafted      EventKind = "redrafted"       // a Draft was pushed again after a change
	EventSubmitted      EventKind = "submitted"       // the quote is Submitted
	EventSupplement     EventKind = "supplement"      // the lines changed after submission; not pushed
	EventRejected       EventKind = "rejected"        // the remote refused for good
	EventGone           EventKind = "gone"            // expired or left the list before our accept landed
	EventHeld           EventKind = "held"            // the job is held back (reason)
	EventReleased       EventKind = "released"        // a held job's data is valid again
	EventRetrying       EventKind = "retrying"        // a remote call failed for now; tried again later
	EventUnreadable     EventKind = "unreadable"      // a write landed but its answer could not be read
	EventRetry          EventKind = "retry"           // a person put the request back into the flow
	EventSkipped        EventKind = "skipped"         // a listed request that cannot be taken (undecodable, too long)
	EventSubmitDeferred EventKind = "submit_deferred" // the estimate changed while the pass read it
	EventStale          EventKind = "stale"           // the row changed under us; left to the next pass
	EventExpiring       EventKind = "expiring"        // not accepted and close to its expiry (noticed once)
)

// Kinds of events of the daemon as a whole.
const (
	EventPassDone      EventKind = "pass_done"      // a pass ended (Summary, Err)
	EventStatusForm    EventKind = "status_form"    // remote.status_path auto found the form the service serves
	EventLeader        EventKind = "leader"         // this instance took the single-instance lock
	EventStandby       EventKind = "standby"        // another instance holds the lock
	EventLeaseLost     EventKind = "lease_lost"     // the lock was lost
	EventLockFailed    EventKind = "lock_failed"    // the lock could not be taken or checked
	EventReleaseFailed EventKind = "release_failed" // the lock could not be released
	EventAuthFailing   EventKind = "auth_failing"   // the remote refuses the token (noticed once per episode)
)

// Event is one thing that happened, handed to every Observer. Fields that
// do not apply are zero.
type Event struct {
	Kind EventKind
	At   time.Time

	// Insurer is the insurer of the request, or of the engine whose pass
	// it reports; "" for an event of the daemon as a whole (the lock).
	Insurer string

	Request, Claim, Job string
	From, To            store.Phase // the phase before and after (equal when it did not change)
	Reason              store.Reason
	Detail              string // the reason's details, in words

	Route    string        // a remote call: its route, e.g. "POST /requests/{id}"
	Status   int           // its HTTP status, 0 when none
	Attempt  int           // its attempt number (consecutive attempts of the step)
	Duration time.Duration // its duration
	Next     time.Time     // when the step is tried again

	Items    int    // a push: how many quote items
	Hash     string // a push: the quote's hash
	Released bool   // a push that released a held job
	Inferred bool   // an acceptance inferred from a repeated accept's answer

	Err error // the cause, when there is one

	Summary *Summary // EventPassDone: what the pass did
	Streak  int      // EventPassDone, EventLockFailed: consecutive failures
}

// Observer receives events: the log, the metrics, the demo's timeline and
// tests observe the engine this way. Observe is called synchronously, from
// the engine's goroutines (several at once), after the change the event
// reports is durable; it must be quick and safe for concurrent use.
type Observer interface {
	Observe(Event)
}

// observers fans an event out.
type observers []Observer

func (os observers) Observe(ev Event) {
	for _, o := range os {
		o.Observe(ev)
	}
}
