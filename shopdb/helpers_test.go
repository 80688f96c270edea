package shopdb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

func testContext(tb testing.TB) context.Context {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// newRequest is a remote request for claim as Reserve gets it.
func newRequest(id, claim string) shopdb.NewRequest {
	raw, _ := json.Marshal(map[string]any{
		"id": id, "claim_number": claim, "expiry": "2031-01-02T03:04:05Z",
		"vehicle": map[string]any{"registration": "REG" + id, "make": "Toyota"},
	})
	return shopdb.NewRequest{
		RequestID: id, ClaimNumber: claim,
		Expiry:      time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC),
		RequestJSON: raw,
	}
}

// count runs a COUNT(*)-style query on the test database.
func count(tb testing.TB, d *shopdbtest.Database, query string, args ...any) int {
	tb.Helper()
	var n int
	if err := d.SQL.Get(&n, query, args...); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return n
}

// counter is the sample shop's job counter.
func counter(tb testing.TB, d *shopdbtest.Database) int {
	tb.Helper()
	return count(tb, d, "SELECT next_val FROM counters WHERE name = 'job'")
}

// trips returns a function giving the round trips since trips was called.
func trips(db *shopdb.DB) func() int64 {
	start := db.RoundTrips()
	return func() int64 { return db.RoundTrips() - start }
}

// advance moves r to phase through Update, failing the test on error.
func advance(tb testing.TB, db *shopdb.DB, r shopdb.Request, phase shopdb.Phase, edit func(*shopdb.Request)) shopdb.Request {
	tb.Helper()
	next := r
	next.Phase = phase
	if edit != nil {
		edit(&next)
	}
	got, err := db.Update(testContext(tb), r, next, shopdb.Event{Kind: shopdb.EventPhase})
	if err != nil {
		tb.Fatalf("advance %s to %s: %v", r.RequestID, phase, err)
	}
	return got
}

func mustReserve(tb testing.TB, db *shopdb.DB, nr shopdb.NewRequest) shopdb.Request {
	tb.Helper()
	r, err := db.Reserve(testContext(tb), nr)
	if err != nil {
		tb.Fatalf("reserve %s: %v", nr.RequestID, err)
	}
	return r
}

func ids(rs []shopdb.Request) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%s:%s", r.RequestID, r.Phase)
	}
	return out
}
