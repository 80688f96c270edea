package shopdb

import (
	"context"
	"slices"
	"testing"
)

// ReplaceDigestForms makes the first n forms of db's derived markers'
// statement sums (a function no server has, NULL); before db's first
// JobStates.
func ReplaceDigestForms(db *DB, n int, sums string) {
	db.digest.forms = slices.Clone(db.digest.forms)
	for i := range n {
		db.digest.forms[i].sums = sums
	}
}

// SetDigestSplit sets how many jobs make db's JobStates read in two
// statements at once; before its first.
func SetDigestSplit(db *DB, n int) { db.digest.split = n }

// FinalColumn says whether estimate_state returns a final column, as
// the last call that returned a row saw it; known is false until one
// did. Without one, no estimate is ever final: quotesync pushes Drafts
// and submits nothing.
func (db *DB) FinalColumn() (present, known bool) {
	db.digest.mu.Lock()
	defer db.digest.mu.Unlock()
	return db.digest.hasFinal, db.digest.known
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
