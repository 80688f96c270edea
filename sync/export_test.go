package sync

import (
	"context"
	"fmt"
	"reflect"
)

// CacheDiff says how the rows and estimate states the engine keeps for
// its next pass differ from what reading them now with the same query
// gives ("" when they do not). Only what the next pass would use is
// compared: the rows when quotesync's state did not change since, the
// states when the shop did not; used says which.
func (e *Engine) CacheDiff(ctx context.Context) (diff string, used []string, err error) {
	e.mu.Lock()
	c, dirty := e.cache, e.dirty
	e.mu.Unlock()
	if c == nil {
		return "", nil, nil
	}
	fp, err := e.shop.Fingerprint(ctx, e.store.StateFingerprint())
	if err != nil {
		return "", nil, err
	}
	if dirty || fp.State != c.fp.State {
		return "", nil, nil
	}
	used = append(used, "rows")
	rows := c.rows
	l := pendingList{skipped: map[string]bool{}}
	for _, id := range c.listed {
		l.skipped[id] = true
	}
	read, err := e.store.OpenRequests(ctx, e.openQuery(c.at, l))
	if err != nil {
		return "", nil, err
	}
	if len(read) != len(rows) {
		return fmt.Sprintf("%d rows kept, %d read", len(rows), len(read)), used, nil
	}
	for i := range rows {
		if !reflect.DeepEqual(rows[i], read[i]) {
			return fmt.Sprintf("row %d kept as\n%#v\nread as\n%#v", i, rows[i], read[i]), used, nil
		}
	}
	if fp.Shop != c.fp.Shop {
		return "", used, nil
	}
	used = append(used, "states")
	kept := c.shop
	_, jobs := pushCandidates(rows)
	states, bad, err := e.shop.JobStates(ctx, jobs)
	if err != nil {
		return "", nil, err
	}
	for _, j := range jobs {
		st, ok := states[j]
		kst, kok := kept.states[j]
		switch {
		case ok != kok || st != kst:
			return fmt.Sprintf("job %s: state kept %+v (%v), read %+v (%v)", j, kst, kok, st, ok), used, nil
		case fmt.Sprint(bad[j]) != fmt.Sprint(kept.bad[j]):
			return fmt.Sprintf("job %s: bad kept %v, read %v", j, kept.bad[j], bad[j]), used, nil
		case kept.absent[j] != (!ok && bad[j] == nil):
			return fmt.Sprintf("job %s: absent kept %v, read %v", j, kept.absent[j], !ok && bad[j] == nil), used, nil
		}
	}
	return "", used, nil
}

// StatesAhead returns how many passes started reading estimate states
// as they started, how many used them, and how many jobs those read
// after, new since the pass before.
func (e *Engine) StatesAhead() (started, used, after int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.aheadStarted, e.aheadPasses, e.aheadAfter
}
