package shopdb

import (
	"context"
	"database/sql/driver"
	"errors"
)

// sessionInit runs once on every new connection. READ COMMITTED for the
// session (and so for every transaction on it) in plain SQL that MariaDB
// 10.11, MySQL 8 and go-mysql-server all accept; the DSN parameters
// transaction_isolation and tx_isolation each fail on one of them.
const sessionInit = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"

// sessionConnector runs sessionInit on each connection its connector makes.
type sessionConnector struct{ driver.Connector }

// Connect implements driver.Connector.
func (c sessionConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	ex, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, errors.New("set up session: the driver connection has no ExecContext")
	}
	if _, err := ex.ExecContext(ctx, sessionInit, nil); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}
