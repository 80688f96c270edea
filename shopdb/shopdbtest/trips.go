package shopdbtest

import (
	"context"
	"database/sql/driver"
	"errors"
	"sync/atomic"

	"github.com/quotesync/quotesync/shopdb"
)

// Trips counts the round trips of the pools opened with it as their
// shopdb.Config.Connector: every command that waits for the server's
// answer (queries, executions, prepares, statement executions, BEGIN,
// COMMIT, ROLLBACK, pings and the session set-up). The connection
// handshake and closing are not counted. Database.Config sets one.
type Trips struct{ n atomic.Int64 }

// Count is the round trips counted so far.
func (t *Trips) Count() int64 { return t.n.Load() }

// Wrap implements shopdb.Config's Connector.
func (t *Trips) Wrap(c driver.Connector) driver.Connector {
	return &countingConnector{inner: c, n: &t.n}
}

// RoundTrips is the round trips db's pool has sent: its Config's Trips,
// set by Database.Config. It panics for a pool without one.
func RoundTrips(db *shopdb.DB) int64 {
	t, ok := db.Config().Connector.(*Trips)
	if !ok {
		panic("shopdbtest: RoundTrips of a pool whose Config has no *Trips as its Connector")
	}
	return t.Count()
}

// countingConnector makes countingConns.
type countingConnector struct {
	inner driver.Connector
	n     *atomic.Int64
}

// Connect implements driver.Connector.
func (c *countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &countingConn{inner: conn, n: c.n}, nil
}

// Driver implements driver.Connector.
func (c *countingConnector) Driver() driver.Driver { return c.inner.Driver() }

// countingConn forwards every optional interface of the mysql driver's
// connection so that database/sql uses the same fast paths through it.
type countingConn struct {
	inner driver.Conn
	n     *atomic.Int64
}

var (
	_ driver.Conn               = (*countingConn)(nil)
	_ driver.ConnPrepareContext = (*countingConn)(nil)
	_ driver.ConnBeginTx        = (*countingConn)(nil)
	_ driver.ExecerContext      = (*countingConn)(nil)
	_ driver.QueryerContext     = (*countingConn)(nil)
	_ driver.Pinger             = (*countingConn)(nil)
	_ driver.SessionResetter    = (*countingConn)(nil)
	_ driver.Validator          = (*countingConn)(nil)
	_ driver.NamedValueChecker  = (*countingConn)(nil)
)

func (c *countingConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *countingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	c.n.Add(1)
	var st driver.Stmt
	var err error
	if p, ok := c.inner.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, query)
	} else {
		st, err = c.inner.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	return &countingStmt{inner: st, n: c.n}, nil
}

func (c *countingConn) Close() error { return c.inner.Close() }

func (c *countingConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	b, ok := c.inner.(driver.ConnBeginTx)
	if !ok {
		return nil, errors.New("begin transaction: driver connection has no BeginTx")
	}
	c.n.Add(1)
	if opts.Isolation != 0 {
		c.n.Add(1) // the driver sends SET TRANSACTION ISOLATION LEVEL first
	}
	tx, err := b.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &countingTx{inner: tx, n: c.n}, nil
}

func (c *countingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.inner.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	r, err := e.ExecContext(ctx, query, args)
	if !errors.Is(err, driver.ErrSkip) {
		c.n.Add(1)
	}
	return r, err
}

func (c *countingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.inner.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	r, err := q.QueryContext(ctx, query, args)
	if !errors.Is(err, driver.ErrSkip) {
		c.n.Add(1)
	}
	return r, err
}

func (c *countingConn) Ping(ctx context.Context) error {
	p, ok := c.inner.(driver.Pinger)
	if !ok {
		return nil
	}
	c.n.Add(1)
	return p.Ping(ctx)
}

func (c *countingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.inner.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *countingConn) IsValid() bool {
	if v, ok := c.inner.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *countingConn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.inner.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// countingTx counts COMMIT and ROLLBACK.
type countingTx struct {
	inner driver.Tx
	n     *atomic.Int64
}

func (t *countingTx) Commit() error {
	t.n.Add(1)
	return t.inner.Commit()
}

func (t *countingTx) Rollback() error {
	t.n.Add(1)
	return t.inner.Rollback()
}

// countingStmt counts executions of a server-side prepared statement.
type countingStmt struct {
	inner driver.Stmt
	n     *atomic.Int64
}

var (
	_ driver.StmtExecContext   = (*countingStmt)(nil)
	_ driver.StmtQueryContext  = (*countingStmt)(nil)
	_ driver.NamedValueChecker = (*countingStmt)(nil)
)

func (s *countingStmt) Close() error  { return s.inner.Close() }
func (s *countingStmt) NumInput() int { return s.inner.NumInput() }

func (s *countingStmt) Exec(args []driver.Value) (driver.Result, error) {
	s.n.Add(1)
	return s.inner.Exec(args)
}

func (s *countingStmt) Query(args []driver.Value) (driver.Rows, error) {
	s.n.Add(1)
	return s.inner.Query(args)
}

func (s *countingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	e, ok := s.inner.(driver.StmtExecContext)
	if !ok {
		return nil, errors.New("execute statement: driver statement has no ExecContext")
	}
	s.n.Add(1)
	return e.ExecContext(ctx, args)
}

func (s *countingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := s.inner.(driver.StmtQueryContext)
	if !ok {
		return nil, errors.New("query statement: driver statement has no QueryContext")
	}
	s.n.Add(1)
	return q.QueryContext(ctx, args)
}

func (s *countingStmt) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := s.inner.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}
