package sync

import (
	"context"
	"fmt"
	"maps"
	"slices"
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

// stateCache is what the last complete pass read.
type stateCache struct {
	fp     shopdb.Fingerprint
	at     time.Time // when the rows were read
	rows   []shopdb.Request
	listed map[string]bool // the listed ids the rows were read for
	shop   jobStates       // read while the shop's fingerprint was fp.Shop
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
func (e *Engine) readRows(ctx context.Context, p *pass, l pendingList) ([]shopdb.Request, error) {
	q := e.openQuery(p.now, l)
	p.cachedAt = p.now
	if !p.dry && e.store.HasShopChanged() {
		fp, err := e.store.Fingerprint(ctx)
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
			return slices.Clone(c.rows), nil
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

// readStates returns the estimate states of jobs: those the last pass
// read when the shop did not change since, and the others read anew in one
// statement.
func (e *Engine) readStates(ctx context.Context, p *pass, jobs []string) (map[string]shopdb.JobState, map[string]error, error) {
	have := newJobStates()
	if p.fp != nil {
		e.mu.Lock()
		if c := e.cache; c != nil && c.fp.Shop == p.fp.Shop {
			have = jobStates{states: maps.Clone(c.shop.states), bad: maps.Clone(c.shop.bad), absent: maps.Clone(c.shop.absent)}
		}
		e.mu.Unlock()
	}
	var need []string
	for _, j := range jobs {
		_, ok := have.states[j]
		if !ok && have.bad[j] == nil && !have.absent[j] {
			need = append(need, j)
		}
	}
	fresh := len(have.states)+len(have.bad)+len(have.absent) == 0
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
// a pass that failed leaves nothing to use again.
func (e *Engine) keepCache(p *pass, rows []shopdb.Request, ids []string, err error) {
	if p.dry || p.fp == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		e.cache = nil
		return
	}
	listed := make(map[string]bool, len(ids))
	for _, id := range ids {
		listed[id] = true
	}
	shop := p.shop
	if shop.states == nil {
		shop = newJobStates()
		if c := e.cache; c != nil && c.fp.Shop == p.fp.Shop {
			shop = c.shop // no job needed a state this pass
		}
	}
	e.cache = &stateCache{fp: *p.fp, at: p.cachedAt, rows: rows, listed: listed, shop: shop}
}

// touched notes that quotesync's state changed: the next pass reads the
// rows anew.
func (e *Engine) touched() {
	e.mu.Lock()
	e.dirty = true
	e.mu.Unlock()
}
