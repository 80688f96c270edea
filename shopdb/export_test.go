package shopdb

import (
	"context"
	"database/sql"
	"testing"

	"github.com/jmoiron/sqlx"
)

// SetBeforeCommit installs a hook that runs inside Reserve's transaction
// just before COMMIT (tests use it to kill the connection there).
func SetBeforeCommit(db *DB, f func(ctx context.Context, tx *sqlx.Tx) error) { db.beforeCommit = f }

// LockConnectionID is the server session id holding l.
func LockConnectionID(l *Lock) int64 { return l.connID }

// SetMarkerBytes bounds each statement of UpdateMarkers to n bytes (0:
// markerAskBytes until the server is asked).
func SetMarkerBytes(db *DB, n int) { db.markerBytes.Store(int64(n)) }

// MarkerBytes is the bound UpdateMarkers keeps to, 0 until the server has
// been asked.
func MarkerBytes(db *DB) int { return int(db.markerBytes.Load()) }

// EditMarkerSQL changes UpdateMarkers' statement (to make the server
// refuse it).
func EditMarkerSQL(db *DB, edit func(string) string) { db.markerSQL = edit(db.markerSQL) }

// MarkersByCase reports whether UpdateMarkers has fallen back to CASE
// statements.
func MarkersByCase(db *DB) bool { return db.markerCase.Load() }

// MarkerChunks is how many statements UpdateMarkers' JSON form needs for
// us within limit bytes each.
func MarkerChunks(db *DB, us []MarkerUpdate, limit int) int {
	var buf []byte
	n := 0
	for len(us) > 0 {
		var used int
		buf, used = markerDoc(buf, us, limit-len(db.markerSQL)-markerSQLSlack)
		us = us[used:]
		n++
	}
	return n
}

// ReplaceDigestForms makes the first n forms of the derived markers'
// statement sums (a function no server has, NULL), until restore is
// called.
func ReplaceDigestForms(n int, sums string) (restore func()) {
	saved := append(digestForms[:0:0], digestForms...)
	for i := range n {
		digestForms[i].sums = sums
	}
	return func() { copy(digestForms, saved) }
}

// JoinedStates is how many JobStates calls ran estimate_state joined
// with the sums, and why the join is off ("" while it is not).
func JoinedStates(db *DB) (calls int, off string) {
	db.digest.mu.Lock()
	defer db.digest.mu.Unlock()
	return db.digest.joinedUsed, db.digest.joinOff
}

// SetDigestSplit sets how many jobs make JobStates read in two statements
// at once, until the test ends.
func SetDigestSplit(tb testing.TB, n int) {
	saved := digestSplit
	digestSplit = n
	tb.Cleanup(func() { digestSplit = saved })
}

// DupKey is dupKey: the key a duplicate-entry error names.
func DupKey(err error) (string, bool) { return dupKey(err) }

// DuplicateRequest is duplicateRequest on db's pool.
func DuplicateRequest(ctx context.Context, db *DB, err error, requestID string) (bool, error) {
	return db.duplicateRequest(ctx, db.x, err, requestID)
}

// DuplicateRequestTx is duplicateRequest inside tx.
func DuplicateRequestTx(ctx context.Context, db *DB, tx *sql.Tx, err error, requestID string) (bool, error) {
	return db.duplicateRequest(ctx, tx, err, requestID)
}

// SessionStatus reads a status variable of one of the pool's sessions
// (SHOW SESSION STATUS), e.g. Ssl_version.
func (db *DB) SessionStatus(tb testing.TB, ctx context.Context, name string) string {
	tb.Helper()
	var n, v string
	if err := db.x.QueryRowContext(ctx, "SHOW SESSION STATUS LIKE ?", name).Scan(&n, &v); err != nil {
		tb.Fatal(err)
	}
	return v
}
