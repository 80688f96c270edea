package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

// TestReserveConcurrent reserves the same requests from many goroutines on
// two separate pools (two daemons) at once, with the storage half of a
// reservation (find_job or create_job and the row, in one transaction):
// every request gets exactly one row and one job, no job number serves two
// requests, and no job is left half-created (the counter moves exactly once
// per request: the loser of a race rolls its create_job back).
func TestReserveConcurrent(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	pools := []testDB{openStore(t, d, d.Config()), openStore(t, d, d.Config())}
	ctx := testContext(t)
	beforeCounter, beforeJobs := counter(t, d), count(t, d, "SELECT COUNT(*) FROM jobs")

	const requests, perRequest = 12, 4
	type result struct {
		id  string
		r   store.Request
		err error
	}
	results := make(chan result, requests*perRequest+8)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < requests; i++ {
		id := fmt.Sprintf("c%02d", i)
		for k := 0; k < perRequest; k++ {
			wg.Add(1)
			go func(db testDB) {
				defer wg.Done()
				<-start
				r, err := reserveOrRead(ctx, db, newRequest(id, "CLM-C-"+id))
				results <- result{id, r, err}
			}(pools[k%2])
		}
	}
	// Several requests for one existing job: only one may have it.
	for k := 0; k < 8; k++ {
		wg.Add(1)
		go func(db testDB, id string) {
			defer wg.Done()
			<-start
			r, err := reserveOrRead(ctx, db, newRequest(id, sampleshop.ClaimNoLines))
			results <- result{id, r, err}
		}(pools[k%2], fmt.Sprintf("u%d", k))
	}
	close(start)
	wg.Wait()
	close(results)

	jobOf := map[string]string{}
	requestOf := map[string]string{}
	inUse, owners := 0, 0
	for res := range results {
		if res.id[0] == 'u' {
			switch {
			case res.err == nil:
				owners++
			case errors.Is(res.err, store.ErrJobInUse):
				inUse++
			default:
				t.Errorf("Reserve(%s): %v, want success or ErrJobInUse", res.id, res.err)
			}
			continue
		}
		if res.err != nil {
			t.Errorf("Reserve(%s): %v", res.id, res.err)
			continue
		}
		if prev, ok := jobOf[res.id]; ok && prev != res.r.JobNumber {
			t.Errorf("request %s got jobs %s and %s", res.id, prev, res.r.JobNumber)
		}
		jobOf[res.id] = res.r.JobNumber
		if other, ok := requestOf[res.r.JobNumber]; ok && other != res.id {
			t.Errorf("job %s given to requests %s and %s", res.r.JobNumber, other, res.id)
		}
		requestOf[res.r.JobNumber] = res.id
	}
	if owners != 1 || inUse != 7 {
		t.Errorf("requests for one job: %d succeeded, %d ErrJobInUse; want 1 and 7", owners, inUse)
	}
	if got, want := len(jobOf), requests; got != want {
		t.Errorf("requests with a job = %d, want %d", got, want)
	}
	if got, want := counter(t, d), beforeCounter+requests; got != want {
		t.Errorf("counter = %d, want %d (one bump per request, none leaked)", got, want)
	}
	if got, want := count(t, d, "SELECT COUNT(*) FROM jobs"), beforeJobs+requests; got != want {
		t.Errorf("jobs = %d, want %d", got, want)
	}
	if got, want := count(t, d, "SELECT COUNT(*) FROM quotesync_requests"), requests+1; got != want {
		t.Errorf("state rows = %d, want %d", got, want)
	}
	if got := count(t, d, "SELECT COUNT(*) FROM jobs j LEFT JOIN estimates e ON e.job_id = j.job_id WHERE e.estimate_id IS NULL"); got != 0 {
		t.Errorf("jobs without an estimate = %d, want 0 (half-created jobs)", got)
	}
	if got := count(t, d, "SELECT COUNT(*) FROM quotesync_requests r LEFT JOIN jobs j ON j.job_no = r.job_number WHERE j.job_id IS NULL"); got != 0 {
		t.Errorf("state rows pointing at no shop job = %d, want 0", got)
	}
}

// reserveOrRead is reserve, and the row another writer recorded first
// when the two raced (ErrExists: the loser's transaction rolled back).
func reserveOrRead(ctx context.Context, db testDB, nr shopdb.NewRequest) (store.Request, error) {
	r, err := reserve(ctx, db, nr)
	if errors.Is(err, store.ErrExists) {
		return db.Request(ctx, nr.RequestID)
	}
	return r, err
}

// waitForQuery returns the session id running a statement that starts
// with prefix in database name.
func waitForQuery(t *testing.T, d *shopdbtest.Database, prefix string) int64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var id int64
		err := d.SQL.Get(&id, "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ? AND INFO LIKE ?", d.Name, prefix+"%")
		if err == nil {
			return id
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no session ran %q within 10s", prefix)
	return 0
}

// TestReserveKilledInCreateJob kills the connection while create_job is
// half done (job inserted, number not yet returned): nothing remains.
func TestReserveKilledInCreateJob(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	cfg := d.Config()
	steps := cfg.Queries.CreateJob
	cfg.Queries.CreateJob = append(append(append([]string{}, steps[:3]...), "DO SLEEP(20)"), steps[3])
	db := openStore(t, d, cfg)
	ctx := testContext(t)
	before := d.Snapshot(t)

	done := make(chan error, 1)
	go func() {
		_, err := reserve(ctx, db, newRequest("701", "CLM-KILL"))
		done <- err
	}()
	kill(t, d, waitForQuery(t, d, "DO SLEEP"))
	if err := <-done; err == nil {
		t.Fatal("Reserve succeeded on a killed connection")
	}
	if got := d.Snapshot(t); got != before {
		t.Fatalf("after the kill (counter, jobs, estimates, rows, events) = %v, want %v", got, before)
	}
	// The next attempt gets the very next number: no gap.
	plain := openStore(t, d, d.Config())
	r := mustReserve(t, plain, newRequest("701", "CLM-KILL"))
	if want := fmt.Sprintf("RO-%d", before[0]+1); r.JobNumber != want {
		t.Errorf("job after retry = %s, want %s", r.JobNumber, want)
	}
}

// TestReserveKilledBeforeCommit kills the connection after every statement
// of Reserve ran, just before COMMIT: nothing remains.
func TestReserveKilledBeforeCommit(t *testing.T) {
	db, d := newStore(t)
	ctx := testContext(t)
	before := d.Snapshot(t)
	killed := false
	store.SetBeforeCommit(db.Store, func(ctx context.Context, tx *sqlx.Tx) error {
		var id int64
		if err := tx.GetContext(ctx, &id, "SELECT CONNECTION_ID()"); err != nil {
			return err
		}
		if n := count(t, d, "SELECT COUNT(*) FROM jobs WHERE claim_number = 'CLM-KILL2'"); n != 0 {
			t.Errorf("the uncommitted job is visible to another session (%d rows)", n)
		}
		kill(t, d, id)
		killed = true
		return nil
	})
	if _, err := reserve(ctx, db, newRequest("702", "CLM-KILL2")); err == nil {
		t.Fatal("Reserve succeeded on a killed connection")
	}
	if !killed {
		t.Fatal("the hook did not run")
	}
	if got := d.Snapshot(t); got != before {
		t.Fatalf("after the kill (counter, jobs, estimates, rows, events) = %v, want %v", got, before)
	}
	store.SetBeforeCommit(db.Store, nil)
	if r := mustReserve(t, db, newRequest("702", "CLM-KILL2")); r.JobNumber != fmt.Sprintf("RO-%d", before[0]+1) {
		t.Errorf("job after retry = %s, want RO-%d", r.JobNumber, before[0]+1)
	}
}
