package store_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

// TestMigrateCarriesRowsOver builds quotesync's tables as version 2 left
// them, with rows whose meaning lived in text and timestamps (a held job's
// "shop data: " prefix, a run of 409s' "conflict: " prefix, a push or an
// accept whose answer was lost), migrates, and checks that each row now
// says the same in the explicit columns.
func TestMigrateCarriesRowsOver(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	ctx := testContext(t)
	for _, f := range []string{"migrations/0001_requests.sql", "migrations/0002_events.sql"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.SQL.ExecContext(ctx, strings.ReplaceAll(string(b), "{{prefix}}", "quotesync_")); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	stmts := []string{
		"CREATE TABLE quotesync_schema (version INT NOT NULL, name VARCHAR(255) NOT NULL, applied_at DATETIME(6) NOT NULL, PRIMARY KEY (version))",
		"INSERT INTO quotesync_schema VALUES (1, '0001_requests', NOW(6)), (2, '0002_events', NOW(6))",
		`INSERT INTO quotesync_requests (request_id, claim_number, job_number, phase, pushed_hash, pushed_marker, attempts, last_error, created_at, updated_at, pushed_at, version) VALUES
		 ('held', 'C1', 'RO-1', 'drafted', 'h1', 'm1', 0, 'shop data: job RO-1 line 2 (line_id 11): column price is NULL', NOW(6), NOW(6), NOW(6), 4),
		 ('conflict', 'C2', 'RO-2', 'reserved', '', '', 2, 'conflict: POST /requests/2: conflict: status 409', NOW(6), NOW(6), NULL, 3),
		 ('lostpush', 'C3', 'RO-3', 'drafted', '', 'm3', 1, 'POST /jobs/RO-3/quotes: temporary failure: status 503', NOW(6), NOW(6), NOW(6), 5),
		 ('waiting', 'C4', NULL, 'waiting', '', '', 0, '', NOW(6), NOW(6), NULL, 1),
		 ('rejected', 'C5', NULL, 'rejected', '', '', 3, 'accept request 5 with job RO-5 refused as a conflict 3 times', NOW(6), NOW(6), NULL, 6),
		 ('done', 'C6', 'RO-6', 'submitted', 'h6', 'm6', 0, '', NOW(6), NOW(6), NOW(6), 7)`,
		"UPDATE quotesync_requests SET resume_phase = 'waiting' WHERE request_id = 'rejected'",
	}
	for _, s := range stmts {
		if _, err := d.SQL.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	db := openStore(t, d, d.Config()) // migrates
	if a := adopt(t, db, shopdb.DefaultInsurer); a.Requests != 6 {
		t.Fatalf("adopt the rows written before insurers: %+v; want the 6 requests", a)
	}
	want := map[string]struct {
		reason    store.Reason
		intent    store.Intent
		lastError string
	}{
		"held":     {"shop_data", "", "job RO-1 line 2 (line_id 11): column price is NULL"},
		"conflict": {"accept_conflict", "accept", "POST /requests/2: conflict: status 409"},
		"lostpush": {"retrying", "push", "POST /jobs/RO-3/quotes: temporary failure: status 503"},
		"waiting":  {"no_job", "", ""},
		"rejected": {"job_conflict", "", "accept request 5 with job RO-5 refused as a conflict 3 times"},
		"done":     {"", "", ""},
	}
	for id, w := range want {
		r, err := db.Request(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Reason != w.reason || r.Intent != w.intent || r.LastError != w.lastError {
			t.Errorf("%s after the migration: reason %q intent %q last error %q; want %q, %q, %q",
				id, r.Reason, r.Intent, r.LastError, w.reason, w.intent, w.lastError)
		}
	}
	if got := count(t, d, "SELECT COUNT(*) FROM quotesync_settings"); got != 0 {
		t.Errorf("settings rows = %d, want the table, empty", got)
	}
}

// TestMigrateKeepsOutboxRows: deliveries queued by a quotesync before the
// notice ids (tables at version 11) are still made after the migration:
// read back as they were, with no notice id (the notifier keeps their old
// id), retried and marked done; a new event's deliveries get an id.
func TestMigrateKeepsOutboxRows(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	ctx := testContext(t)
	files, err := filepath.Glob("migrations/00*.sql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	const before = 11
	for v, f := range files[:before] {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.SQL.ExecContext(ctx, strings.ReplaceAll(string(b), "{{prefix}}", "quotesync_")); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if v == 0 {
			if _, err := d.SQL.ExecContext(ctx, "CREATE TABLE quotesync_schema (version INT NOT NULL, name VARCHAR(255) NOT NULL, applied_at DATETIME(6) NOT NULL, PRIMARY KEY (version))"); err != nil {
				t.Fatal(err)
			}
		}
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		if _, err := d.SQL.ExecContext(ctx, "INSERT INTO quotesync_schema VALUES (?, ?, NOW(6))", v+1, name); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{
		"INSERT INTO quotesync_events (id, request_id, job, kind, to_phase, message, `at`) VALUES (7, '1003', 'RO-1', 'rejected', 'rejected', 'status 422', NOW(6))",
		"INSERT INTO quotesync_outbox (event_id, target, kind, request_id, claim, job, phase, detail, `at`, next_attempt_at) VALUES" +
			" (7, 'webhook', 'rejected', '1003', 'CLM-1', 'RO-1', 'rejected', 'status 422', NOW(6), '1970-01-01'), " +
			" (7, 'command', 'rejected', '1003', 'CLM-1', 'RO-1', 'rejected', 'status 422', NOW(6), '1970-01-01')",
	} {
		if _, err := d.SQL.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	db := openStore(t, d, d.Config()) // migrates
	if cur, latest, err := db.SchemaVersion(ctx); err != nil || cur != latest || cur <= before {
		t.Fatalf("schema version %d of %d (%v), want the latest, past %d", cur, latest, err, before)
	}
	ds, err := db.PendingDeliveries(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 {
		t.Fatalf("pending deliveries after the migration = %+v, want the 2 rows", ds)
	}
	for _, dl := range ds {
		if dl.EventID != 7 || dl.NoticeID != "" || dl.RequestID != "1003" || dl.Detail != "status 422" {
			t.Errorf("delivery after the migration = %+v, want event 7 of request 1003, no notice id", dl)
		}
	}
	if err := db.DeliveryFailed(ctx, ds[0].ID, "receiver down", time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, dl := range ds {
		if err := db.Deliver(ctx, dl.ID, func(context.Context, *sqlx.Tx) error { return nil }); err != nil {
			t.Fatalf("deliver %d: %v", dl.ID, err)
		}
	}
	if ds, err := db.PendingDeliveries(ctx, 10); err != nil || len(ds) != 0 {
		t.Errorf("pending deliveries after delivering = %+v, %v; want none", ds, err)
	}
	acceptWithOutbox(t, db, "new", shopdb.WriteBackRejected, store.TargetWebhook)
	if ds, err := db.PendingDeliveries(ctx, 10); err != nil || len(ds) != 1 || ds[0].NoticeID == "" {
		t.Errorf("a new event's deliveries = %+v, %v; want one with a notice id", ds, err)
	}
}
