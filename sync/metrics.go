package sync

import (
	"time"

	"github.com/quotesync/quotesync/shopdb"
)

// Error kinds counted by Metrics.Error.
const (
	ErrKindList         = "list"         // listing pending requests failed
	ErrKindState        = "state"        // reading or writing quotesync's state failed
	ErrKindShopData     = "shop_data"    // a job's lines are invalid
	ErrKindReserve      = "reserve"      // allocating a job number failed
	ErrKindTemporary    = "temporary"    // a remote call failed temporarily
	ErrKindRejected     = "rejected"     // the remote refused for good
	ErrKindUnauthorized = "unauthorized" // the remote refused the token
	ErrKindLock         = "lock"         // the single-instance lock failed
)

// Metrics receives the engine's counters and gauges; cmd exports them to
// Prometheus. Methods are called from several goroutines at once.
type Metrics interface {
	// PassDone is called after every pass with its duration and outcome.
	PassDone(d time.Duration, err error)
	// Transition counts one phase change.
	Transition(from, to shopdb.Phase)
	// Error counts one error of the given kind (an ErrKind… constant).
	Error(kind string)
	// OpenPhases reports how many open requests are in each phase, after
	// each pass.
	OpenPhases(counts map[shopdb.Phase]int)
	// Leader reports whether this instance holds the single-instance lock.
	Leader(leader bool)
}

// nopMetrics discards everything.
type nopMetrics struct{}

func (nopMetrics) PassDone(time.Duration, error)   {}
func (nopMetrics) Transition(_, _ shopdb.Phase)    {}
func (nopMetrics) Error(string)                    {}
func (nopMetrics) OpenPhases(map[shopdb.Phase]int) {}
func (nopMetrics) Leader(bool)                     {}
