package sync

import (
	"context"
	"fmt"
	"time"

	"github.com/quotesync/quotesync/shopdb"
)

// What a pass reads from the database, and how an idle pass reads almost
// nothing: with shop.queries.shop_changed configured, every pass first reads
// one fingerprint of quotesync's state and of the shop (one round trip).
// When both are the fingerprints of the last pass, the rows and the
// estimate states that pass read are still true and are used again; only
// what changed is read. Without shop_changed a pass reads the rows and the
// estimate states every time (two round trips).

// cacheMaxAge bounds how long rows and states read once are used again
// without being read anew, whatever the fingerprints say (a clock that
// went back on another writer could hide a change from them).
const cacheMaxAge = 10 * time.Minute

// stateCache is what the last complete pass read, in the compact form
// (cacheform.go): an idle daemon keeps it between passes.
type stateCache struct {
	fp     shopdb.Fingerprint
	at     time.Time // when the rows were read
	rows   *packedRows
	listed packedIDs     // the listed ids the rows were read for
	shop   *packedStates // read while the shop's fingerprint was fp.Shop; its rows are rows
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

// fromCache is what of the cache a pass used as it was: the next cache
// keeps it without packing it again.
type fromCache struct {
	packed *packedRows      // the rows the pass works on are these, unpacked…
	rows   []shopdb.Request // …as rows
	listed packedIDs        // the listed ids packed with them
	shop   *packedStates    // the estimate states the pass read are these
}

// readRows returns the rows a pass works on: those of the last pass when
// nothing changed since, else read anew.
func (e *Engine) readRows(ctx context.Context, p *pass, l pendingList) ([]shopdb.Request, error) {
	q := e.openQuery(p.now, l)
	p.cachedAt = p.now
	// The engine's last pass has no use for the fingerprint: there is no
	// next pass to compare it with.
	if !p.dry && !p.last && e.store.HasShopChanged() {
		fp, err := e.store.Fingerprint(ctx)
		if err != nil {
			return nil, fmt.Errorf("read what changed: %w", err)
		}
		p.fp = &fp
		e.mu.Lock()
		c, dirty := e.cache, e.dirty
		e.dirty = false
		e.mu.Unlock()
		if c != nil && !dirty && c.fp.State == fp.State && p.now.Sub(c.at) < cacheMaxAge {
			rows := c.rows.unpack()
			if c.listed.covers(rows, q.IDs) {
				p.cachedAt = c.at
				p.from.packed, p.from.rows, p.from.listed = c.rows, rows, c.listed
				return rows, nil
			}
		}
	}
	return e.store.OpenRequests(ctx, q)
}

// covers reports whether every id is in set.
func covers(set map[string]bool, ids []string) bool {
	for _, id := range ids {
		if !set[id] {
			return false
		}
	}
	return true
}

// unpackStates returns the estimate states ps holds; rows are ps.rows
// unpacked when the pass already has them.
func unpackStates(ps *packedStates, from fromCache) jobStates {
	rows := from.rows
	if from.packed != ps.rows {
		rows = ps.rows.unpack()
	}
	return ps.unpack(rows)
}

// readStates returns the estimate states of jobs: those the last pass
// read when the shop did not change since, and the others read anew in one
// statement.
func (e *Engine) readStates(ctx context.Context, p *pass, jobs []string) (map[string]shopdb.JobState, map[string]error, error) {
	have := newJobStates()
	var cached *packedStates
	if p.fp != nil {
		e.mu.Lock()
		c := e.cache
		e.mu.Unlock()
		if c != nil && c.fp.Shop == p.fp.Shop {
			cached = c.shop
			have = unpackStates(cached, p.from)
		}
	}
	var need []string
	found := 0 // jobs in have.states
	for _, j := range jobs {
		_, ok := have.states[j]
		if ok {
			found++
		} else if have.bad[j] == nil && !have.absent[j] {
			need = append(need, j)
		}
	}
	fresh := len(have.states)+len(have.bad)+len(have.absent) == 0
	if len(need) == 0 {
		p.from.shop = cached
		p.shop = have
		if found == len(have.states) && len(have.bad) == 0 {
			// The states are those of the jobs (the usual idle pass): no
			// need to copy them.
			return have.states, have.bad, nil
		}
	}
	if len(need) > 0 {
		got, gotBad, err := e.store.JobStates(ctx, need)
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
	states, bad := make(map[string]shopdb.JobState, len(jobs)), map[string]error{}
	for _, j := range jobs {
		if st, ok := have.states[j]; ok {
			states[j] = st
		}
		if berr := have.bad[j]; berr != nil {
			bad[j] = berr
		}
	}
	return states, bad, nil
}

// keepCache remembers what a pass that ended well read, for the next one;
// a pass that failed, or the engine's last, leaves nothing to use again.
// rows are those the pass read (or was given by the cache).
func (e *Engine) keepCache(p *pass, rows []shopdb.Request, ids []string, err error) {
	if p.dry || p.fp == nil {
		return
	}
	if err != nil || p.last {
		e.mu.Lock()
		e.cache = nil
		e.mu.Unlock()
		return
	}
	e.mu.Lock()
	old := e.cache
	e.mu.Unlock()
	c := &stateCache{fp: *p.fp, at: p.cachedAt, rows: p.from.packed, listed: p.from.listed}
	if c.rows == nil {
		c.rows, c.listed = packRows(rows), packIDs(ids, rows)
	}
	switch {
	case p.shop.states != nil && p.from.shop != nil && p.from.shop.rows == c.rows:
		c.shop = p.from.shop // as read from the cache, for the same rows
	case p.shop.states != nil:
		c.shop = packStates(p.shop, c.rows, rows)
	case old != nil && old.fp.Shop == p.fp.Shop && old.shop.rows == c.rows:
		c.shop = old.shop // no job needed a state this pass
	case old != nil && old.fp.Shop == p.fp.Shop:
		c.shop = packStates(unpackStates(old.shop, fromCache{}), c.rows, rows)
	default:
		c.shop = packStates(newJobStates(), c.rows, rows)
	}
	e.mu.Lock()
	e.cache = c
	e.mu.Unlock()
}

// touched notes that quotesync's state changed: the next pass reads the
// rows anew.
func (e *Engine) touched() {
	e.mu.Lock()
	e.dirty = true
	e.mu.Unlock()
}
