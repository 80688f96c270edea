package sync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// cacheFormRows are rows that exercise every field of store.Request: every
// field set, zero times, times in other zones and with a monotonic
// reading, long and unicode strings, hex and almost-hex strings, nil and
// empty RequestJSON.
func cacheFormRows() []store.Request {
	berlin := time.FixedZone("CET", 3600)
	at := time.Date(2026, 11, 25, 6, 45, 12, 123456000, time.UTC)
	full := store.Request{
		RequestID: "req-1", ClaimNumber: "CLM-ÄÖÜ-€-日本", JobNumber: "RO-1001", Phase: "drafted",
		ResumePhase: "accepted", Reason: "estimate_state", Intent: "push", JobCreated: true,
		ReleasedJob: "RO-0999", PushedHash: strings.Repeat("0123456789abcdef", 4),
		PushedMarker: "DRAFT|2026-11-25 06:45:12.123456|30|2026-11-25 06:45:12.123456", SupplementNeeded: true,
		Attempts: 3, NextAttemptAt: at.Add(time.Minute), LastError: strings.Repeat("a long error, ünïcödé; ", 200),
		Expiry: at.Add(72 * time.Hour), BookingDate: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		RequestJSON: json.RawMessage(`{"id":"req-1","claim":"ÄÖÜ"}`), CreatedAt: at, UpdatedAt: at.Add(time.Second),
		PushedAt: at.Add(2 * time.Second), SubmittedAt: at.Add(3 * time.Second), Version: 1<<40 + 7,
	}
	rows := []store.Request{full}
	// The same, one field at a time left zero.
	for k := range rowTimes(&full) {
		r := full
		r.RequestID = fmt.Sprintf("req-zero-time-%d", k)
		*rowTimes(&r)[k] = time.Time{}
		rows = append(rows, r)
	}
	rows = append(rows,
		store.Request{}, // everything zero
		store.Request{RequestJSON: json.RawMessage{}},    // empty, not nil
		store.Request{RequestJSON: json.RawMessage("")},  // empty, not nil
		store.Request{RequestJSON: json.RawMessage(nil)}, // nil
		store.Request{RequestID: "1000", ClaimNumber: "GEN-0001000", JobNumber: "RO-1000", Phase: "drafted",
			PushedHash: strings.Repeat("f", 63), PushedMarker: "abc", Attempts: -2, Version: -1,
			CreatedAt: time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC), UpdatedAt: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
			Expiry: time.Unix(-1, 1).UTC(), PushedAt: time.Date(1969, 12, 31, 23, 59, 59, 500, time.UTC)},
		// Shares a prefix with the row before that ends in hex digits.
		store.Request{RequestID: "1001", ClaimNumber: "GEN-0001001", JobNumber: "RO-1001", Phase: "drafted",
			PushedHash: strings.Repeat("f", 62) + "e", PushedMarker: "abd", LastError: "ABCDEF", ReleasedJob: "0a",
			CreatedAt: time.Date(1000, 1, 1, 0, 0, 1, 0, time.UTC)},
		// Times in zones, with a clock reading.
		store.Request{RequestID: "zone", JobNumber: "RO-Z", CreatedAt: at.In(berlin), RequestJSON: json.RawMessage(`{}`)},
		store.Request{RequestID: "utc-zone", UpdatedAt: at.In(time.FixedZone("UTC", 0))},
		store.Request{RequestID: "monotonic", PushedAt: time.Now()},
		store.Request{RequestID: "zero-in-zone", SubmittedAt: time.Time{}.In(berlin)},
		store.Request{RequestID: "local", Expiry: at.Local()},
		store.Request{RequestID: "1002", ClaimNumber: "GEN-0001002", JobNumber: "RO-1002", Phase: "submitted",
			PushedHash: strings.Repeat("f", 64), PushedMarker: "abd|x", CreatedAt: time.Date(1000, 1, 1, 0, 0, 2, 0, time.UTC)},
	)
	return rows
}

// rowTimes are the times of r.
func rowTimes(r *store.Request) [7]*time.Time {
	return [7]*time.Time{&r.NextAttemptAt, &r.Expiry, &r.BookingDate, &r.CreatedAt, &r.UpdatedAt, &r.PushedAt, &r.SubmittedAt}
}

// cacheStore is a Shop with shop_changed and a Store whose fingerprint and reads are
// the test's; it counts the reads.
type cacheStore struct {
	fakeShop
	fakeStore
	fp         shopdb.Fingerprint
	rows       []store.Request
	states     map[string]shopdb.JobState
	bad        map[string]error
	reads      int      // OpenRequests calls
	stateReads []string // the jobs JobStates was asked for
}

func (s *cacheStore) HasShopChanged() bool { return true }
func (s *cacheStore) Fingerprint(context.Context, string) (shopdb.Fingerprint, error) {
	return s.fp, nil
}
func (s *cacheStore) OpenRequests(context.Context, store.OpenQuery) ([]store.Request, error) {
	s.reads++
	// A copy, as a read gives, RequestJSON and all.
	rows := slices.Clone(s.rows)
	for i := range rows {
		rows[i].RequestJSON = slices.Clone(rows[i].RequestJSON)
	}
	return rows, nil
}
func (s *cacheStore) JobStates(_ context.Context, jobs []string) (map[string]shopdb.JobState, map[string]error, error) {
	s.stateReads = append(s.stateReads, jobs...)
	states, bad := map[string]shopdb.JobState{}, map[string]error{}
	for _, j := range jobs {
		if st, ok := s.states[j]; ok {
			states[j] = st
		}
		if err := s.bad[j]; err != nil {
			bad[j] = err
		}
	}
	return states, bad, nil
}

// cachePass runs what a pass does with the cache, for the listed ids:
// read the rows, read the states of jobs, keep both. It returns the rows
// and the states the pass was given.
func cachePass(t testing.TB, e *Engine, listed []string, jobs []string) ([]store.Request, jobStates) {
	t.Helper()
	ctx := context.Background()
	p := &pass{e: e, keep: true, now: time.Now()}
	l := pendingList{skipped: map[string]bool{}}
	for _, id := range listed {
		l.skipped[id] = true
	}
	rows, err := e.readRows(ctx, p, l)
	if err != nil {
		t.Fatal(err)
	}
	var got jobStates
	if jobs != nil {
		got.states, got.bad, err = e.readStates(ctx, p, jobs)
		if err != nil {
			t.Fatal(err)
		}
	}
	e.keepCache(p, rows, l.ids(), nil)
	return rows, got
}

// TestCacheGivesBackWhatWasRead: a cache hit gives every row exactly as it
// was read (reflect.DeepEqual compares the times' zones and clock
// readings, and nil against empty RequestJSON), and what a pass does to
// the rows it is given is not seen by the next pass.
func TestCacheGivesBackWhatWasRead(t *testing.T) {
	st := &cacheStore{rows: cacheFormRows()}
	e, err := New(DefaultConfig(), fakeRemote{}, st, st, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	cachePass(t, e, nil, nil)
	for range 2 { // a hit twice gives the same
		got, _ := cachePass(t, e, nil, nil)
		if st.reads != 1 {
			t.Fatalf("%d reads of the rows, want 1 (the cache)", st.reads)
		}
		if len(got) != len(st.rows) {
			t.Fatalf("the cache gave %d rows, want %d", len(got), len(st.rows))
		}
		for i := range st.rows {
			if !reflect.DeepEqual(got[i], st.rows[i]) {
				t.Errorf("row %d (%s) given as\n%#v\nwant\n%#v", i, st.rows[i].RequestID, got[i], st.rows[i])
			}
			if (got[i].RequestJSON == nil) != (st.rows[i].RequestJSON == nil) {
				t.Errorf("row %d: RequestJSON nil %v, want %v", i, got[i].RequestJSON == nil, st.rows[i].RequestJSON == nil)
			}
		}
		// What the pass does to the rows it is given is not seen by the
		// next pass.
		for i := range got {
			got[i].Phase = "changed"
			got[i].RequestJSON = json.RawMessage("changed")
		}
	}
	// No rows are given back as none.
	none := &cacheStore{}
	e, err = New(DefaultConfig(), fakeRemote{}, none, none, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	cachePass(t, e, nil, nil)
	if got, _ := cachePass(t, e, nil, nil); got != nil || none.reads != 1 {
		t.Errorf("no rows given back as %d rows after %d reads, want none after 1", len(got), none.reads)
	}
}

// TestCacheGivesBackTheStatesRead: estimate states, valid, invalid and
// absent, come from the cache as they were read, whether their job is a
// row's or not; a pass that reads the states of new jobs leaves the
// cached ones as they are.
func TestCacheGivesBackTheStatesRead(t *testing.T) {
	rows := append(cacheFormRows(), store.Request{RequestID: "released", JobNumber: "RO-0999"})
	bad := &shopdb.StateError{Job: "RO-BAD", Column: "final", Reason: "is \"x\""}
	st := &cacheStore{rows: rows,
		states: map[string]shopdb.JobState{
			"RO-1001": {Job: "RO-1001", Final: true, Marker: rows[0].PushedMarker}, // the first row's marker
			"RO-1000": {Job: "RO-1000", Marker: "moved ÄÖÜ"},                       // a marker of its own
			"RO-1002": {Job: "RO-1002"},                                            // no marker
			"RO-Z":    {Job: "RO-Z", Marker: "zoned row"},
			"RO-NONE": {Job: "RO-NONE", Final: true, Marker: "no row"}, // no row has the job
			"ro-1001": {Job: "RO-1001", Marker: "x"},                   // Job is not the key
		},
		bad: map[string]error{"RO-BAD": bad},
	}
	e, err := New(DefaultConfig(), fakeRemote{}, st, st, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	// RO-0999 is a row's job with no state, like "", "RO-1000 " and
	// "RO-1002x", which no row has.
	jobs := []string{"RO-1001", "RO-1000", "RO-1002", "RO-Z", "RO-NONE", "ro-1001", "RO-BAD", "RO-0999", "", "RO-1000 ", "RO-1002x"}
	want := jobStates{states: maps.Clone(st.states), bad: maps.Clone(st.bad),
		absent: map[string]bool{"RO-0999": true, "": true, "RO-1000 ": true, "RO-1002x": true}}
	cachePass(t, e, nil, jobs)
	for range 2 {
		_, got := cachePass(t, e, nil, jobs)
		if len(st.stateReads) != len(jobs) {
			t.Fatalf("states read for %q, want them read once", st.stateReads)
		}
		if !reflect.DeepEqual(got.states, want.states) || !reflect.DeepEqual(got.bad, want.bad) {
			t.Errorf("states given as\n%#v\n%#v\nwant\n%#v\n%#v", got.states, got.bad, want.states, want.bad)
		}
		if !errors.Is(got.bad["RO-BAD"], bad) {
			t.Errorf("bad state given as %v, want the same error", got.bad["RO-BAD"])
		}
		if kept := e.cache.shop; !reflect.DeepEqual(kept, want) {
			t.Errorf("states kept as\n%#v\nwant\n%#v", kept, want)
		}
	}
	// A pass that needs a new job's state reads only that one, and keeps
	// it beside the others without changing the maps it was given.
	given := e.cache.shop
	st.states["RO-NEW"] = shopdb.JobState{Job: "RO-NEW", Marker: "new"}
	_, got := cachePass(t, e, nil, append(jobs, "RO-NEW"))
	if n := len(st.stateReads); n != len(jobs)+1 || st.stateReads[n-1] != "RO-NEW" {
		t.Fatalf("states read for %q, want RO-NEW alone after the first read", st.stateReads)
	}
	if got.states["RO-NEW"] != st.states["RO-NEW"] || e.cache.shop.states["RO-NEW"] != st.states["RO-NEW"] {
		t.Errorf("the new job's state given as %+v, kept as %+v", got.states["RO-NEW"], e.cache.shop.states["RO-NEW"])
	}
	if _, changed := given.states["RO-NEW"]; changed || !reflect.DeepEqual(given.absent, want.absent) {
		t.Errorf("the states kept before changed: %#v", given)
	}
}

// TestCacheCoversListedIDs: the rows read for a pending list serve a list
// of the same ids in any order, and a part of them; an id that was not
// listed is read anew.
func TestCacheCoversListedIDs(t *testing.T) {
	ids := []string{"1000", "new-1", "req-1", "new-2", "1002", "日本"}
	for _, tc := range []struct {
		ids  []string
		want bool
	}{
		{ids, true},
		{[]string{"日本", "1002", "new-2", "req-1", "new-1", "1000"}, true},
		{[]string{"req-1", "new-2"}, true},
		{nil, true},
		{append(ids[:len(ids):len(ids)], "1001"), false}, // a row, but not listed
		{[]string{"new-3"}, false},
		{[]string{"1000", "new-1", "req-1", "new-2", "1002", "日本x"}, false},
	} {
		st := &cacheStore{rows: cacheFormRows()}
		e, err := New(DefaultConfig(), fakeRemote{}, st, st, zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		cachePass(t, e, ids, nil)
		cachePass(t, e, tc.ids, nil)
		if got := st.reads == 1; got != tc.want {
			t.Errorf("listed %q after %q: the cache used %v, want %v", tc.ids, ids, got, tc.want)
		}
	}
}

// BenchmarkCacheHit10k is what a cache hit costs over 10,000 rows as the
// sample shop's idle jobs have them: the rows copied, the listed ids
// checked, the states looked up.
func BenchmarkCacheHit10k(b *testing.B) {
	rows, s := sampleRows(10000)
	st := &cacheStore{rows: rows, states: s.states}
	e, err := New(DefaultConfig(), fakeRemote{}, st, st, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]string, len(rows))
	jobs := make([]string, len(rows))
	for i := range rows {
		ids[i], jobs[i] = rows[i].RequestID, rows[i].JobNumber
	}
	cachePass(b, e, ids, jobs)
	b.ReportAllocs()
	for b.Loop() {
		cachePass(b, e, ids, jobs)
	}
	if st.reads != 1 {
		b.Fatalf("%d reads, want 1", st.reads)
	}
}

// sampleRows are n rows as the sample shop's idle jobs have them, with
// their estimate states.
func sampleRows(n int) ([]store.Request, jobStates) {
	at := time.Date(2026, 11, 25, 6, 45, 12, 0, time.UTC)
	rows := make([]store.Request, n)
	s := newJobStates()
	for i := range rows {
		ts := at.Add(time.Duration(i) * 1713 * time.Microsecond)
		marker := fmt.Sprintf("DRAFT|%s|30|%s", ts.Format("2006-01-02 15:04:05.000000"), ts.Format("2006-01-02 15:04:05.000000"))
		rows[i] = store.Request{RequestID: fmt.Sprint(1000 + i), ClaimNumber: fmt.Sprintf("GEN-%07d", 1000+i),
			JobNumber: fmt.Sprintf("RO-%d", 1000+i), Phase: "drafted", PushedHash: fmt.Sprintf("%064x", i*7919),
			PushedMarker: marker, Version: 3, Expiry: ts.Add(72 * time.Hour), CreatedAt: ts, UpdatedAt: ts.Add(time.Second),
			PushedAt: ts.Add(time.Second)}
		s.states[rows[i].JobNumber] = shopdb.JobState{Job: rows[i].JobNumber, Marker: marker}
	}
	return rows, s
}
