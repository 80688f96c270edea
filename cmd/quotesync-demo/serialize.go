package main

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// turnHandler wraps go-mysql-server's protocol handler so that one session
// at a time works on the data, and a session inside an open transaction
// keeps that turn until COMMIT, ROLLBACK or the end of its connection.
//
// Why: GMS's in-memory tables are not thread-safe and have no real
// transactions: a session's COMMIT writes back its whole copy of every
// table it touched, so overlapping transactions silently lose each other's
// writes, and SELECT … FOR UPDATE locks nothing (EMBEDDED-SERVER.md lists
// the cases and the upstream issues). Serialising whole transactions turns
// that into the strictest InnoDB outcome: a conflicting statement waits,
// then sees the committed data.
//
// Statements that touch no table (KILL, and SELECT or SET without FROM,
// such as GET_LOCK or IS_USED_LOCK heartbeats) skip the queue, so a lock
// holder's heartbeat and KILL CONNECTION work while another session is in
// a transaction. A statement that waits longer than wait fails with MySQL
// error 1205 (lock wait timeout), as InnoDB's would, rather than hang a
// client that holds a transaction open on one connection while it waits
// on another.
type turnHandler struct {
	mysql.Handler
	wait time.Duration
	turn chan struct{} // capacity 1: a token in it is the turn, taken
	// owner is the connection holding the turn between statements, 0 for
	// none (vitess numbers connections from 1).
	owner atomic.Uint32
	// sessions is set before the server accepts connections.
	sessions *server.SessionManager
}

func (h *turnHandler) ComQuery(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) error {
	_, err := inTurn(h, ctx, c, query, func() (any, error) { return nil, h.Handler.ComQuery(ctx, c, query, cb) })
	return err
}

func (h *turnHandler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) (string, error) {
	return inTurn(h, ctx, c, query, func() (string, error) { return h.Handler.ComMultiQuery(ctx, c, query, cb) })
}

func (h *turnHandler) ComPrepare(ctx context.Context, c *mysql.Conn, query string, p *mysql.PrepareData) ([]*querypb.Field, error) {
	return inTurn(h, ctx, c, query, func() ([]*querypb.Field, error) { return h.Handler.ComPrepare(ctx, c, query, p) })
}

func (h *turnHandler) ComStmtExecute(ctx context.Context, c *mysql.Conn, p *mysql.PrepareData, cb func(*sqltypes.Result) error) error {
	_, err := inTurn(h, ctx, c, p.PrepareStmt, func() (any, error) { return nil, h.Handler.ComStmtExecute(ctx, c, p, cb) })
	return err
}

// ComResetConnection implements mysql.Handler; a reset ends any transaction.
func (h *turnHandler) ComResetConnection(c *mysql.Conn) error {
	defer h.leave(c)
	return h.Handler.ComResetConnection(c)
}

// ConnectionClosed implements mysql.Handler; a closed (or killed) connection
// gives its turn back.
func (h *turnHandler) ConnectionClosed(c *mysql.Conn) {
	h.Handler.ConnectionClosed(c)
	h.release(c.ConnectionID)
}

// inTurn runs one statement of c in c's turn, waiting for it unless c
// already holds it or query touches no table.
func inTurn[T any](h *turnHandler, ctx context.Context, c *mysql.Conn, query string, do func() (T, error)) (T, error) {
	var zero T
	if !tableless(query) && h.owner.Load() != c.ConnectionID {
		t := time.NewTimer(h.wait)
		defer t.Stop()
		select {
		case h.turn <- struct{}{}:
		case <-t.C:
			return zero, mysql.NewSQLError(mysql.ERLockWaitTimeout, mysql.SSUnknownSQLState,
				"Lock wait timeout exceeded; try restarting transaction (embedded server: another session held its transaction open for %v)", h.wait)
		case <-ctx.Done():
			return zero, ctx.Err()
		}
		h.owner.Store(c.ConnectionID)
	}
	defer h.leave(c)
	return do()
}

// leave settles c's session after a statement and gives the turn back if c
// holds it and is no longer inside a transaction (a table-less statement
// such as SET autocommit=1 can end one too).
func (h *turnHandler) leave(c *mysql.Conn) {
	if !h.settle(c) {
		h.release(c.ConnectionID)
	}
}

func (h *turnHandler) release(connID uint32) {
	if h.owner.CompareAndSwap(connID, 0) {
		<-h.turn
	}
}

// settle reports whether c's session is inside an explicit transaction
// (START TRANSACTION, or autocommit off). A session in autocommit mode that
// still holds a transaction after its statement is one whose statement
// failed (a duplicate key, say): GMS leaves that transaction open, with its
// stale copy of the tables, and commits it with the session's next statement,
// wiping whatever other sessions wrote in between. settle rolls it back, as
// MySQL rolls back a failed autocommitted statement.
func (h *turnHandler) settle(c *mysql.Conn) (explicit bool) {
	ctx, err := h.sessions.NewContextWithQuery(context.Background(), c, "")
	if err != nil || ctx.GetTransaction() == nil {
		return false
	}
	v, _ := ctx.GetSessionVariable(ctx, sql.AutoCommitSessionVar)
	if on, err := sql.ConvertToBool(ctx, v); ctx.GetIgnoreAutoCommit() || err == nil && !on {
		return true
	}
	if ts, ok := ctx.Session.(sql.TransactionSession); ok {
		_ = ts.Rollback(ctx, ctx.GetTransaction())
	}
	ctx.SetTransaction(nil)
	return false
}

// tableless reports whether query is KILL, or a SELECT or SET without a
// FROM: statements that read or change no table and so need no turn. A false
// "no" (a FROM inside a string literal) only costs a wait.
func tableless(query string) bool {
	q := strings.ToLower(strings.TrimSpace(query))
	switch word, _, _ := strings.Cut(q, " "); word {
	case "kill":
		return true
	case "select", "set":
		return !strings.Contains(q, "from")
	}
	return false
}
