package shopdb_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

// Phases and event kinds as the reconciler writes them: shopdb stores them
// as given and knows none of them.
const (
	phWaiting   shopdb.Phase = "waiting"
	phReserved  shopdb.Phase = "reserved"
	phAccepted  shopdb.Phase = "accepted"
	phDrafted   shopdb.Phase = "drafted"
	phSubmitted shopdb.Phase = "submitted"
	phRejected  shopdb.Phase = "rejected"
	phGone      shopdb.Phase = "gone"

	kindPhase   = "reserved"
	kindCall    = "retrying"
	kindWarning = "held"
)

// reserve records nr as reserved on the job find_job finds or create_job
// makes, with its booking date, in one transaction: the storage half of the
// reconciler's reservation (its decisions are tested in package sync). A
// request that has a row gets it back unchanged.
func reserve(ctx context.Context, db *shopdb.DB, nr shopdb.NewRequest) (shopdb.Request, error) {
	var r shopdb.Request
	err := db.InTx(ctx, nr, func(ctx context.Context, tx *shopdb.Tx) error {
		cur, err := tx.Request(ctx)
		if err == nil {
			r = cur
			return nil
		}
		if !errors.Is(err, shopdb.ErrNotFound) {
			return err
		}
		job, err := tx.FindJob(ctx)
		created := false
		if err == nil && job == "" && tx.CanCreateJob() {
			job, err = tx.CreateJob(ctx)
			created = true
		}
		if err != nil {
			return err
		}
		if job == "" {
			return errNoJob
		}
		booking, err := tx.BookingDate(ctx, job)
		if err != nil {
			return err
		}
		r, err = tx.Insert(ctx, shopdb.Request{RequestID: nr.RequestID, ClaimNumber: nr.ClaimNumber, JobNumber: job,
			Phase: phReserved, Intent: "accept", JobCreated: created, Expiry: nr.Expiry, BookingDate: booking,
			RequestJSON: nr.RequestJSON}, shopdb.Event{Kind: kindPhase, Message: "job " + job})
		return err
	})
	return r, err
}

// errNoJob: reserve found no job and create_job is not configured.
var errNoJob = errors.New("no job for the claim")

// advance moves r to phase through Update, failing the test on error.
func advance(tb testing.TB, db *shopdb.DB, r shopdb.Request, phase shopdb.Phase, edit func(*shopdb.Request)) shopdb.Request {
	tb.Helper()
	next := r
	next.Phase = phase
	if edit != nil {
		edit(&next)
	}
	got, err := db.Update(testContext(tb), r, next, shopdb.Event{Kind: "phase"})
	if err != nil {
		tb.Fatalf("advance %s to %s: %v", r.RequestID, phase, err)
	}
	return got
}

func mustReserve(tb testing.TB, db *shopdb.DB, nr shopdb.NewRequest) shopdb.Request {
	tb.Helper()
	r, err := reserve(testContext(tb), db, nr)
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

// checkStored fails unless r is the row stored for r.RequestID.
func checkStored(tb testing.TB, db *shopdb.DB, r shopdb.Request) {
	tb.Helper()
	stored, err := db.Request(testContext(tb), r.RequestID)
	if err != nil {
		tb.Fatal(err)
	}
	if diff := cmp.Diff(stored, r); diff != "" {
		tb.Fatalf("returned row differs from the stored row (-stored +returned):\n%s", diff)
	}
}
