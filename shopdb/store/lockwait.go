package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// lockHolderTimeout bounds the look for a lock's holder.
const lockHolderTimeout = 5 * time.Second

// explainWait adds to err, when a statement ran out of time
// (shop.query_timeout, which ctx carried below parent) or out of the
// server's lock wait (shop.lock_wait), what held it up: the session
// holding the lock the statement waited for, as the server's
// information_schema tells (best effort: it needs the PROCESS privilege),
// and what to do. "context deadline exceeded" alone names neither the
// setting nor the holder. An error of a lock wait is ErrLockWait.
func (st *Store) explainWait(parent context.Context, err error) error {
	if err == nil {
		return nil
	}
	serverTimeout := mysqlErrno(err) == errLockWaitTimeout
	// A deadline ran out: shop.query_timeout's (the parent still had time)
	// or the caller's own (a state write's bound, the pass's).
	ours := errors.Is(err, context.DeadlineExceeded) &&
		(parent.Err() == nil || errors.Is(parent.Err(), context.DeadlineExceeded))
	if !serverTimeout && !ours {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), lockHolderTimeout)
	defer cancel()
	var holders []lockHolder
	var herr error
	if ours {
		// The abandoned statement still waits on the server (the driver
		// only closed its connection), so the wait links it to the holder.
		holders, herr = st.blockers(ctx)
	} else {
		// The server gave up and the wait is gone: name the open
		// transactions that hold locks instead, the shop database's first.
		holders, herr = st.lockingTransactions(ctx)
	}
	what, raise := fmt.Sprintf("shop.query_timeout (%s) ran out", st.cfg.QueryTimeout), "shop.query_timeout"
	switch {
	case serverTimeout && st.cfg.LockWait > 0:
		what, raise = fmt.Sprintf("shop.lock_wait (%s) ran out", st.cfg.LockWait), "shop.lock_wait"
	case serverTimeout:
		what, raise = "the server's innodb_lock_wait_timeout (or lock_wait_timeout) ran out", "shop.lock_wait"
	case parent.Err() != nil:
		what = "the time given to this operation ran out"
	}
	switch {
	case herr != nil && serverTimeout:
		return lockWait{fmt.Errorf("%w: %s while the statement waited for a lock; %s for a transaction left open",
			err, what, st.unreadable(herr))}
	case herr != nil:
		return fmt.Errorf("%w: %s; if a lock held the statement up, %s; raise shop.query_timeout if the statement is only slow",
			err, what, st.unreadable(herr))
	case len(holders) == 0 && ours:
		return fmt.Errorf("%w: %s before the database answered, and no lock wait is to be seen: a slow statement or a busy server; make the statement faster or raise shop.query_timeout", err, what)
	case len(holders) == 0:
		return lockWait{fmt.Errorf("%w: %s while the statement waited for a lock; the transaction that held it has ended: it goes through at the next attempt", err, what)}
	}
	descr := make([]string, len(holders))
	for i, h := range holders {
		descr[i] = h.String()
	}
	held := "a lock held by " + strings.Join(descr, "; ")
	if !ours {
		held = "a lock; open transactions holding locks, oldest first: " + strings.Join(descr, "; ")
	}
	err = fmt.Errorf("%w: %s while the statement waited for %s: end that transaction (commit it, or KILL %d if it is stuck), or raise %s if it is only long",
		err, what, held, holders[0].ID, raise)
	if !serverTimeout {
		// shop.query_timeout ended it: the statement may have been only
		// slow beside another session's wait, so it is not taken for a
		// lock wait (no shop_lock hold); it fails as any slow statement.
		return err
	}
	return lockWait{err}
}

// unreadable says why a lock's holder is not named: the server keeps no
// information_schema.INNODB_LOCK_WAITS (MySQL 8 moved lock waits to
// performance_schema), or the user may not read other sessions.
func (st *Store) unreadable(herr error) string {
	if mysqlErrno(herr) == errUnknownTable {
		return fmt.Sprintf("this server does not show lock waits in information_schema (%v): look at SHOW PROCESSLIST", herr)
	}
	return fmt.Sprintf("its holder could not be read (%v): GRANT PROCESS ON *.* TO '%s'@… to have it named here, or look at SHOW PROCESSLIST", herr, st.cfg.User)
}

// lockWait is an error of a statement that waited for a lock another
// session held: errors.Is(err, ErrLockWait).
type lockWait struct{ error }

func (lockWait) Is(target error) bool { return target == ErrLockWait }
func (e lockWait) Unwrap() error      { return e.error }

// lockHolder is a server session whose transaction holds locks.
type lockHolder struct {
	ID      int64  // the connection id (KILL id)
	User    string // user@host
	Command string // what the session does now: Sleep, Query, …
	Open    int64  // seconds since its transaction started
	// Query is the statement it runs, "" when idle; NULL (not Valid) for a
	// session outside the shop's database, whose statement is not shown.
	Query sql.NullString
}

func (h lockHolder) String() string {
	s := fmt.Sprintf("connection %d (%s, transaction open %ds, ", h.ID, h.User, h.Open)
	if !h.Query.Valid {
		return s + "a session outside the shop's database)"
	}
	if h.Query.String == "" {
		return s + fmt.Sprintf("no statement running (%s): a transaction left open)", h.Command)
	}
	return s + fmt.Sprintf("running %q)", h.Query.String)
}

// holderColumns are the columns of a holder, the blocking transaction as
// b and its session as p; its one parameter is the shop's database. The
// statement of a session in another database (another application's, which
// may carry its data) is never read: the server's other tenants are not
// the shop's to show in quotesync's status.
const holderColumns = `b.trx_mysql_thread_id AS id, CONCAT(COALESCE(p.USER, '?'), '@', COALESCE(p.HOST, '?')) AS user,
	COALESCE(p.COMMAND, '') AS command, COALESCE(TIMESTAMPDIFF(SECOND, b.trx_started, NOW()), 0) AS open,
	CASE WHEN p.DB <=> ? THEN COALESCE(LEFT(REPLACE(REPLACE(b.trx_query, '\n', ' '), '\r', ' '), 120), '') ELSE NULL END AS query`

// blockers returns the sessions holding the locks that sessions of
// quotesync's database user, in the shop's database, wait for (another
// application on the same server, even under the same user, is not named).
func (st *Store) blockers(ctx context.Context) ([]lockHolder, error) {
	return st.holders(ctx, `SELECT DISTINCT `+holderColumns+`
FROM information_schema.INNODB_LOCK_WAITS w
JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id
JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id
JOIN information_schema.PROCESSLIST rp ON rp.ID = r.trx_mysql_thread_id
LEFT JOIN information_schema.PROCESSLIST p ON p.ID = b.trx_mysql_thread_id
WHERE rp.USER = ? AND rp.DB = ?
ORDER BY 4 DESC
LIMIT 3`, st.cfg.Database, st.cfg.User, st.cfg.Database)
}

// lockingTransactions returns the oldest open transactions that hold
// locks, but for this session's: first those of sessions in the shop's
// database (the shop's program), then those of others.
func (st *Store) lockingTransactions(ctx context.Context) ([]lockHolder, error) {
	return st.holders(ctx, `SELECT `+holderColumns+`
FROM information_schema.INNODB_TRX b
LEFT JOIN information_schema.PROCESSLIST p ON p.ID = b.trx_mysql_thread_id
WHERE b.trx_state <> 'LOCK WAIT' AND (b.trx_rows_locked > 0 OR b.trx_tables_locked > 0)
  AND b.trx_mysql_thread_id <> CONNECTION_ID()
ORDER BY COALESCE(p.DB = ?, 0) DESC, 4 DESC
LIMIT 3`, st.cfg.Database, st.cfg.Database)
}

func (st *Store) holders(ctx context.Context, query string, args ...any) ([]lockHolder, error) {
	var out []lockHolder
	err := st.x.SelectContext(ctx, &out, query, args...)
	return out, err
}
