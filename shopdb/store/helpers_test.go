package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

// testDB is quotesync's store on a test database, and the shop's mapping
// on the same pool (the reservation runs the mapping's job statements in
// the store's transaction).
type testDB struct {
	*store.Store
	shop *shopdb.DB
}

// WriteBack runs the write-back statement of d's kind with p in the
// transaction that marks d done, as the deliverer does (package sync).
func (db testDB) WriteBack(ctx context.Context, d store.Delivery, p shopdb.WriteBackParams) error {
	return db.Deliver(ctx, d.ID, func(ctx context.Context, tx *sqlx.Tx) error {
		return db.shop.WriteBack(ctx, tx, d.Kind, p)
	})
}

// newStore is a sample shop with quotesync's tables migrated, and the
// store on it.
func newStore(tb testing.TB) (testDB, *shopdbtest.Database) {
	tb.Helper()
	d := shopdbtest.NewSampleShop(tb)
	return openStore(tb, d, d.Config()), d
}

// openStore opens cfg on d, migrates quotesync's tables and returns the
// store on it (closed in tb.Cleanup).
func openStore(tb testing.TB, d *shopdbtest.Database, cfg shopdb.Config) testDB {
	tb.Helper()
	db := d.Open(tb, cfg)
	return testDB{Store: store.New(db), shop: db}
}

// unmigrated opens cfg on d without migrating quotesync's tables.
func unmigrated(tb testing.TB, cfg shopdb.Config) testDB {
	tb.Helper()
	db, err := shopdb.Open(testContext(tb), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return testDB{Store: store.New(db), shop: db}
}

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
func trips(db testDB) func() int64 {
	start := shopdbtest.RoundTrips(db.shop)
	return func() int64 { return shopdbtest.RoundTrips(db.shop) - start }
}

// Phases and event kinds as the reconciler writes them: the store keeps
// them as given and knows none of them.
const (
	phWaiting   store.Phase = "waiting"
	phReserved  store.Phase = "reserved"
	phAccepted  store.Phase = "accepted"
	phDrafted   store.Phase = "drafted"
	phSubmitted store.Phase = "submitted"
	phRejected  store.Phase = "rejected"
	phGone      store.Phase = "gone"

	kindPhase   = "reserved"
	kindCall    = "retrying"
	kindWarning = "held"
)

// reserve records nr as reserved on the job find_job finds or create_job
// makes, with its booking date, in one transaction: the storage half of the
// reconciler's reservation (its decisions are tested in package sync). A
// request that has a row gets it back unchanged.
func reserve(ctx context.Context, db testDB, nr shopdb.NewRequest) (store.Request, error) {
	var r store.Request
	err := db.InTx(ctx, nr.RequestID, func(ctx context.Context, tx *store.Tx) error {
		jobs := db.shop.Jobs(tx.SQL(), nr)
		cur, err := tx.Request(ctx)
		if err == nil {
			r = cur
			return nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		job, err := jobs.Find(ctx)
		created := false
		if err == nil && job == "" && jobs.CanCreate() {
			job, err = jobs.Create(ctx)
			created = true
		}
		if err != nil {
			return err
		}
		if job == "" {
			return errNoJob
		}
		booking, err := jobs.BookingDate(ctx, job)
		if err != nil {
			return err
		}
		r, err = tx.Insert(ctx, store.Request{RequestID: nr.RequestID, ClaimNumber: nr.ClaimNumber, JobNumber: job,
			Phase: phReserved, Intent: "accept", JobCreated: created, Expiry: nr.Expiry, BookingDate: booking,
			RequestJSON: nr.RequestJSON}, store.Event{Kind: kindPhase, Message: "job " + job})
		return err
	})
	return r, err
}

// adopt gives the rows written with no insurer to the insurer name, as
// the executor (package sync) does: each moved with an event.
func adopt(tb testing.TB, db testDB, name string) store.Adopted {
	tb.Helper()
	ctx := testContext(tb)
	rows, kept, err := db.Adoptable(ctx, name)
	if err != nil {
		tb.Fatal(err)
	}
	evs := make([]store.Event, len(rows))
	for i := range evs {
		evs[i] = store.Event{Kind: "adopted"}
	}
	_, a, err := db.Move(ctx, rows, name, evs, &store.Rekey{})
	if err != nil {
		tb.Fatalf("adopt the rows written before insurers: %v", err)
	}
	a.Kept = kept
	return a
}

// errNoJob: reserve found no job and create_job is not configured.
var errNoJob = errors.New("no job for the claim")

// advance moves r to phase through Update, failing the test on error.
func advance(tb testing.TB, db testDB, r store.Request, phase store.Phase, edit func(*store.Request)) store.Request {
	tb.Helper()
	next := r
	next.Phase = phase
	if edit != nil {
		edit(&next)
	}
	got, err := db.Update(testContext(tb), r, next, store.Event{Kind: "phase"})
	if err != nil {
		tb.Fatalf("advance %s to %s: %v", r.RequestID, phase, err)
	}
	return got
}

func mustReserve(tb testing.TB, db testDB, nr shopdb.NewRequest) store.Request {
	tb.Helper()
	r, err := reserve(testContext(tb), db, nr)
	if err != nil {
		tb.Fatalf("reserve %s: %v", nr.RequestID, err)
	}
	return r
}

func ids(rs []store.Request) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%s:%s", r.RequestID, r.Phase)
	}
	return out
}

// checkStored fails unless r is the row stored for r.RequestID.
func checkStored(tb testing.TB, db testDB, r store.Request) {
	tb.Helper()
	stored, err := db.Request(testContext(tb), r.RequestID)
	if err != nil {
		tb.Fatal(err)
	}
	if diff := cmp.Diff(stored, r); diff != "" {
		tb.Fatalf("returned row differs from the stored row (-stored +returned):\n%s", diff)
	}
}

// kill ends a server session (KILL CONNECTION) from the test's own pool, as
// a crashed client or a network partition would.
func kill(tb testing.TB, d *shopdbtest.Database, connectionID int64) {
	tb.Helper()
	if _, err := d.SQL.Exec(fmt.Sprintf("KILL CONNECTION %d", connectionID)); err != nil {
		tb.Fatalf("kill connection %d: %v", connectionID, err)
	}
}
