package sync

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb"
)

// cacheFormRows are rows that exercise every field of shopdb.Request in
// the compact form: every field set, zero times, times in other zones and
// with a monotonic reading, long and unicode strings, hex and almost-hex
// strings, nil and empty RequestJSON.
func cacheFormRows() []shopdb.Request {
	berlin := time.FixedZone("CET", 3600)
	at := time.Date(2026, 11, 25, 6, 45, 12, 123456000, time.UTC)
	full := shopdb.Request{
		RequestID: "req-1", ClaimNumber: "CLM-ÄÖÜ-€-日本", JobNumber: "RO-1001", Phase: "drafted",
		ResumePhase: "accepted", Reason: "estimate_state", Intent: "push", JobCreated: true,
		ReleasedJob: "RO-0999", PushedHash: strings.Repeat("0123456789abcdef", 4),
		PushedMarker: "DRAFT|2026-11-25 06:45:12.123456|30|2026-11-25 06:45:12.123456", SupplementNeeded: true,
		Attempts: 3, NextAttemptAt: at.Add(time.Minute), LastError: strings.Repeat("a long error, ünïcödé; ", 200),
		Expiry: at.Add(72 * time.Hour), BookingDate: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		RequestJSON: json.RawMessage(`{"id":"req-1","claim":"ÄÖÜ"}`), CreatedAt: at, UpdatedAt: at.Add(time.Second),
		PushedAt: at.Add(2 * time.Second), SubmittedAt: at.Add(3 * time.Second), Version: 1<<40 + 7,
	}
	rows := []shopdb.Request{full}
	// The same, one field at a time left zero.
	for k := range rowTimeFields(&full) {
		r := full
		r.RequestID = fmt.Sprintf("req-zero-time-%d", k)
		*rowTimeFields(&r)[k] = time.Time{}
		rows = append(rows, r)
	}
	rows = append(rows,
		shopdb.Request{}, // everything zero
		shopdb.Request{RequestJSON: json.RawMessage{}},    // empty, not nil
		shopdb.Request{RequestJSON: json.RawMessage("")},  // empty, not nil
		shopdb.Request{RequestJSON: json.RawMessage(nil)}, // nil
		shopdb.Request{RequestID: "1000", ClaimNumber: "GEN-0001000", JobNumber: "RO-1000", Phase: "drafted",
			PushedHash: strings.Repeat("f", 63), PushedMarker: "abc", Attempts: -2, Version: -1,
			CreatedAt: time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC), UpdatedAt: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
			Expiry: time.Unix(-1, 1).UTC(), PushedAt: time.Date(1969, 12, 31, 23, 59, 59, 500, time.UTC)},
		// Shares a prefix with the row before that ends in hex digits.
		shopdb.Request{RequestID: "1001", ClaimNumber: "GEN-0001001", JobNumber: "RO-1001", Phase: "drafted",
			PushedHash: strings.Repeat("f", 62) + "e", PushedMarker: "abd", LastError: "ABCDEF", ReleasedJob: "0a",
			CreatedAt: time.Date(1000, 1, 1, 0, 0, 1, 0, time.UTC)},
		// Times the form cannot hold as they are: kept whole.
		shopdb.Request{RequestID: "zone", JobNumber: "RO-Z", CreatedAt: at.In(berlin), RequestJSON: json.RawMessage(`{}`)},
		shopdb.Request{RequestID: "utc-zone", UpdatedAt: at.In(time.FixedZone("UTC", 0))},
		shopdb.Request{RequestID: "monotonic", PushedAt: time.Now()},
		shopdb.Request{RequestID: "zero-in-zone", SubmittedAt: time.Time{}.In(berlin)},
		shopdb.Request{RequestID: "local", Expiry: at.Local()},
		// After the kept ones, prefixes are shared with the packed row
		// before them.
		shopdb.Request{RequestID: "1002", ClaimNumber: "GEN-0001002", JobNumber: "RO-1002", Phase: "submitted",
			PushedHash: strings.Repeat("f", 64), PushedMarker: "abd|x", CreatedAt: time.Date(1000, 1, 1, 0, 0, 2, 0, time.UTC)},
	)
	return rows
}

// TestPackRowsRoundTrip: every row unpacks to exactly what was packed
// (reflect.DeepEqual compares the times' zones and clock readings, and
// nil against empty RequestJSON).
func TestPackRowsRoundTrip(t *testing.T) {
	rows := cacheFormRows()
	pr := packRows(rows)
	for range 2 { // unpacking twice gives the same
		got := pr.unpack()
		if len(got) != len(rows) {
			t.Fatalf("unpacked %d rows, want %d", len(got), len(rows))
		}
		for i := range rows {
			if !reflect.DeepEqual(got[i], rows[i]) {
				t.Errorf("row %d (%s) unpacked as\n%#v\nwant\n%#v", i, rows[i].RequestID, got[i], rows[i])
			}
			if (got[i].RequestJSON == nil) != (rows[i].RequestJSON == nil) {
				t.Errorf("row %d: RequestJSON nil %v, want %v", i, got[i].RequestJSON == nil, rows[i].RequestJSON == nil)
			}
		}
		// What the engine does to the rows it is given is not seen by the
		// next pass.
		for i := range got {
			for k := range got[i].RequestJSON {
				got[i].RequestJSON[k] = 'X'
			}
			got[i].Phase = "changed"
		}
	}
	if len(pr.odd) != 5 {
		t.Errorf("%d rows kept whole, want the 5 with zoned or monotonic times", len(pr.odd))
	}
	if pr := packRows(nil); pr.unpack() != nil {
		t.Error("no rows unpack as some")
	}
}

// TestPackRowsRandom packs rows of random fields.
func TestPackRowsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"", "0", "9", "a", "f", "g", "A", "-", "|", "é", "日", " "}
	str := func() string {
		var b strings.Builder
		for range rng.IntN(70) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	tm := func() time.Time {
		switch rng.IntN(4) {
		case 0:
			return time.Time{}
		case 1:
			return time.Unix(rng.Int64N(1<<36)-1<<35, rng.Int64N(1e9)).UTC()
		default:
			return time.Unix(1_790_000_000+rng.Int64N(1000), rng.Int64N(1e6)*1000).UTC()
		}
	}
	rows := make([]shopdb.Request, 3000)
	for i := range rows {
		r := &rows[i]
		for _, s := range rowStringFields(r) {
			*s = str()
		}
		r.Phase, r.ResumePhase = shopdb.Phase(str()), shopdb.Phase(alphabet[rng.IntN(3)])
		r.Reason, r.Intent = shopdb.Reason(str()), shopdb.Intent(str())
		r.JobCreated, r.SupplementNeeded = rng.IntN(2) == 0, rng.IntN(2) == 0
		r.Attempts, r.Version = rng.IntN(1<<20)-1<<19, rng.Int64()-1<<62
		for _, t := range rowTimeFields(r) {
			*t = tm()
		}
		if rng.IntN(3) > 0 {
			r.RequestJSON = json.RawMessage(str())
		}
	}
	got := packRows(rows).unpack()
	for i := range rows {
		if !reflect.DeepEqual(got[i], rows[i]) {
			t.Fatalf("row %d unpacked as\n%#v\nwant\n%#v", i, got[i], rows[i])
		}
	}
}

// TestPackStatesRoundTrip: estimate states, valid, invalid and absent,
// unpack to exactly what was packed, whether their job is a row's or not.
func TestPackStatesRoundTrip(t *testing.T) {
	rows := cacheFormRows()
	pr := packRows(rows)
	bad := &shopdb.StateError{Job: "RO-BAD", Column: "final", Reason: "is \"x\""}
	s := jobStates{
		states: map[string]shopdb.JobState{
			"RO-1001": {Job: "RO-1001", Final: true, Marker: rows[0].PushedMarker}, // the first row's marker
			"RO-1000": {Job: "RO-1000", Marker: "moved ÄÖÜ"},                       // a marker of its own
			"RO-1002": {Job: "RO-1002"},                                            // no marker
			"RO-Z":    {Job: "RO-Z", Marker: "kept-whole row"},                     // the row is kept whole
			"RO-NONE": {Job: "RO-NONE", Final: true, Marker: "no row"},             // no row has the job
			"ro-1001": {Job: "RO-1001", Marker: "x"},                               // Job is not the key
		},
		bad:    map[string]error{"RO-BAD": bad},
		absent: map[string]bool{"RO-1002x": true, "RO-1000 ": true, "": true},
	}
	// A job in absent that a row has.
	s.absent["RO-0999"] = true
	rows = append(rows, shopdb.Request{RequestID: "released", JobNumber: "RO-0999"})
	pr = packRows(rows)
	ps := packStates(s, pr, rows)
	got := ps.unpack(pr.unpack())
	if !reflect.DeepEqual(got, s) {
		t.Errorf("states unpacked as\n%#v\nwant\n%#v", got, s)
	}
	if !errors.Is(got.bad["RO-BAD"], bad) {
		t.Errorf("bad state unpacked as %v, want the same error", got.bad["RO-BAD"])
	}
	// The maps are new: changing them leaves the packed ones as they were.
	got.states["RO-1001"] = shopdb.JobState{}
	delete(got.absent, "RO-0999")
	delete(got.bad, "RO-BAD")
	if again := ps.unpack(pr.unpack()); !reflect.DeepEqual(again, s) {
		t.Errorf("states unpacked again as\n%#v\nwant\n%#v", again, s)
	}
	empty := packStates(newJobStates(), pr, rows).unpack(nil)
	if !reflect.DeepEqual(empty, newJobStates()) {
		t.Errorf("no states unpacked as %#v", empty)
	}
}

// TestPackedIDsCovers: the listed ids are covered in any order, and an id
// that was not listed is not.
func TestPackedIDsCovers(t *testing.T) {
	rows := cacheFormRows()
	ids := []string{"1000", "new-1", "req-1", "new-2", "1002", "日本"}
	pi := packIDs(ids, rows)
	unpacked := packRows(rows).unpack()
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
		if got := pi.covers(unpacked, tc.ids); got != tc.want {
			t.Errorf("covers(%q) = %v, want %v", tc.ids, got, tc.want)
		}
	}
}

// sampleRows are n rows as the sample shop's idle jobs have them, with
// their estimate states.
func sampleRows(n int) ([]shopdb.Request, jobStates) {
	at := time.Date(2026, 11, 25, 6, 45, 12, 0, time.UTC)
	rows := make([]shopdb.Request, n)
	s := newJobStates()
	for i := range rows {
		ts := at.Add(time.Duration(i) * 1713 * time.Microsecond)
		marker := fmt.Sprintf("DRAFT|%s|30|%s", ts.Format("2006-01-02 15:04:05.000000"), ts.Format("2006-01-02 15:04:05.000000"))
		rows[i] = shopdb.Request{RequestID: fmt.Sprint(1000 + i), ClaimNumber: fmt.Sprintf("GEN-%07d", 1000+i),
			JobNumber: fmt.Sprintf("RO-%d", 1000+i), Phase: "drafted", PushedHash: fmt.Sprintf("%064x", i*7919),
			PushedMarker: marker, Version: 3, Expiry: ts.Add(72 * time.Hour), CreatedAt: ts, UpdatedAt: ts.Add(time.Second),
			PushedAt: ts.Add(time.Second)}
		s.states[rows[i].JobNumber] = shopdb.JobState{Job: rows[i].JobNumber, Marker: marker}
	}
	return rows, s
}

// TestPackRowsSize: ten thousand rows as the sample shop's idle jobs have
// them fit in 128 bytes a row (as read: about 900), and their states
// with markers as pushed in 4 bytes a job.
func TestPackRowsSize(t *testing.T) {
	rows, s := sampleRows(10000)
	pr := packRows(rows)
	if perRow := pr.size() / len(rows); perRow > 128 {
		t.Errorf("packed rows take %d bytes a row, want at most 128", perRow)
	}
	ps := packStates(s, pr, rows)
	if perJob := len(ps.data) / len(rows); perJob > 4 {
		t.Errorf("packed states take %d bytes a job, want at most 4", perJob)
	}
	t.Logf("%d rows: %d bytes packed, states %d bytes", len(rows), pr.size(), len(ps.data))
}

// BenchmarkCacheHit10k is what a cache hit costs over 10,000 rows as the
// sample shop's idle jobs have them: the rows and states unpacked, the
// listed ids checked.
func BenchmarkCacheHit10k(b *testing.B) {
	rows, s := sampleRows(10000)
	pr := packRows(rows)
	ps := packStates(s, pr, rows)
	ids := make([]string, len(rows))
	for i := range rows {
		ids[i] = rows[i].RequestID
	}
	pi := packIDs(ids, rows)
	b.ReportAllocs()
	for b.Loop() {
		got := pr.unpack()
		if !pi.covers(got, ids) {
			b.Fatal("not covered")
		}
		ps.unpack(got)
	}
}
