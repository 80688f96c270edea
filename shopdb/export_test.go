package shopdb

import (
	"context"

	"github.com/jmoiron/sqlx"
)

// SetBeforeCommit installs a hook that runs inside Reserve's transaction
// just before COMMIT (tests use it to kill the connection there).
func SetBeforeCommit(db *DB, f func(ctx context.Context, tx *sqlx.Tx) error) { db.beforeCommit = f }

// LockConnectionID is the server session id holding l.
func LockConnectionID(l *Lock) int64 { return l.connID }
