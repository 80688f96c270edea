package store

import (
	"encoding/json"
	"errors"
	"time"
)

// Phase is the phase column of a tracked request: where it stands in the
// reconciler's state machine. The store stores it and filters on it; the
// values, their meaning and the transitions between them belong to the
// state machine (package sync, machine.go), not to this package.
type Phase string

// Reason is the reason column: why a request is where it is (held for
// invalid shop data, rejected by the remote, gone because it expired, …).
// Its values are defined by the state machine, like Phase's.
type Reason string

// Intent is the intent column: the remote effect that was sent (or is
// about to be) and whose outcome is not recorded yet, so that a retry after
// a crash or a lost answer knows that the effect may have landed. Its
// values are defined by the state machine.
type Intent string

// Request is quotesync's own row for one remote quote request, keyed by
// its insurer and its id (two insurers' services may use one id).
type Request struct {
	// Insurer is the insurer whose service sent the request; "" for a row
	// written before insurers had names and not adopted yet (Adoptable).
	Insurer     string
	RequestID   string
	ClaimNumber string
	JobNumber   string // "" while the request has no job
	Phase       Phase
	// ResumePhase is the phase `retry` puts a rejected request back into.
	ResumePhase Phase
	// Reason says why the request is in its phase, or what holds it; ""
	// when nothing does. LastError carries the details in words.
	Reason Reason
	// Intent is the remote effect in flight whose outcome is unknown.
	Intent Intent
	// JobCreated says the job number was made by create_job (rather than
	// found by find_job): releasing it is then quotesync's business.
	JobCreated bool
	// ReleasedJob is the job number a request held before it was taken
	// elsewhere or went away without being accepted by us, kept for the
	// report after JobNumber is cleared.
	ReleasedJob string
	// PushedHash is the hash of the quote payload the remote last
	// acknowledged; "" before the first acknowledged push.
	PushedHash string
	// PushedMarker is the shop's change marker (estimate_state.marker) at
	// the time of the last acknowledged push or check; "" when unknown.
	PushedMarker string
	// SupplementNeeded is set once the shop's lines changed after the quote
	// was submitted; the change is never pushed.
	SupplementNeeded bool
	Attempts         int       // consecutive failed attempts of the current step
	NextAttemptAt    time.Time // zero: due now
	LastError        string    // the details of Reason in words; "" when none
	Expiry           time.Time // zero when the remote gave none
	BookingDate      time.Time // zero when none; re-sent unchanged on every accept retry
	RequestJSON      json.RawMessage
	CreatedAt        time.Time
	UpdatedAt        time.Time
	PushedAt         time.Time // zero before the first push was sent
	// SubmittedAt is when the submit was sent: set before the status change
	// goes out and kept once it is confirmed; zero when no submit of ours
	// was ever sent.
	SubmittedAt time.Time
	// Version increases by one with every update; Update compares it.
	Version int64
}

// Event is one entry of the append-only event log. Kind and Reason are
// the reconciler's words; the store stores them as given.
type Event struct {
	ID int64
	// Insurer is the request's insurer; written as the recording DB's
	// when empty.
	Insurer   string
	RequestID string `db:"request_id"`
	Job       string
	Kind      string
	From      Phase `db:"from_phase"` // for phase changes
	To        Phase `db:"to_phase"`   // for phase changes
	Reason    Reason
	Route     string // for remote calls, e.g. "POST /requests/{id}"
	Status    int    // HTTP status of a remote call, 0 when none
	Attempt   int
	Duration  time.Duration
	Items     int    // quote items of a push
	Hash      string // quote hash of a push
	Message   string
	At        time.Time
	// Outbox, when set, queues the event's deliveries (write-back,
	// notifications) in the transaction that records it. Not read back.
	Outbox *Outbox
}

// Errors callers branch on.
var (
	// ErrStale: Update found the row changed since it was read (another
	// process or pass advanced it); re-read and decide again.
	ErrStale = errors.New("state row changed since it was read")
	// ErrExists: Insert found a row for the request already (another
	// process recorded it first); re-read and decide again.
	ErrExists = errors.New("state row exists already")
	// ErrJobInUse: the job number is already linked to another request.
	ErrJobInUse = errors.New("job number already linked to another request")
	// ErrLockWait: a statement waited for a lock another session holds
	// (the shop's program, say) until the server's lock wait
	// (shop.lock_wait) ran out; the error names the holder when the
	// server tells. Nothing of the transaction was kept: try again later.
	// A statement shop.query_timeout ends is not one: it may only be slow.
	ErrLockWait = errors.New("lock wait")
	// ErrNotFound: no tracked request with that id.
	ErrNotFound = errors.New("request not tracked")
	// ErrNotLeader: another instance holds the single-instance lock.
	ErrNotLeader = errors.New("another quotesync instance holds the lock")
	// ErrLeaseLost: the lock connection died or the lock was taken.
	ErrLeaseLost = errors.New("single-instance lock lost")
	// ErrSchemaTooNew: the state tables were migrated by a newer quotesync.
	ErrSchemaTooNew = errors.New("state schema is newer than this quotesync")
	// ErrNoStateTables: quotesync's tables do not exist yet (the first
	// start of the daemon creates them).
	ErrNoStateTables = errors.New("quotesync's state tables do not exist yet")
)
