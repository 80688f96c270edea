package shopdbtest

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/quotesync/quotesync/shopdb"
)

// Trips counts the round trips of the pools opened with it as their
// shopdb.Config.Connector: every command that waits for the server's
// answer (queries, executions, prepares, BEGIN, COMMIT, ROLLBACK, pings
// and the session set-up). The connection handshake and closing are not
// counted, nor executions of a prepared statement: the driver interpolates
// arguments, and quotesync prepares only to have a statement checked.
// Database.Config sets one.
type Trips struct{ n atomic.Int64 }

// Count is the round trips counted so far.
func (t *Trips) Count() int64 { return t.n.Load() }

// Wrap implements shopdb.Config's Connector.
func (t *Trips) Wrap(c driver.Connector) driver.Connector {
	return &countingConnector{Connector: c, n: &t.n}
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
	driver.Connector
	n *atomic.Int64
}

// fullConn is every interface of the mysql driver's connection: embedded
// in countingConn, database/sql takes the same fast paths through it, and
// only the methods that send a command are counted.
type fullConn interface {
	driver.Conn
	driver.ConnPrepareContext
	driver.ConnBeginTx
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	driver.NamedValueChecker
}

// Connect implements driver.Connector.
func (c *countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	full, ok := conn.(fullConn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("shopdbtest: a driver connection (%T) without the mysql driver's interfaces", conn)
	}
	return &countingConn{fullConn: full, n: c.n}, nil
}

type countingConn struct {
	fullConn
	n *atomic.Int64
}

func (c *countingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	c.n.Add(1)
	return c.fullConn.PrepareContext(ctx, query)
}

func (c *countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.n.Add(1)
	if opts.Isolation != 0 {
		c.n.Add(1) // the driver sends SET TRANSACTION ISOLATION LEVEL first
	}
	tx, err := c.fullConn.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &countingTx{Tx: tx, n: c.n}, nil
}

func (c *countingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	r, err := c.fullConn.ExecContext(ctx, query, args)
	if !errors.Is(err, driver.ErrSkip) {
		c.n.Add(1)
	}
	return r, err
}

func (c *countingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	r, err := c.fullConn.QueryContext(ctx, query, args)
	if !errors.Is(err, driver.ErrSkip) {
		c.n.Add(1)
	}
	return r, err
}

func (c *countingConn) Ping(ctx context.Context) error {
	c.n.Add(1)
	return c.fullConn.Ping(ctx)
}

// countingTx counts COMMIT and ROLLBACK.
type countingTx struct {
	driver.Tx
	n *atomic.Int64
}

func (t *countingTx) Commit() error {
	t.n.Add(1)
	return t.Tx.Commit()
}

func (t *countingTx) Rollback() error {
	t.n.Add(1)
	return t.Tx.Rollback()
}
