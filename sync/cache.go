package sync

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	gosync "sync"
	"time"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// What a pass reads from the database, and how an idle pass reads almost
// nothing: with shop.queries.shop_changed configured, every pass first reads
// one fingerprint of quotesync's state and of the shop (one round trip).
// When both are the fingerprints of the last pass, the rows and the
// estimate states that pass read are still true and are used again; only
// what changed is read. Without shop_changed a pass reads the rows and the
// estimate states every time, at once: the states of the jobs the last
// pass asked for are read while the pending list and the rows are
// (statesAhead), and only jobs new since are read after.

// cacheMaxAge bounds how long rows and states read once are used again
// without being read anew, whatever the fingerprints say (a clock that
// went back on another writer could hide a change from them).
const cacheMaxAge = 10 * time.Minute

// stateCache is what the last complete pass read, kept as read for the
// next pass. It is most of what an idle daemon holds beyond the runtime:
// BenchmarkOnceIdle10k (cmd/quotesync) measures that with 10,000 jobs.
type stateCache struct {
	fp     shopdb.Fingerprint
	at     time.Time       // when the rows were read
	rows   []store.Request // a pass is given a copy
	listed []string        // the listed ids the rows were read for
	shop   jobStates       // read while the shop's fingerprint was fp.Shop; never changed once kept
}

// jobStates are estimate states as read: valid, invalid, and the jobs the
// query returned nothing for (no estimate in the shop yet).
type jobStates struct {
	states map[string]shopdb.JobState
	bad    map[string]error
	absent map[string]bool
}

func newJobStates() jobStates {
	return jobStates{states: map[string]shopdb.JobState{}, bad: map[string]error{}, absent: map[string]bool{}}
}

// readRows returns the rows a pass works on: those of the last pass when
// nothing changed since, else read anew.
func (e *Engine) readRows(ctx context.Context, p *pass, l pendingList) ([]store.Request, error) {
	q := e.openQuery(p.now, l)
	p.cachedAt = p.now
	// The engine's last pass has no use for the fingerprint: there is no
	// next pass to compare it with.
	if p.keep && e.shop.HasShopChanged() {
		fp, err := e.shop.Fingerprint(ctx, e.store.StateFingerprint())
		if err != nil {
			return nil, fmt.Errorf("read what changed: %w", err)
		}
		p.fp = &fp
		e.mu.Lock()
		c, dirty := e.cache, e.dirty
		e.dirty = false
		e.mu.Unlock()
		if c != nil && !dirty && c.fp.State == fp.State && p.now.Sub(c.at) < cacheMaxAge && covers(c.listed, q.IDs) {
			p.cachedAt = c.at
			p.rowsCached = true
			return slices.Clone(c.rows), nil
		}
	}
	return e.store.OpenRequests(ctx, q)
}

// covers reports whether every one of ids is in listed.
func covers(listed, ids []string) bool {
	// Most often the list is the same as when the rows were read.
	if slices.Equal(listed, ids) {
		return true
	}
	set := make(map[string]bool, len(listed))
	for _, id := range listed {
		set[id] = true
	}
	for _, id := range ids {
		if !set[id] {
			return false
		}
	}
	return true
}

// rememberJobs keeps the jobs whose states p asks for, for the next pass
// to read ahead (statesAhead); none when it asks for none, so that an
// idle pass does not read states for nothing.
func (e *Engine) rememberJobs(p *pass, jobs []string) {
	if !p.keep || e.shop.HasShopChanged() {
		return
	}
	last := strings.Join(jobs, "\x00")
	e.mu.Lock()
	e.lastJobs = last
	e.mu.Unlock()
}

// statesRun is estimate states asked for at the start of a pass, for the
// jobs the last pass asked for (statesAhead).
type statesRun struct {
	jobs   map[string]bool
	cancel context.CancelFunc
	done   gosync.WaitGroup
	states map[string]shopdb.JobState
	bad    map[string]error
	err    error
}

// stop cancels the run, if it still runs, and waits for it to end.
func (r *statesRun) stop() {
	if r != nil {
		r.cancel()
		r.done.Wait()
	}
}

// statesAhead starts reading the estimate states of the jobs the last
// pass asked for, without shop_changed (which would make the read
// needless when nothing changed): the database reads them while the
// pass lists pending requests and reads its rows. nil when it does not.
func (e *Engine) statesAhead(ctx context.Context, p *pass) *statesRun {
	if !p.keep || e.shop.HasShopChanged() {
		return nil
	}
	e.mu.Lock()
	last := e.lastJobs
	if last != "" {
		e.aheadStarted++
	}
	e.mu.Unlock()
	if last == "" {
		return nil
	}
	jobs := strings.Split(last, "\x00")
	r := &statesRun{jobs: make(map[string]bool, len(jobs))}
	for _, j := range jobs {
		r.jobs[j] = true
	}
	ctx, r.cancel = context.WithCancel(ctx)
	r.done.Go(func() {
		defer func() {
			if v := recover(); v != nil {
				r.err = e.recovered(v) // the pass reads them itself
			}
		}()
		r.states, r.bad, r.err = e.shop.JobStates(ctx, jobs)
	})
	return r
}

// aheadStates returns the states of jobs from p's statesAhead, and those
// of jobs it did not ask for read now. ok is false when there is none to
// use (none started, or it failed): the caller reads them all.
func (e *Engine) aheadStates(ctx context.Context, p *pass, jobs []string) (states map[string]shopdb.JobState, bad map[string]error, ok bool, err error) {
	r := p.ahead
	if r == nil {
		return nil, nil, false, nil
	}
	p.ahead = nil
	r.done.Wait()
	if r.err != nil {
		if pe := (*PanicError)(nil); errors.As(r.err, &pe) {
			p.fail(r.err) // the pass reads them itself, but fails: a bug is not let by
		}
		return nil, nil, false, nil
	}
	var need []string
	for _, j := range jobs {
		if !r.jobs[j] {
			need = append(need, j)
		}
	}
	states, bad = r.states, r.bad
	if len(jobs)-len(need) != len(r.jobs) {
		// Some jobs of the last pass are not candidates now: leave them
		// out. (A job named twice in jobs may keep one in: the caller
		// looks only at the states of its candidates.)
		states, bad = statesOf(r.states, r.bad, jobs)
	}
	if len(need) > 0 {
		got, gotBad, err := e.shop.JobStates(ctx, need)
		if err != nil {
			return nil, nil, false, err
		}
		maps.Copy(states, got)
		maps.Copy(bad, gotBad)
	}
	e.mu.Lock()
	e.aheadPasses++
	e.aheadAfter += len(need)
	e.mu.Unlock()
	return states, bad, true, nil
}

// readStates returns the estimate states of jobs: those the last pass
// read when the shop did not change since, and the others read anew in one
// statement. The maps may be the cache's: the caller does not change them.
func (e *Engine) readStates(ctx context.Context, p *pass, jobs []string) (map[string]shopdb.JobState, map[string]error, error) {
	have := newJobStates()
	cached := false
	if p.fp != nil {
		e.mu.Lock()
		c := e.cache
		e.mu.Unlock()
		if c != nil && c.fp.Shop == p.fp.Shop {
			have, cached = c.shop, true
		}
	}
	var need []string
	found := 0 // jobs in have.states
	for _, j := range jobs {
		if _, ok := have.states[j]; ok {
			found++
		} else if have.bad[j] == nil && !have.absent[j] {
			need = append(need, j)
		}
	}
	fresh := len(have.states)+len(have.bad)+len(have.absent) == 0
	if len(need) == 0 && found == len(have.states) && len(have.bad) == 0 {
		// The states are those of the jobs (the usual idle pass): no need
		// to copy them.
		p.shop = have
		return have.states, have.bad, nil
	}
	if len(need) > 0 {
		if cached {
			// The cache's are kept as they are.
			have = jobStates{states: maps.Clone(have.states), bad: maps.Clone(have.bad), absent: maps.Clone(have.absent)}
		}
		got, gotBad, ok, err := e.aheadStates(ctx, p, need)
		if err == nil && !ok {
			got, gotBad, err = e.shop.JobStates(ctx, need)
		}
		if err != nil {
			return nil, nil, err
		}
		if fresh {
			// Nothing was cached: the answer is the states, as it is (a
			// pass over ten thousand jobs does not copy them twice).
			have.states, have.bad = got, gotBad
			for _, j := range need {
				if _, ok := got[j]; !ok && gotBad[j] == nil {
					have.absent[j] = true
				}
			}
			p.shop = have
			return got, gotBad, nil
		}
		for _, j := range need {
			switch {
			case gotBad[j] != nil:
				have.bad[j] = gotBad[j]
			case func() bool { _, ok := got[j]; return ok }():
				have.states[j] = got[j]
			default:
				have.absent[j] = true
			}
		}
	}
	p.shop = have
	states, bad := statesOf(have.states, have.bad, jobs)
	return states, bad, nil
}

// statesOf returns the states and the invalid rows of jobs among states
// and bad, in maps of their own.
func statesOf(states map[string]shopdb.JobState, bad map[string]error, jobs []string) (map[string]shopdb.JobState, map[string]error) {
	outStates, outBad := make(map[string]shopdb.JobState, len(jobs)), map[string]error{}
	for _, j := range jobs {
		if st, ok := states[j]; ok {
			outStates[j] = st
		}
		if err := bad[j]; err != nil {
			outBad[j] = err
		}
	}
	return outStates, outBad
}

// keepCache remembers what a pass that ended well read, for the next one;
// a pass that failed, or the engine's last, leaves nothing to use again.
// rows are those the pass read (or was given by the cache), ids the listed
// ids it read them for.
func (e *Engine) keepCache(p *pass, rows []store.Request, ids []string, err error) {
	if p.fp == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil || !p.keep {
		e.cache = nil
		return
	}
	old := e.cache
	c := &stateCache{fp: *p.fp, at: p.cachedAt, rows: rows, listed: ids}
	if p.rowsCached && old != nil {
		c.rows, c.listed = old.rows, old.listed // as kept, not the pass's copy
	}
	switch {
	case p.shop.states != nil:
		c.shop = p.shop
	case old != nil && old.fp.Shop == p.fp.Shop:
		c.shop = old.shop // no job needed a state this pass
	default:
		c.shop = newJobStates()
	}
	e.cache = c
}

// touched notes that quotesync's state changed: the next pass reads the
// rows anew.
func (e *Engine) touched() {
	e.mu.Lock()
	e.dirty = true
	e.mu.Unlock()
}
