package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

// TestReadTxWritesNothing: in a read-only transaction the job queries
// read, create_job fails, nothing is written, and a database without
// quotesync's tables reads as no row (a dry run before the first start).
func TestReadTxWritesNothing(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	db := unmigrated(t, d.Config())
	ctx := testContext(t)
	before, jobs := counter(t, d), count(t, d, "SELECT COUNT(*) FROM jobs")
	err := db.ReadTx(ctx, newRequest("501", sampleshop.ClaimFinal).RequestID, func(ctx context.Context, tx *store.Tx) error {
		jobs := db.shop.Jobs(tx.SQL(), newRequest("501", sampleshop.ClaimFinal))
		if _, err := tx.Request(ctx); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Request without state tables = %v, want ErrNotFound", err)
		}
		if job, err := jobs.Find(ctx); err != nil || job != sampleshop.JobFinal {
			t.Errorf("FindJob = %q, %v; want %s", job, err, sampleshop.JobFinal)
		}
		if !jobs.CanCreate() {
			t.Error("CanCreate = false with create_job configured")
		}
		if job, err := jobs.Create(ctx); err == nil {
			t.Errorf("CreateJob in a read-only transaction made %q", job)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := counter(t, d); got != before {
		t.Errorf("counter = %d, want %d", got, before)
	}
	if got := count(t, d, "SELECT COUNT(*) FROM jobs"); got != jobs {
		t.Errorf("jobs = %d, want %d", got, jobs)
	}
}

// TestTxRollsBackOnError: an error from the function undoes create_job.
func TestTxRollsBackOnError(t *testing.T) {
	db, d := newStore(t)
	ctx := testContext(t)
	before := counter(t, d)
	boom := errors.New("boom")
	err := db.InTx(ctx, newRequest("1", "CLM-ROLLBACK").RequestID, func(ctx context.Context, tx *store.Tx) error {
		jobs := db.shop.Jobs(tx.SQL(), newRequest("1", "CLM-ROLLBACK"))
		if _, err := jobs.Create(ctx); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx = %v, want boom", err)
	}
	if got := counter(t, d); got != before {
		t.Errorf("counter = %d after a rolled-back create_job, want %d", got, before)
	}
}

// TestFindJobMoreThanOneRowIsAnError: find_job must find one job at most.
func TestFindJobMoreThanOneRowIsAnError(t *testing.T) {
	db, d := newStore(t)
	ctx := testContext(t)
	if _, err := d.Shop().CreateJob(ctx, sampleshop.ClaimDraft, ""); err != nil {
		t.Fatal(err)
	}
	_, err := reserve(ctx, db, newRequest("601", sampleshop.ClaimDraft))
	if err == nil || !strings.Contains(err.Error(), "at most one") || !strings.Contains(err.Error(), "find_job") {
		t.Fatalf("reserve = %v, want find_job returned 2 rows", err)
	}
	if _, err := db.Request(ctx, "601"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Request(601) = %v, want ErrNotFound", err)
	}
}

// TestTxBadInput: a request whose JSON does not decode cannot run the job
// queries (they need its parameters), but its row can still be recorded;
// rows whose keys do not fit the state table are refused before the
// database; a second row for a request is ErrExists.
func TestTxBadInput(t *testing.T) {
	db, _ := newStore(t)
	ctx := testContext(t)
	bad := shopdb.NewRequest{RequestID: "1", RequestJSON: []byte("{not json")}
	err := db.InTx(ctx, bad.RequestID, func(ctx context.Context, tx *store.Tx) error {
		jobs := db.shop.Jobs(tx.SQL(), bad)
		if _, err := jobs.Find(ctx); err == nil {
			t.Error("FindJob ran with the parameters of undecodable JSON")
		}
		_, err := tx.Insert(ctx, store.Request{RequestID: "1", Phase: phWaiting, LastError: "its JSON does not decode"}, store.Event{Kind: "waiting"})
		return err
	})
	if err != nil {
		t.Fatalf("recording a request with undecodable JSON: %v", err)
	}
	for _, r := range []store.Request{
		{},
		{RequestID: strings.Repeat("9", 65)},
		{RequestID: "2", ClaimNumber: strings.Repeat("C", 129)},
		{RequestID: "3", JobNumber: strings.Repeat("J", 65)},
	} {
		if _, err := db.Insert(ctx, r, store.Event{}); err == nil {
			t.Errorf("Insert(%.20q…) succeeded, want an error", r.RequestID)
		}
	}
	if _, err := db.Insert(ctx, store.Request{RequestID: "1", Phase: phWaiting}, store.Event{}); !errors.Is(err, store.ErrExists) {
		t.Errorf("a second Insert of request 1 = %v, want ErrExists", err)
	}
}
