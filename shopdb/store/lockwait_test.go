package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

// TestLockWaitNamesHolder: a statement that waits for a lock the shop's
// application holds until shop.query_timeout runs out fails naming the
// setting and the holder's connection, instead of a bare "context
// deadline exceeded"; a statement that is only slow says so.
func TestLockWaitNamesHolder(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d := shopdbtest.NewSampleShop(t)
	cfg := d.Config()
	// shop.query_timeout ends the wait, not the server's lock wait: the
	// abandoned statement still waits on the server while the holder is
	// looked up, however loaded the machine.
	cfg.QueryTimeout, cfg.LockWait = time.Second, 30*time.Second
	db := openStore(t, d, cfg)

	// The shop's application: a transaction that locked the job counter
	// and was left open.
	shop, holder := shopdbtest.Hold(t, ctx, d.SQL.DB, "BEGIN", "UPDATE counters SET next_val = next_val WHERE name = 'job'")
	nr := shopdb.NewRequest{RequestID: "9001", ClaimNumber: "CLM-LOCKED", RequestJSON: []byte(`{"id":"9001"}`)}
	err := db.InTx(ctx, nr.RequestID, func(ctx context.Context, tx *store.Tx) error {
		jobs := db.shop.Jobs(tx.SQL(), nr)
		_, err := jobs.Create(ctx)
		return err
	})
	// The caller's own deadline, shorter than shop.query_timeout.
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	nr2 := nr
	nr2.RequestID = "9002"
	errShort := db.InTx(short, nr2.RequestID, func(ctx context.Context, tx *store.Tx) error {
		jobs := db.shop.Jobs(tx.SQL(), nr2)
		_, err := jobs.Create(ctx)
		return err
	})
	cancelShort()
	_, _ = shop.ExecContext(ctx, "ROLLBACK")
	if !errors.Is(errShort, context.DeadlineExceeded) || !strings.Contains(errShort.Error(), "the time given to this operation ran out") ||
		!strings.Contains(errShort.Error(), fmt.Sprintf("a lock held by connection %d", holder)) {
		t.Errorf("create_job behind a held lock, caller's deadline first: %v", errShort)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("create_job behind a held lock: %v, want the deadline", err)
	}
	for _, want := range []string{"shop.query_timeout (1s) ran out", fmt.Sprintf("a lock held by connection %d", holder),
		"no statement running (Sleep): a transaction left open", fmt.Sprintf("KILL %d", holder)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	// No lock: a statement slower than shop.query_timeout.
	slow := cfg
	slow.Queries.FindJob += " AND SLEEP(3) = 0"
	sdb := openStore(t, d, slow)
	nr.ClaimNumber = sampleshop.ClaimDraft // a job that exists: the SLEEP runs
	err = sdb.ReadTx(ctx, nr.RequestID, func(ctx context.Context, tx *store.Tx) error {
		jobs := sdb.shop.Jobs(tx.SQL(), nr)
		_, err := jobs.Find(ctx)
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no lock wait is to be seen") || !strings.Contains(err.Error(), "raise shop.query_timeout") {
		t.Errorf("a slow find_job: %v, want the deadline, no lock wait and the setting named", err)
	}
}

// TestServerLockWaitNamesHolder: with shop.lock_wait shorter than
// shop.query_timeout, every session of quotesync's carries it as the
// server's lock waits, and create_job behind the shop's open transaction
// fails after shop.lock_wait (not shop.query_timeout) as ErrLockWait,
// naming the setting and the holder's connection; nothing of it is kept.
func TestServerLockWaitNamesHolder(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d := shopdbtest.NewSampleShop(t)
	cfg := d.Config()
	cfg.QueryTimeout, cfg.LockWait = 20*time.Second, time.Second
	db := openStore(t, d, cfg)

	var rowWait, mdlWait int
	if err := db.shop.SQL().QueryRowContext(ctx, "SELECT @@SESSION.innodb_lock_wait_timeout, @@SESSION.lock_wait_timeout").Scan(&rowWait, &mdlWait); err != nil {
		t.Fatal(err)
	}
	if rowWait != 1 || mdlWait != 1 {
		t.Errorf("session lock waits %d s (rows) and %d s (metadata), want shop.lock_wait's 1 s for both", rowWait, mdlWait)
	}

	var before int64
	if err := d.SQL.QueryRowContext(ctx, "SELECT next_val FROM counters WHERE name = 'job'").Scan(&before); err != nil {
		t.Fatal(err)
	}
	shop, holder := shopdbtest.Hold(t, ctx, d.SQL.DB, "BEGIN", "SELECT next_val FROM counters WHERE name = 'job' FOR UPDATE")
	nr := shopdb.NewRequest{RequestID: "9101", ClaimNumber: "CLM-LOCKED-2", RequestJSON: []byte(`{"id":"9101"}`)}
	start := time.Now()
	err := db.InTx(ctx, nr.RequestID, func(ctx context.Context, tx *store.Tx) error {
		_, err := db.shop.Jobs(tx.SQL(), nr).Create(ctx)
		return err
	})
	waited := time.Since(start)
	_, _ = shop.ExecContext(ctx, "ROLLBACK")
	if !errors.Is(err, store.ErrLockWait) {
		t.Fatalf("create_job behind a held lock: %v, want ErrLockWait", err)
	}
	if waited > 5*time.Second {
		t.Errorf("create_job waited %s, want about shop.lock_wait (1s)", waited.Round(time.Millisecond))
	}
	for _, want := range []string{"shop.lock_wait (1s) ran out", fmt.Sprintf("connection %d (", holder),
		"a transaction left open", fmt.Sprintf("KILL %d", holder), "raise shop.lock_wait"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	var after, jobs int64
	if err := d.SQL.QueryRowContext(ctx, "SELECT next_val FROM counters WHERE name = 'job'").Scan(&after); err != nil {
		t.Fatal(err)
	}
	if err := d.SQL.QueryRowContext(ctx, "SELECT COUNT(*) FROM jobs WHERE claim_number = ?", nr.ClaimNumber).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if after != before || jobs != 0 {
		t.Errorf("after the lock wait: counter %d (was %d), %d jobs for the claim; want nothing kept", after, before, jobs)
	}
}

// TestLockHolderOfAnotherDatabase: a lock's holder whose session is in
// another database (another application on the same server, here one
// that locked the shop's counter by its qualified name) is named by its
// connection, but its statement, which may carry that application's data,
// is never read into quotesync's error, status or log.
func TestLockHolderOfAnotherDatabase(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d := shopdbtest.NewSampleShop(t)
	cfg := d.Config()
	cfg.QueryTimeout, cfg.LockWait = time.Second, 30*time.Second
	db := openStore(t, d, cfg)

	other, holder := shopdbtest.Hold(t, ctx, d.SQL.DB, "USE mysql", "BEGIN",
		"UPDATE `"+cfg.Database+"`.counters SET next_val = next_val WHERE name = 'job'")
	// The other application runs a statement while it holds the lock.
	running := make(chan error, 1)
	go func() {
		_, err := other.ExecContext(ctx, "SELECT SLEEP(4), 'other-app-secret'")
		running <- err
	}()
	// Wait until the server shows it running, so that the assertions
	// below are about a statement there was to show.
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		if err := d.SQL.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE 'SELECT SLEEP(4)%'", holder).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the other application's statement never showed as running")
		}
	}
	nr := shopdb.NewRequest{RequestID: "9201", ClaimNumber: "CLM-LOCKED-3", RequestJSON: []byte(`{"id":"9201"}`)}
	err := db.InTx(ctx, nr.RequestID, func(ctx context.Context, tx *store.Tx) error {
		_, err := db.shop.Jobs(tx.SQL(), nr).Create(ctx)
		return err
	})
	if rerr := <-running; rerr != nil {
		t.Fatal(rerr)
	}
	_, _ = other.ExecContext(ctx, "ROLLBACK")
	if err == nil {
		t.Fatal("create_job behind another application's lock: no error")
	}
	if strings.Contains(err.Error(), "other-app-secret") || strings.Contains(err.Error(), "SLEEP") {
		t.Errorf("error shows the statement of a session in another database: %v", err)
	}
	for _, want := range []string{fmt.Sprintf("connection %d (", holder), "a session outside the shop's database", fmt.Sprintf("KILL %d", holder)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// shop.query_timeout ended it, not the server's lock wait: a slow
	// statement beside a wait is not taken for a lock wait.
	if errors.Is(err, store.ErrLockWait) {
		t.Errorf("a statement ended by shop.query_timeout is ErrLockWait: %v", err)
	}
}
