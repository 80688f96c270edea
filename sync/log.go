package sync

// Log field keys of the engine's log lines. They are stable: operators
// filter journald and log pipelines on them, and the demo renders them.
const (
	FieldRequest  = "request"
	FieldClaim    = "claim"
	FieldJob      = "job"
	FieldPhase    = "phase"
	FieldFrom     = "from"
	FieldAttempt  = "attempt"
	FieldStatus   = "status"
	FieldDuration = "duration"
	FieldRoute    = "route"
	FieldNext     = "next_attempt"
	FieldItems    = "items"
	FieldCount    = "count"
	FieldIndex    = "index"  // position of an undecodable request in the pending list
	FieldField    = "field"  // the JSON field at fault
	FieldExpiry   = "expiry" // the request's expiry
	FieldReason   = "reason" // why a request is gone

	// FieldConsecutiveErrors counts failed passes (or lock errors) in a row.
	FieldConsecutiveErrors = "consecutive_errors"
)

// Field keys of the pass summary line (MsgPassDone): the Summary's counts.
const (
	FieldPending     = "pending"
	FieldTracked     = "tracked"
	FieldAccepted    = "accepted"
	FieldDrafted     = "drafted"
	FieldRedrafted   = "redrafted"
	FieldSubmitted   = "submitted"
	FieldRejected    = "rejected"
	FieldGone        = "gone"
	FieldHeld        = "held"
	FieldWaiting     = "waiting"
	FieldRetrying    = "retrying"
	FieldSupplements = "supplements"
	// FieldReleased marks the push that released a job held for invalid
	// shop data.
	FieldReleased = "released"
)

// Log messages of the engine, one per kind of event: short, lower-case and
// stable (README.md explains each; the demo's timeline is built from them).
const (
	MsgWaiting        = "waiting for a job in the shop"
	MsgReserved       = "job number reserved"
	MsgAccepted       = "request accepted"
	MsgAcceptInferred = "request accepted (its answer was lost; confirmed by a repeated accept)"
	MsgDrafted        = "draft pushed"
	MsgRedrafted      = "draft re-pushed"
	MsgSubmitted      = "quote submitted"
	MsgRejected       = "request rejected"
	MsgGone           = "request gone"
	MsgHeld           = "job held: shop data invalid"
	MsgSupplement     = "lines changed after submission: a supplement is needed (not pushed)"
	MsgCallFailed     = "remote call failed; will retry"
	MsgExpiredUnseen  = "request expired before it could be accepted"
	MsgBadRequest     = "pending request skipped: undecodable"
	MsgPassDone       = "pass done"
	MsgPassFailed     = "pass failed"
	MsgUnauthorized   = "remote refused the token (401/403): fix the token; the pass stopped"
	MsgStale          = "state row changed under us; left to the next pass"
	MsgLeader         = "leadership acquired"
	MsgStandby        = "standby: another instance holds the lock"
	MsgLeaseLost      = "leadership lost"
	MsgRecovered      = "recovered"
	MsgInterrupted    = "pass interrupted; the next pass takes over"
	MsgJobInUse       = "job number already linked to another request; fix find_job so that it finds one job per request"
	MsgAcceptConflict = "accept answered 409; the next pass checks whether our accept landed"
	MsgSubmitDeferred = "estimate changed while the pass read it; submitting is left to the next pass"
	MsgLockFailed     = "acquire the single-instance lock"
	MsgReleaseFailed  = "release the single-instance lock"
	MsgReserveFailed  = "job number not reserved; the request waits and is tried again"
)
