package store_test

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// TestDupKey reads the key of a duplicate-entry error from the documented
// message only, from its end: the entry is data and may look like a key.
func TestDupKey(t *testing.T) {
	dup := func(msg string) error {
		return fmt.Errorf("insert: %w", &mysql.MySQLError{Number: 1062, Message: msg})
	}
	tests := []struct {
		name string
		err  error
		key  string
		ok   bool
	}{
		{"MariaDB", dup("Duplicate entry 'RO-1' for key 'quotesync_requests_job'"), "quotesync_requests_job", true},
		{"Primary", dup("Duplicate entry '17' for key 'PRIMARY'"), "PRIMARY", true},
		{"MySQL8Qualified", dup("Duplicate entry '17' for key 'quotesync_requests.PRIMARY'"), "PRIMARY", true},
		{"EmptyEntry", dup("Duplicate entry '' for key 'PRIMARY'"), "PRIMARY", true},
		{"EntryLooksLikeAKey", dup("Duplicate entry 'x' for key 'PRIMARY' for key 'quotesync_requests_job'"), "quotesync_requests_job", true},
		{"EntryNamesPrimary", dup("Duplicate entry 'RO-PRIMARY' for key 'quotesync_requests_job'"), "quotesync_requests_job", true},
		{"Localised", dup("Doppelter Eintrag '17' für Schlüssel 'PRIMARY'"), "", false},
		{"EmbeddedServer", dup("duplicate primary key given: [17]"), "", false},
		{"NoKey", dup("Duplicate entry '17' for key '"), "", false},
		{"OtherNumber", &mysql.MySQLError{Number: 1146, Message: "Duplicate entry '17' for key 'PRIMARY'"}, "", false},
		{"NotMySQL", errors.New("Duplicate entry '17' for key 'PRIMARY'"), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, ok := store.DupKey(tt.err)
			if key != tt.key || ok != tt.ok {
				t.Errorf("DupKey = %q, %v; want %q, %v", key, ok, tt.key, tt.ok)
			}
		})
	}
}

// TestDuplicateKeysByName: which key an insert clashes on decides the
// error, whatever the request id or job number hold; a message without the
// key's name (another language, the embedded server) is decided by
// looking the request up.
func TestDuplicateKeysByName(t *testing.T) {
	db, _ := newStore(t)
	ctx := testContext(t)
	const job = "RO-PRIMARY-1" // a job number holding the primary key's name
	if _, err := db.Insert(ctx, store.Request{RequestID: "a' for key 'PRIMARY", JobNumber: job, Phase: phReserved}, store.Event{}); err != nil {
		t.Fatal(err)
	}
	_, err := db.Insert(ctx, store.Request{RequestID: "b", JobNumber: job, Phase: phReserved}, store.Event{})
	if !errors.Is(err, store.ErrJobInUse) || errors.Is(err, store.ErrExists) {
		t.Errorf("Insert of another request for job %s = %v, want ErrJobInUse", job, err)
	}
	id := "c' for key '" + shopdb.DefaultTablePrefix + "requests_job"
	if _, err := db.Insert(ctx, store.Request{RequestID: id, JobNumber: "RO-2", Phase: phReserved}, store.Event{}); err != nil {
		t.Fatal(err)
	}
	_, err = db.Insert(ctx, store.Request{RequestID: id, JobNumber: "RO-3", Phase: phReserved}, store.Event{})
	if !errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrJobInUse) {
		t.Errorf("a second Insert of request %q = %v, want ErrExists", id, err)
	}

	for _, msg := range []string{"Doppelter Eintrag 'x' für Schlüssel 'PRIMARY'", "duplicate primary key given: [x]"} {
		undocumented := &mysql.MySQLError{Number: 1062, Message: msg}
		for _, tt := range []struct {
			id     string
			exists bool
		}{{id, true}, {"b", false}} {
			got, err := store.DuplicateRequest(ctx, db.Store, undocumented, tt.id)
			if err != nil || got != tt.exists {
				t.Errorf("DuplicateRequest(%q, request %q) = %v, %v; want %v", msg, tt.id, got, err, tt.exists)
			}
		}
	}
}

// TestDuplicateRequestSeesCommittedRow: the look-up after a duplicate key
// whose message names no key reads the row another instance committed,
// also inside a REPEATABLE READ transaction whose snapshot is older than
// that row. A consistent read would miss it and take the clash for the
// job number's.
func TestDuplicateRequestSeesCommittedRow(t *testing.T) {
	db, d := newStore(t)
	ctx := testContext(t)
	tx, err := d.SQL.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var n int // the first read takes the snapshot
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+shopdb.DefaultTablePrefix+"requests").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Insert(ctx, store.Request{RequestID: "r-other", JobNumber: "RO-OTHER", Phase: phReserved}, store.Event{}); err != nil {
		t.Fatal(err)
	}
	undocumented := &mysql.MySQLError{Number: 1062, Message: "Doppelter Eintrag 'r-other' für Schlüssel 'PRIMARY'"}
	if got, err := store.DuplicateRequestTx(ctx, db.Store, tx, undocumented, "r-other"); err != nil || !got {
		t.Errorf("DuplicateRequest in a transaction older than the row = %v, %v; want true (the committed row seen)", got, err)
	}
}
