package main

import (
	"context"
	"database/sql"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
)

// mustConn pins one connection of db for the test.
func mustConn(tb testing.TB, db *sqlx.DB) *sqlx.Conn {
	tb.Helper()
	c, err := db.Connx(context.Background())
	if err != nil {
		tb.Fatalf("conn: %v", err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// mustBegin starts a transaction on db with opts.
func mustBegin(tb testing.TB, db *sqlx.DB, opts *sql.TxOptions) *sqlx.Tx {
	tb.Helper()
	tx, err := db.BeginTxx(context.Background(), opts)
	if err != nil {
		tb.Fatalf("begin: %v", err)
	}
	tb.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

// getInt runs a one-value query.
func getInt(tb testing.TB, q sqlx.QueryerContext, query string, args ...any) int64 {
	tb.Helper()
	var v int64
	if err := sqlx.GetContext(context.Background(), q, &v, query, args...); err != nil {
		tb.Fatalf("%.60q: %v", query, err)
	}
	return v
}

// getString runs a one-value query.
func getString(tb testing.TB, q sqlx.QueryerContext, query string, args ...any) string {
	tb.Helper()
	var v string
	if err := sqlx.GetContext(context.Background(), q, &v, query, args...); err != nil {
		tb.Fatalf("%.60q: %v", query, err)
	}
	return v
}

// async runs f in a goroutine and returns a channel with its result.
func async(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

// blocked reports whether ch stays silent for d.
func blocked(ch <-chan error, d time.Duration) bool {
	select {
	case <-ch:
		return false
	case <-time.After(d):
		return true
	}
}

func TestMySQLTransactions(t *testing.T) {
	db, dsn := mustShop(t, 0)

	t.Run("RollbackLeavesNothing", func(t *testing.T) {
		tx := mustBegin(t, db, nil)
		mustExec(t, tx, `INSERT INTO jobs (job_no, created_at) VALUES ('RO-T', NOW(6))`,
			`UPDATE counters SET next_val = 1 WHERE name = 'job'`,
			`INSERT INTO estimate_lines (job_id, op_code, qty) VALUES (1, 'LAB', 1)`)
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		if n := getInt(t, db, `SELECT (SELECT COUNT(*) FROM jobs) + (SELECT COUNT(*) FROM estimate_lines)`); n != 0 {
			t.Errorf("rows after rollback: %d, want 0", n)
		}
		if v := getInt(t, db, `SELECT next_val FROM counters WHERE name = 'job'`); v != 50000 {
			t.Errorf("counter after rollback: %d, want 50000", v)
		}
		// QuirkAutoIncrementReused: InnoDB never hands out a rolled-back id
		// again (this insert would get 2); GMS does.
		res, err := db.Exec(`INSERT INTO jobs (job_no, created_at) VALUES ('RO-U', NOW(6))`)
		if err != nil {
			t.Fatal(err)
		}
		if id, _ := res.LastInsertId(); id != 1 {
			t.Errorf("id after rolled-back insert: %d; GMS used to reuse 1, update EMBEDDED-SERVER.md", id)
		}
	})

	t.Run("SessionIsolationLevel", func(t *testing.T) {
		c := mustConn(t, db)
		mustExec(t, c, `SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED`)
		got := getString(t, c, `SELECT CONCAT(@@session.transaction_isolation, ' ', @@session.tx_isolation)`)
		// QuirkAliasesApart: in MySQL tx_isolation is an alias of
		// transaction_isolation; in GMS they are two variables.
		if want := "READ-COMMITTED REPEATABLE-READ"; got != want {
			t.Errorf("transaction_isolation, tx_isolation = %q, want %q", got, want)
		}
	})

	t.Run("TxOptionsReadCommitted", func(t *testing.T) {
		tx := mustBegin(t, db, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		if got := getString(t, tx, `SELECT @@transaction_isolation`); got != "READ-COMMITTED" {
			t.Errorf("isolation inside the transaction: %q, want READ-COMMITTED", got)
		}
		mustExec(t, tx, `UPDATE counters SET next_val = next_val + 1`)
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("DSNIsolationParams", func(t *testing.T) {
		for _, p := range []struct{ param, query string }{
			{"tx_isolation", `SELECT @@session.tx_isolation`},
			// MariaDB 10.11 refuses this one (Error 1193); GMS takes both.
			{"transaction_isolation", `SELECT @@session.transaction_isolation`},
		} {
			d := mustOpen(t, withParams(t, dsn, func(c *mysql.Config) {
				c.Params = map[string]string{p.param: "'READ-COMMITTED'"}
				c.InterpolateParams = true
			}))
			if got := getString(t, d, p.query); got != "READ-COMMITTED" {
				t.Errorf("%s in the DSN: %s = %q, want READ-COMMITTED", p.param, p.query, got)
			}
		}
	})

	t.Run("ConcurrentCompareAndSet", func(t *testing.T) {
		mustExec(t, db, `INSERT INTO jobs (job_no, created_at) VALUES ('RO-CAS', NOW(6))`)
		const cas = `UPDATE jobs SET version = version + 1, notes = ? WHERE job_no = 'RO-CAS' AND version = 0`
		ta := mustBegin(t, db, nil)
		if n := affected(t, ta, cas, "a"); n != 1 {
			t.Fatalf("first CAS: %d rows, want 1", n)
		}
		var rb int64
		done := async(func() error {
			tb, err := db.Begin()
			if err != nil {
				return err
			}
			defer tb.Rollback()
			res, err := tb.Exec(cas, "b")
			if err != nil {
				return err
			}
			rb, _ = res.RowsAffected()
			return tb.Commit()
		})
		if !blocked(done, 200*time.Millisecond) {
			t.Fatal("second transaction did not wait for the first")
		}
		if err := ta.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if rb != 0 || getString(t, db, `SELECT notes FROM jobs WHERE job_no = 'RO-CAS'`) != "a" {
			t.Errorf("second CAS changed %d rows, want 0 and notes 'a'", rb)
		}
	})

	t.Run("ConcurrentCounter", func(t *testing.T) {
		const workers = 20
		start := getInt(t, db, `SELECT next_val FROM counters WHERE name = 'job'`)
		var mu sync.Mutex
		seen := map[int64]bool{}
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				tx, err := db.Beginx()
				if err != nil {
					t.Error(err)
					return
				}
				defer tx.Rollback()
				if _, err := tx.Exec(`UPDATE counters SET next_val = LAST_INSERT_ID(next_val + 1) WHERE name = 'job'`); err != nil {
					t.Error(err)
					return
				}
				var v int64
				if err := tx.Get(&v, `SELECT LAST_INSERT_ID()`); err != nil {
					t.Error(err)
					return
				}
				if err := tx.Commit(); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[v] = true
				mu.Unlock()
			})
		}
		wg.Wait()
		end := getInt(t, db, `SELECT next_val FROM counters WHERE name = 'job'`)
		if len(seen) != workers || end != start+workers {
			t.Errorf("%d distinct numbers, counter %d → %d; want %d distinct and +%d", len(seen), start, end, workers, workers)
		}
	})

	t.Run("ConcurrentUniqueInsert", func(t *testing.T) {
		const ins = `INSERT INTO jobs (job_no, created_at) VALUES ('RO-DUP', NOW(6))`
		ta := mustBegin(t, db, nil)
		mustExec(t, ta, ins)
		done := async(func() error { _, err := db.Exec(ins); return err })
		if !blocked(done, 200*time.Millisecond) {
			t.Fatal("second insert did not wait for the first transaction")
		}
		if err := ta.Commit(); err != nil {
			t.Fatal(err)
		}
		if got := mysqlErr(t, <-done).Number; got != 1062 {
			t.Errorf("second insert: error %d, want 1062", got)
		}
	})

	t.Run("SelectForUpdateBlocksWriters", func(t *testing.T) {
		ta := mustBegin(t, db, nil)
		v := getInt(t, ta, `SELECT next_val FROM counters WHERE name = 'job' FOR UPDATE`)
		done := async(func() error {
			_, err := db.Exec(`UPDATE counters SET next_val = next_val + 1 WHERE name = 'job'`)
			return err
		})
		if !blocked(done, 200*time.Millisecond) {
			t.Fatal("UPDATE of a row locked FOR UPDATE did not wait")
		}
		mustExec(t, ta, `UPDATE counters SET next_val = next_val + 100 WHERE name = 'job'`)
		if err := ta.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := getInt(t, db, `SELECT next_val FROM counters WHERE name = 'job'`); got != v+101 {
			t.Errorf("counter %d, want %d (no lost update)", got, v+101)
		}
	})

	t.Run("ReadersWaitToo", func(t *testing.T) {
		// Unlike InnoDB's consistent reads, a plain SELECT on another session
		// waits for an open transaction (the price of serialising GMS).
		ta := mustBegin(t, db, nil)
		mustExec(t, ta, `INSERT INTO jobs (job_no, created_at) VALUES ('RO-R', NOW(6))`)
		var n int64
		done := async(func() error { return db.Get(&n, `SELECT COUNT(*) FROM jobs WHERE job_no = 'RO-R'`) })
		if !blocked(done, 200*time.Millisecond) {
			t.Fatal("reader did not wait")
		}
		if err := ta.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil || n != 1 {
			t.Errorf("reader after commit: %d (%v), want 1", n, err)
		}
	})
}

func TestMySQLLockWaitTimeout(t *testing.T) {
	db, _ := mustShop(t, 300*time.Millisecond)
	ta := mustBegin(t, db, nil)
	mustExec(t, ta, `UPDATE counters SET next_val = 1`)
	start := time.Now()
	_, err := db.Exec(`UPDATE counters SET next_val = 2`)
	if got := mysqlErr(t, err).Number; got != 1205 {
		t.Errorf("error %d, want 1205 (lock wait timeout)", got)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 5*time.Second {
		t.Errorf("waited %v, want about 300ms", d)
	}

	// KILL skips the queue and frees the victim's turn.
	id := getInt(t, ta, `SELECT CONNECTION_ID()`)
	if _, err := db.Exec(`KILL CONNECTION ` + strconv.FormatInt(id, 10)); err != nil {
		t.Fatalf("kill the transaction's connection: %v", err)
	}
	if got := affected(t, db, `UPDATE counters SET next_val = 3`); got != 1 {
		t.Errorf("update after the kill: %d rows, want 1", got)
	}
	if got := getInt(t, db, `SELECT next_val FROM counters`); got != 3 {
		t.Errorf("counter %d, want 3 (the killed transaction rolled back)", got)
	}
}
