package sync

import "time"

// NowOutcome is what Run did with a request for a pass at once.
type NowOutcome string

// Outcomes of a NowRequest.
const (
	// NowStarted: a pass started at once (the schedule goes on as before).
	NowStarted NowOutcome = "started"
	// NowRunning: a pass was already running; none was started. Since says
	// when it started.
	NowRunning NowOutcome = "running"
	// NowStandby: the last tick found the single-instance lock held by
	// another instance; a tick started at once and tries the lock again,
	// but while the other instance leads, it runs the passes.
	NowStandby NowOutcome = "standby"
)

// NowRequest asks Run for a pass at once (an operator's "sync now").
type NowRequest struct {
	// Reply receives the answer, once, as soon as Run has acted on the
	// request (before the pass ends); it needs room for one value.
	Reply chan<- NowAnswer
}

// NowAnswer answers a NowRequest.
type NowAnswer struct {
	Outcome NowOutcome
	Since   time.Time // NowRunning: when the running pass started
}
