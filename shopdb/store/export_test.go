package store

import (
	"context"
	"database/sql"

	"github.com/jmoiron/sqlx"
)

// SetBeforeCommit installs a hook that runs inside InTx's and Deliver's
// transactions just before COMMIT (tests use it to kill the connection
// there).
func SetBeforeCommit(st *Store, f func(ctx context.Context, tx *sqlx.Tx) error) { st.beforeCommit = f }

// LockConnectionID is the server session id holding l.
func LockConnectionID(l *Lock) int64 { return l.connID }

// SetMarkerBytes bounds each statement of UpdateMarkers to n bytes (0:
// markerAskBytes until the server is asked).
func SetMarkerBytes(st *Store, n int) { st.markerBytes.Store(int64(n)) }

// MarkerBytes is the bound UpdateMarkers keeps to, 0 until the server has
// been asked.
func MarkerBytes(st *Store) int { return int(st.markerBytes.Load()) }

// EditMarkerSQL changes UpdateMarkers' statement (to make the server
// refuse it).
func EditMarkerSQL(st *Store, edit func(string) string) { st.markerSQL = edit(st.markerSQL) }

// MarkersByCase reports whether UpdateMarkers has fallen back to CASE
// statements.
func MarkersByCase(st *Store) bool { return st.markerCase.Load() }

// MarkerChunks is how many statements UpdateMarkers' JSON form needs for
// us within limit bytes each.
func MarkerChunks(st *Store, us []MarkerUpdate, limit int) int {
	var buf []byte
	n := 0
	for len(us) > 0 {
		var used int
		buf, used = markerDoc(buf, us, limit-len(st.markerSQL)-markerSQLSlack)
		us = us[used:]
		n++
	}
	return n
}

// DupKey is dupKey: the key a duplicate-entry error names.
func DupKey(err error) (string, bool) { return dupKey(err) }

// DuplicateRequest is duplicateRequest on st's pool.
func DuplicateRequest(ctx context.Context, st *Store, err error, requestID string) (bool, error) {
	return st.duplicateRequest(ctx, st.x, err, requestID)
}

// DuplicateRequestTx is duplicateRequest inside tx.
func DuplicateRequestTx(ctx context.Context, st *Store, tx *sql.Tx, err error, requestID string) (bool, error) {
	return st.duplicateRequest(ctx, tx, err, requestID)
}
