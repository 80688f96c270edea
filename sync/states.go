package sync

import (
	"cmp"
	"context"
	"fmt"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/quotesync/quotesync/shopdb"
)

// The engines of one Daemon share the read of the estimate states when
// their passes overlap. Without shop.queries.shop_changed every idle pass
// reads the states of its jobs (statesAhead, cache.go), and the insurers'
// passes, on the same schedule, start at the same moment. The server's
// cost of estimate_state is mostly per statement, not per job: with the
// sample shop, one statement over 10,000 jobs costs it about half the CPU
// of two over 5,000 each, sent one after the other or at once
// (BenchmarkIdlePassInsurers; docs/benchmarks.md). So the engines that ask
// within a few milliseconds of each other have their jobs read in one
// statement, and each is given the states of its own.
//
// A state is the same whichever insurer asks: estimate_state binds the
// jobs only (never the insurer), the change markers derived from the
// lines do not depend on the insurer's work types, and a job is held by
// at most one live request anyway.
//
// Unlike the fingerprint (fingerprints.go), an engine never joins a
// statement already sent: it joins one that is still gathering jobs, so
// the statement starts after every engine in it asked, and each gets
// states no older than those of a read of its own. The first to ask waits
// for the others at most statesWindow, and not at all once every engine
// asked; with one engine (a lone insurer) nothing waits, each read is the
// engine's own.

// statesWindow is how long the first engine to ask waits for the others:
// passes started together ask within a millisecond or two of each other,
// and a pass that asks alone is late by no more than this.
const statesWindow = 5 * time.Millisecond

// stateReads coalesces the engines' estimate-state reads. engines is
// how many engines may ask (at most that many join one statement); the
// zero value reads each on its own.
type stateReads struct {
	engines    int
	window     time.Duration // 0: statesWindow
	statements atomic.Int64  // statements sent (for tests and benchmarks)

	mu   gosync.Mutex
	open *statesBatch // gathering jobs; nil once sent
}

// statesBatch is one statement and the engines waiting for it.
type statesBatch struct {
	ctx     context.Context
	cancel  context.CancelFunc
	full    chan struct{} // closed when every engine asked
	done    chan struct{} // closed when the statement ended
	jobs    []string      // every caller's, until sent
	callers int           // callers that asked (fixed once sent)
	waiting int           // callers still waiting for the answer

	states map[string]shopdb.JobState
	bad    map[string]error
	err    error
}

// read returns the estimate states of jobs, as shopdb.DB.JobStates, read
// together with those other engines ask for meanwhile. The statement runs
// detached from the cancellation of any one caller (shopdb bounds it with
// shop.query_timeout), and is cancelled when every caller stopped waiting;
// each caller stops waiting when its own ctx ends.
func (s *stateReads) read(ctx context.Context, db *shopdb.DB, jobs []string) (map[string]shopdb.JobState, map[string]error, error) {
	if s.engines <= 1 || len(jobs) == 0 {
		if len(jobs) > 0 {
			s.statements.Add(1)
		}
		return db.JobStates(ctx, jobs)
	}
	s.mu.Lock()
	b := s.open
	if b == nil {
		b = &statesBatch{full: make(chan struct{}), done: make(chan struct{})}
		b.ctx, b.cancel = context.WithCancel(context.WithoutCancel(ctx))
		s.open = b
		go s.send(b, db)
	}
	b.jobs = append(b.jobs, jobs...)
	b.callers++
	b.waiting++
	if b.callers >= s.engines {
		s.open = nil
		close(b.full)
	}
	s.mu.Unlock()
	select {
	case <-b.done:
		return b.of(jobs)
	case <-ctx.Done():
		s.mu.Lock()
		b.waiting--
		if b.waiting == 0 {
			// Nobody waits for it: no engine joins it any more, and the
			// statement, sent or not, is cancelled.
			if s.open == b {
				s.open = nil
			}
			b.cancel()
		}
		s.mu.Unlock()
		return nil, nil, ctx.Err()
	}
}

// send sends b's statement once every engine asked or the window passed.
func (s *stateReads) send(b *statesBatch, db *shopdb.DB) {
	defer close(b.done)
	defer b.cancel()
	// A panic on this goroutine of its own (nothing could recover it)
	// becomes the readers' error, as in fingerprints.read.
	defer func() {
		if r := recover(); r != nil {
			b.states, b.bad, b.err = nil, nil, fmt.Errorf("read estimate states: panic: %v", r)
		}
	}()
	t := time.NewTimer(cmp.Or(s.window, statesWindow))
	select {
	case <-b.full:
	case <-t.C:
	case <-b.ctx.Done():
	}
	t.Stop()
	s.mu.Lock()
	if s.open == b {
		s.open = nil
	}
	jobs := b.jobs
	b.jobs = nil
	s.mu.Unlock()
	if err := b.ctx.Err(); err != nil {
		b.err = err // every caller stopped waiting: nothing to read for
		return
	}
	s.statements.Add(1)
	b.states, b.bad, b.err = db.JobStates(b.ctx, jobs)
}

// of returns the states of jobs from b's answer: maps of their own, the
// caller may keep them (a lone caller gets the answer as it is).
func (b *statesBatch) of(jobs []string) (map[string]shopdb.JobState, map[string]error, error) {
	if b.err != nil {
		return nil, nil, b.err
	}
	if b.callers == 1 {
		return b.states, b.bad, nil
	}
	states, bad := statesOf(b.states, b.bad, jobs)
	return states, bad, nil
}

// sharedStates is an insurer's view of the shop's database whose
// fingerprint and estimate-state reads are shared with the daemon's other
// engines.
type sharedStates struct {
	sharedShop
	states *stateReads
}

func (s sharedStates) JobStates(ctx context.Context, jobs []string) (map[string]shopdb.JobState, map[string]error, error) {
	return s.states.read(ctx, s.DB, jobs)
}
