package main

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRawGMSConcurrency pins what go-mysql-server's in-memory engine does
// with overlapping sessions when nothing serialises them (a negative lock
// wait): the reasons turnHandler exists. Each interleaving is driven step by
// step, so the outcome is deterministic. If one of these starts to behave
// like MySQL after an upgrade, update EMBEDDED-SERVER.md (and maybe drop
// turnHandler).
func TestRawGMSConcurrency(t *testing.T) {
	db, _ := mustShop(t, -1)
	ctx := context.Background()

	t.Run("UncommittedRowsInvisible", func(t *testing.T) {
		ta := mustBegin(t, db, nil)
		mustExec(t, ta, `INSERT INTO jobs (job_no, created_at) VALUES ('RO-U', NOW(6))`)
		if n := getInt(t, db, `SELECT COUNT(*) FROM jobs WHERE job_no = 'RO-U'`); n != 0 {
			t.Errorf("another session sees %d uncommitted rows, want 0", n)
		}
		if err := ta.Rollback(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("QuirkLostUpdateBetweenTransactions", func(t *testing.T) {
		mustExec(t, db, `INSERT INTO jobs (job_no, created_at) VALUES ('RO-CAS', NOW(6))`)
		const cas = `UPDATE jobs SET version = version + 1, notes = ? WHERE job_no = 'RO-CAS' AND version = 0`
		ta, tb := mustBegin(t, db, nil), mustBegin(t, db, nil)
		ra, rb := affected(t, ta, cas, "a"), affected(t, tb, cas, "b") // InnoDB: tb waits, then 0
		errA, errB := ta.Commit(), tb.Commit()
		if ra != 1 || rb != 1 || errA != nil || errB != nil {
			t.Errorf("both compare-and-sets: rows %d, %d; commits %v, %v; want 1, 1, nil, nil", ra, rb, errA, errB)
		}
	})

	t.Run("QuirkCounterHandsOutTwice", func(t *testing.T) {
		const bump = `UPDATE counters SET next_val = LAST_INSERT_ID(next_val + 1) WHERE name = 'job'`
		ta, tb := mustBegin(t, db, nil), mustBegin(t, db, nil)
		mustExec(t, ta, bump)
		mustExec(t, tb, bump)
		a, b := getInt(t, ta, `SELECT LAST_INSERT_ID()`), getInt(t, tb, `SELECT LAST_INSERT_ID()`)
		_, _ = ta.Commit(), tb.Commit()
		if a != b {
			t.Errorf("two overlapping bumps got %d and %d; GMS used to give the same number", a, b)
		}
	})

	t.Run("QuirkUniqueKeyNotEnforcedAcrossTransactions", func(t *testing.T) {
		const ins = `INSERT INTO jobs (job_no, created_at) VALUES ('RO-DUP', NOW(6))`
		ta, tb := mustBegin(t, db, nil), mustBegin(t, db, nil)
		mustExec(t, ta, ins)
		mustExec(t, tb, ins) // InnoDB: waits, then 1062 once ta commits
		if errA, errB := ta.Commit(), tb.Commit(); errA != nil || errB != nil {
			t.Errorf("commits: %v, %v; want both to succeed (GMS)", errA, errB)
		}
		if n := getInt(t, db, `SELECT COUNT(*) FROM jobs WHERE job_no = 'RO-DUP'`); n != 1 {
			t.Errorf("%d rows, want 1 (the second commit overwrote the first)", n)
		}
	})

	t.Run("QuirkCommitWipesOtherSessionsWrites", func(t *testing.T) {
		mustExec(t, db, `CREATE TABLE w (id INT PRIMARY KEY)`)
		ta := mustBegin(t, db, nil)
		_ = getInt(t, ta, `SELECT COUNT(*) FROM w`) // ta takes its copy of w
		mustExec(t, db, `INSERT INTO w VALUES (2)`)
		mustExec(t, ta, `INSERT INTO w VALUES (1)`)
		if err := ta.Commit(); err != nil {
			t.Fatal(err)
		}
		var ids []int
		if err := db.Select(&ids, `SELECT id FROM w ORDER BY id`); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]int{1}, ids); diff != "" {
			t.Errorf("rows of w (-GMS +got; MySQL has [1 2]):\n%s", diff)
		}
	})

	t.Run("QuirkStaleTransactionAfterFailedStatement", func(t *testing.T) {
		mustExec(t, db, `CREATE TABLE s (id INT PRIMARY KEY)`, `INSERT INTO s VALUES (1)`)
		a, b := mustConn(t, db), mustConn(t, db)
		if _, err := a.ExecContext(ctx, `INSERT INTO s VALUES (1)`); mysqlErr(t, err).Number != 1062 {
			t.Fatalf("want a duplicate-key error, got %v", err)
		}
		mustExec(t, b, `INSERT INTO s VALUES (2)`)
		mustExec(t, a, `INSERT INTO s VALUES (3)`) // commits a's stale copy of s
		var ids []int
		if err := db.Select(&ids, `SELECT id FROM s ORDER BY id`); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]int{1, 3}, ids); diff != "" {
			t.Errorf("rows of s (-GMS +got; MySQL has [1 2 3]):\n%s", diff)
		}
	})

	t.Run("QuirkReadCommittedIsSnapshot", func(t *testing.T) {
		ta := mustBegin(t, db, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		before := getInt(t, ta, `SELECT next_val FROM counters WHERE name = 'job'`)
		mustExec(t, db, `UPDATE counters SET next_val = next_val + 10 WHERE name = 'job'`)
		if after := getInt(t, ta, `SELECT next_val FROM counters WHERE name = 'job'`); after != before {
			t.Errorf("READ COMMITTED re-read %d after another commit, first read %d; GMS used to repeat the first read", after, before)
		}
	})

	t.Run("QuirkSelectForUpdateLocksNothing", func(t *testing.T) {
		ta := mustBegin(t, db, nil)
		_ = getInt(t, ta, `SELECT next_val FROM counters WHERE name = 'job' FOR UPDATE`)
		done := async(func() error {
			_, err := db.ExecContext(ctx, `UPDATE counters SET next_val = next_val + 1 WHERE name = 'job'`)
			return err
		})
		if blocked(done, 2*time.Second) {
			t.Error("UPDATE waited for the FOR UPDATE lock; GMS used not to lock")
		}
	})
}

// TestTurnHandlerFixesStaleTransaction is QuirkStaleTransactionAfterFailedStatement
// on the default server: the failed statement's transaction is rolled back.
func TestTurnHandlerFixesStaleTransaction(t *testing.T) {
	db, _ := mustShop(t, 0)
	mustExec(t, db, `CREATE TABLE s (id INT PRIMARY KEY)`, `INSERT INTO s VALUES (1)`)
	a, b := mustConn(t, db), mustConn(t, db)
	if _, err := a.ExecContext(context.Background(), `INSERT INTO s VALUES (1), (4)`); mysqlErr(t, err).Number != 1062 {
		t.Fatalf("want a duplicate-key error, got %v", err)
	}
	mustExec(t, b, `INSERT INTO s VALUES (2)`)
	mustExec(t, a, `INSERT INTO s VALUES (3)`)
	var ids []int
	if err := db.Select(&ids, `SELECT id FROM s ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 2, 3}, ids); diff != "" {
		t.Errorf("rows of s (-want +got):\n%s", diff)
	}

	t.Run("AutocommitOff", func(t *testing.T) {
		c := mustConn(t, db)
		mustExec(t, c, `SET autocommit = 0`, `INSERT INTO s VALUES (10)`)
		done := async(func() error { _, err := db.Exec(`INSERT INTO s VALUES (11)`); return err })
		if !blocked(done, 200*time.Millisecond) {
			t.Fatal("another session did not wait for the autocommit=0 transaction")
		}
		mustExec(t, c, `COMMIT`, `SET autocommit = 1`)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n := getInt(t, db, `SELECT COUNT(*) FROM s WHERE id IN (10, 11)`); n != 2 {
			t.Errorf("%d rows, want 2", n)
		}
	})
}
