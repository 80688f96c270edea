package sync

// Log field keys. They are stable: operators filter journald and log
// pipelines on them.
const (
	fieldRequest  = "request"
	fieldClaim    = "claim"
	fieldJob      = "job"
	fieldPhase    = "phase"
	fieldFrom     = "from"
	fieldAttempt  = "attempt"
	fieldStatus   = "status"
	fieldDuration = "duration"
	fieldRoute    = "route"
	fieldNext     = "next_attempt"
	fieldItems    = "items"
	fieldCount    = "count"
)

// Log messages, one per kind of event. Short, lower-case constants.
const (
	msgWaiting        = "waiting for a job in the shop"
	msgReserved       = "job number reserved"
	msgAccepted       = "request accepted"
	msgAcceptInferred = "request accepted (confirmed by its absence from the pending list)"
	msgDrafted        = "draft pushed"
	msgRedrafted      = "draft re-pushed"
	msgSubmitted      = "quote submitted"
	msgRejected       = "request rejected"
	msgGone           = "request gone"
	msgHeld           = "job held: shop data invalid"
	msgSupplement     = "lines changed after submission: a supplement is needed (not pushed)"
	msgCallFailed     = "remote call failed; will retry"
	msgExpiredUnseen  = "request expired before it could be accepted"
	msgBadRequest     = "pending request skipped: undecodable"
	msgPassDone       = "pass done"
	msgPassFailed     = "pass failed"
	msgUnauthorized   = "remote refused the token (401/403): fix the token; the pass stopped"
	msgStale          = "state row changed under us; left to the next pass"
	msgLeader         = "leadership acquired"
	msgStandby        = "standby: another instance holds the lock"
	msgLeaseLost      = "leadership lost"
	msgRecovered      = "recovered"
)
