package main

import (
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"

	qsync "github.com/quotesync/quotesync/sync"
)

// defaultGCPercent is the GOGC quotesync runs with when the environment
// sets none. A pass over thousands of jobs holds some MiB of rows, states
// and lines for a second and then nothing; at the runtime's default of 100
// the heap grows to twice what is live before it is collected, and that
// peak is the process's resident set. At 50 the peak is a third lower for
// a few more collections per pass (milliseconds each at these heap
// sizes). GOGC in the environment (for example in a systemd drop-in)
// overrides it.
const defaultGCPercent = 50

// tuneMemory sets the garbage collector's target unless GOGC is set.
func tuneMemory() {
	if _, ok := os.LookupEnv("GOGC"); !ok {
		debug.SetGCPercent(defaultGCPercent)
	}
}

// memoryReleaser is the daemon's Observer that returns what a pass freed
// to the operating system once the pass is over: an idle daemon
// allocates next to nothing between passes, so without it the runtime
// keeps the last pass's peak resident for minutes.
type memoryReleaser struct{ busy atomic.Bool }

// releaseDelay is how long after its EventPassDone a pass's garbage is
// collected: the event is sent while the pass still holds what it read,
// and it returns within milliseconds.
const releaseDelay = time.Second

// Observe implements qsync.Observer.
func (m *memoryReleaser) Observe(ev qsync.Event) {
	if ev.Kind != qsync.EventPassDone || !m.busy.CompareAndSwap(false, true) {
		return
	}
	time.AfterFunc(releaseDelay, func() {
		defer m.busy.Store(false)
		debug.FreeOSMemory()
	})
}
