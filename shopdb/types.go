package shopdb

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/shopspring/decimal"
)

// Phase is where one remote quote request stands in quotesync's state
// machine (see DESIGN.md).
type Phase string

// The phases of a tracked request.
const (
	// PhaseWaiting: seen pending on the remote, but the shop has no job for
	// it yet (find_job found none and no create_job is configured).
	PhaseWaiting Phase = "waiting"
	// PhaseReserved: a job number is allocated and committed locally; the
	// accept call may or may not have reached the remote.
	PhaseReserved Phase = "reserved"
	// PhaseAccepted: the remote confirmed the accept (or the request left
	// the pending list after our accept was sent).
	PhaseAccepted Phase = "accepted"
	// PhaseDrafted: a Draft was pushed; PushedHash is what the remote holds.
	PhaseDrafted Phase = "drafted"
	// PhaseSubmitted: the status change to Submitted succeeded. Terminal.
	PhaseSubmitted Phase = "submitted"
	// PhaseRejected: the remote refused for a reason retrying cannot fix, or
	// the shop's data for the job is invalid. Terminal until `retry`.
	PhaseRejected Phase = "rejected"
	// PhaseGone: the request expired or vanished before we accepted it.
	// Terminal.
	PhaseGone Phase = "gone"
)

// Terminal reports whether no pass will move a request out of p on its own.
func (p Phase) Terminal() bool {
	return p == PhaseSubmitted || p == PhaseRejected || p == PhaseGone
}

// Request is quotesync's own row for one remote quote request.
type Request struct {
	RequestID   string
	ClaimNumber string
	JobNumber   string // "" while waiting
	Phase       Phase
	// ResumePhase is the phase `retry` puts a rejected request back into.
	ResumePhase Phase
	// PushedHash is the hash of the quote payload the remote last
	// acknowledged; "" before the first push.
	PushedHash string
	// PushedMarker is the shop's change marker (estimate_state.marker) at
	// the time of the last acknowledged push or check; "" when unknown.
	PushedMarker string
	// SupplementNeeded is set once the shop's lines changed after the quote
	// was submitted; the change is never pushed.
	SupplementNeeded bool
	Attempts         int       // consecutive failed attempts of the current step
	NextAttemptAt    time.Time // zero: due now
	LastError        string    // "" when the last step succeeded
	Expiry           time.Time // zero when the remote gave none
	BookingDate      time.Time // zero when none; re-sent unchanged on every accept retry
	RequestJSON      json.RawMessage
	CreatedAt        time.Time
	UpdatedAt        time.Time
	PushedAt         time.Time // zero before the first push
	SubmittedAt      time.Time // zero until submitted
	// Version increases by one with every update; Update compares it.
	Version int64
}

// NewRequest is what Reserve needs to know about a remote request. The
// mapping's named parameters are derived from it: :request_id,
// :claim_number, :expiry, and the configured JSON paths into RequestJSON.
type NewRequest struct {
	RequestID   string
	ClaimNumber string
	Expiry      time.Time
	RequestJSON json.RawMessage
}

// Line is one validated estimate line of a job.
type Line struct {
	Job         string
	LineID      string // stable id of the line in the shop; the remote item id
	Order       int
	Code        string // the shop's operation code, e.g. "R&R"
	WorkType    string // the remote work type the code maps to, e.g. "RemoveReplaceLabour"
	Description string
	PartNumber  string // "" when none
	Quantity    decimal.Decimal
	Price       decimal.Decimal // unit price, with the shop's precision
	// Total is the shop's line total when the query returns one, else
	// Quantity × Price rounded half up to cents.
	Total decimal.Decimal
}

// JobState is what estimate_state says about one job.
type JobState struct {
	Job    string
	Final  bool   // the shop marked the estimate final
	Marker string // change marker, "" when the query has none
}

// Event is one entry of the append-only event log.
type Event struct {
	ID        int64
	RequestID string
	Job       string
	Kind      string // EventPhase, EventCall, EventWarning, EventRetry
	From      Phase  // for phase changes
	To        Phase  // for phase changes
	Route     string // for remote calls, e.g. "POST /requests/{id}"
	Status    int    // HTTP status of a remote call, 0 when none
	Attempt   int
	Duration  time.Duration
	Message   string
	At        time.Time
}

// Event kinds.
const (
	EventPhase   = "phase"
	EventCall    = "call"
	EventWarning = "warning"
	EventRetry   = "retry"
)

// Errors callers branch on.
var (
	// ErrStale: Update found the row changed since it was read (another
	// process or pass advanced it); re-read and decide again.
	ErrStale = errors.New("state row changed since it was read")
	// ErrNoJob: find_job found no job and no create_job is configured.
	ErrNoJob = errors.New("no job in the shop for this request")
	// ErrJobInUse: the job number is already linked to another request.
	ErrJobInUse = errors.New("job number already linked to another request")
	// ErrNotFound: no tracked request with that id.
	ErrNotFound = errors.New("request not tracked")
	// ErrNotLeader: another instance holds the single-instance lock.
	ErrNotLeader = errors.New("another quotesync instance holds the lock")
	// ErrLeaseLost: the lock connection died or the lock was taken.
	ErrLeaseLost = errors.New("single-instance lock lost")
	// ErrSchemaTooNew: the state tables were migrated by a newer quotesync.
	ErrSchemaTooNew = errors.New("state schema is newer than this quotesync")
	// ErrNotRejected: Retry was asked for a request that is not rejected.
	ErrNotRejected = errors.New("request is not rejected")
)
