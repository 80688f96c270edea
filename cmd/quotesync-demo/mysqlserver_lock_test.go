package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strconv"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
)

// lockHolder returns IS_USED_LOCK(name) seen from db: the holder's
// connection id, or invalid when the lock is free.
func lockHolder(tb testing.TB, db sqlx.QueryerContext, name string) sql.NullInt64 {
	tb.Helper()
	var v sql.NullInt64
	if err := sqlx.GetContext(context.Background(), db, &v, `SELECT IS_USED_LOCK(?)`, name); err != nil {
		tb.Fatalf("IS_USED_LOCK: %v", err)
	}
	return v
}

// waitLockFree polls until name is free or a second passes.
func waitLockFree(tb testing.TB, db sqlx.QueryerContext, name string) bool {
	tb.Helper()
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !lockHolder(tb, db, name).Valid {
			return true
		}
	}
	return false
}

func TestMySQLUserLocks(t *testing.T) {
	db, dsn := mustShop(t, 0)
	ctx := context.Background()

	t.Run("GetLockHeartbeatRelease", func(t *testing.T) {
		a, b := mustConn(t, db), mustConn(t, db)
		if got := getInt(t, a, `SELECT GET_LOCK(?, 0)`, "qs"); got != 1 {
			t.Fatalf("GET_LOCK on a free lock = %d, want 1", got)
		}
		if got := getInt(t, a, `SELECT IS_USED_LOCK(?) = CONNECTION_ID()`, "qs"); got != 1 {
			t.Errorf("heartbeat IS_USED_LOCK = CONNECTION_ID() = %d, want 1", got)
		}
		if got := getInt(t, b, `SELECT GET_LOCK(?, 0)`, "qs"); got != 0 {
			t.Errorf("GET_LOCK by another session = %d, want 0", got)
		}
		if got := getInt(t, b, `SELECT IS_USED_LOCK(?) = CONNECTION_ID()`, "qs"); got != 0 {
			t.Errorf("other session's heartbeat = %d, want 0", got)
		}
		// Re-entrant and counted, as in MariaDB.
		if got := getInt(t, a, `SELECT GET_LOCK(?, 0) + RELEASE_LOCK(?)`, "qs", "qs"); got != 2 {
			t.Errorf("second GET_LOCK + RELEASE_LOCK = %d, want 2", got)
		}
		if !lockHolder(t, b, "qs").Valid {
			t.Error("lock free after releasing one of two acquisitions")
		}
		if got := getInt(t, b, `SELECT RELEASE_LOCK(?)`, "qs"); got != 0 {
			t.Errorf("RELEASE_LOCK by a non-holder = %d, want 0", got)
		}
		if got := getInt(t, a, `SELECT RELEASE_LOCK(?)`, "qs"); got != 1 {
			t.Errorf("last RELEASE_LOCK = %d, want 1", got)
		}
		if lockHolder(t, b, "qs").Valid {
			t.Error("lock still held after the last release")
		}
		// QuirkReleaseFreedLock: MySQL answers NULL for a lock nobody holds;
		// GMS answers 0 once the name has been used (NULL for a new name).
		var v sql.NullInt64
		if err := a.GetContext(ctx, &v, `SELECT RELEASE_LOCK(?)`, "qs"); err != nil || !v.Valid || v.Int64 != 0 {
			t.Errorf("RELEASE_LOCK of a free lock = %v (%v); GMS used to answer 0", v, err)
		}
	})

	t.Run("LockIgnoresTransactions", func(t *testing.T) {
		c := mustConn(t, db)
		mustExec(t, c, `START TRANSACTION`)
		if got := getInt(t, c, `SELECT GET_LOCK('tx', 0)`); got != 1 {
			t.Fatalf("GET_LOCK = %d", got)
		}
		mustExec(t, c, `ROLLBACK`)
		if !lockHolder(t, db, "tx").Valid {
			t.Error("ROLLBACK released the lock")
		}
		// QuirkNoDoStatement: GMS does not parse DO; use SELECT.
		if _, err := c.ExecContext(ctx, `DO RELEASE_LOCK('tx')`); err == nil {
			t.Error("DO RELEASE_LOCK worked; GMS used to refuse DO (syntax error), update EMBEDDED-SERVER.md")
		}
		if got := getInt(t, c, `SELECT RELEASE_LOCK('tx')`); got != 1 {
			t.Errorf("RELEASE_LOCK = %d, want 1", got)
		}
	})

	t.Run("LockKeptWhenConnGoesBackToPool", func(t *testing.T) {
		c, err := db.Connx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := getInt(t, c, `SELECT GET_LOCK('pool', 0)`); got != 1 {
			t.Fatalf("GET_LOCK = %d", got)
		}
		_ = c.Close()
		if !lockHolder(t, db, "pool").Valid {
			t.Error("lock dropped by (*sql.Conn).Close; MariaDB keeps it on the pooled session")
		}
	})

	t.Run("LockDroppedWithBadConn", func(t *testing.T) {
		c, err := db.Connx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := getInt(t, c, `SELECT GET_LOCK('bad', 0)`); got != 1 {
			t.Fatalf("GET_LOCK = %d", got)
		}
		_ = c.Raw(func(any) error { return driver.ErrBadConn })
		_ = c.Close()
		if !waitLockFree(t, db, "bad") {
			t.Error("lock still held after discarding the connection")
		}
	})

	t.Run("WaitTimeout", func(t *testing.T) {
		c := mustConn(t, db)
		mustExec(t, c, `SET SESSION wait_timeout = 30`)
		if got := getInt(t, c, `SELECT @@session.wait_timeout`); got != 30 {
			t.Errorf("@@session.wait_timeout = %d, want 30", got)
		}
		// QuirkWaitTimeoutIgnored: MariaDB closes a session idle longer than
		// wait_timeout (and so frees its locks); GMS accepts it and never does.
		mustExec(t, c, `SET SESSION wait_timeout = 1`)
		time.Sleep(1500 * time.Millisecond)
		if err := c.PingContext(ctx); err != nil {
			t.Errorf("session closed after idling past wait_timeout (%v); GMS used to ignore it", err)
		}
	})

	t.Run("KillConnection", func(t *testing.T) {
		interp := mustOpen(t, withParams(t, dsn, func(c *mysql.Config) { c.InterpolateParams = true }))
		for _, k := range []struct {
			name string
			kill func(id int64) error
		}{
			{"Literal", func(id int64) error { _, err := db.Exec(`KILL CONNECTION ` + strconv.FormatInt(id, 10)); return err }},
			{"Interpolated", func(id int64) error { _, err := interp.Exec(`KILL CONNECTION ?`, id); return err }},
		} {
			t.Run(k.name, func(t *testing.T) {
				victim := mustConn(t, db)
				id := getInt(t, victim, `SELECT CONNECTION_ID()`)
				if got := getInt(t, victim, `SELECT GET_LOCK('k', 0)`); got != 1 {
					t.Fatalf("GET_LOCK = %d", got)
				}
				if err := k.kill(id); err != nil {
					t.Fatalf("KILL CONNECTION %d: %v", id, err)
				}
				if err := victim.PingContext(ctx); err == nil {
					t.Error("killed session still answers")
				}
				if !waitLockFree(t, db, "k") {
					t.Error("killed session's lock still held")
				}
			})
		}
		// QuirkKillNotPreparable: as a server-side prepared statement GMS
		// fails to parse KILL with a placeholder.
		_, err := db.Exec(`KILL CONNECTION ?`, 999999)
		if me := mysqlErr(t, err); me.Number != 1105 {
			t.Errorf("prepared KILL: error %d %q; GMS used to fail with 1105 (syntax error)", me.Number, me.Message)
		}
	})
}
