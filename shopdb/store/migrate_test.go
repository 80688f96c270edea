package store_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

func openUnmigrated(t *testing.T, _ *shopdbtest.Database, cfg shopdb.Config) testDB {
	t.Helper()
	return unmigrated(t, cfg)
}

func tableCount(t *testing.T, d *shopdbtest.Database, like string) int {
	t.Helper()
	return count(t, d, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE ?", d.Name, like)
}

func TestMigrateFromEmptyAndIdempotent(t *testing.T) {
	d := shopdbtest.NewDatabase(t)
	db := openUnmigrated(t, d, d.Config())
	ctx := testContext(t)

	if got := tableCount(t, d, "quotesync%"); got != 0 {
		t.Fatalf("Open created %d tables; it must not migrate", got)
	}
	cur, latest, err := db.SchemaVersion(ctx)
	if err != nil || cur != 0 || latest < 2 {
		t.Fatalf("SchemaVersion before Migrate = %d, %d, %v; want 0, >= 2, nil", cur, latest, err)
	}
	for i := 0; i < 2; i++ {
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("Migrate #%d: %v", i+1, err)
		}
		cur, _, err := db.SchemaVersion(ctx)
		if err != nil || cur != latest {
			t.Fatalf("SchemaVersion after Migrate #%d = %d, %v; want %d", i+1, cur, err, latest)
		}
	}
	if got := tableCount(t, d, "quotesync%"); got != 5 {
		t.Errorf("tables = %d, want 5 (requests, events, schema, settings, outbox)", got)
	}
	if got := count(t, d, "SELECT COUNT(*) FROM quotesync_schema"); got != latest {
		t.Errorf("version rows = %d, want %d", got, latest)
	}

	// A run that died between a step's DDL and its version row repeats
	// the step harmlessly.
	if _, err := d.SQL.Exec("DELETE FROM quotesync_schema WHERE version = ?", latest); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate after a lost version row: %v", err)
	}
	if cur, _, _ := db.SchemaVersion(ctx); cur != latest {
		t.Errorf("version = %d, want %d", cur, latest)
	}
}

func TestMigrateRefusesNewerSchema(t *testing.T) {
	db, d := newStore(t)
	ctx := testContext(t)
	_, latest, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.SQL.Exec("INSERT INTO quotesync_schema (version, name, applied_at) VALUES (?, 'from_the_future', NOW())", latest+1); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("Migrate error = %v, want ErrSchemaTooNew", err)
	}
	cur, got, err := db.SchemaVersion(ctx)
	if err != nil || cur != latest+1 || got != latest {
		t.Errorf("SchemaVersion = %d, %d, %v; want %d, %d", cur, got, err, latest+1, latest)
	}
}

func TestMigrateConcurrentDaemons(t *testing.T) {
	d := shopdbtest.NewDatabase(t)
	ctx := testContext(t)
	dbs := []testDB{openUnmigrated(t, d, d.Config()), openUnmigrated(t, d, d.Config()), openUnmigrated(t, d, d.Config())}
	errs := make([]error, len(dbs))
	var wg sync.WaitGroup
	for i, db := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.Migrate(ctx)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Migrate #%d: %v", i, err)
		}
	}
	_, latest, _ := dbs[0].SchemaVersion(ctx)
	if got := count(t, d, "SELECT COUNT(*) FROM quotesync_schema"); got != latest {
		t.Errorf("version rows = %d, want %d (each step once)", got, latest)
	}
}

func TestMigrateTablePrefix(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	a := openStore(t, d, d.Config())
	cfg := d.Config()
	cfg.TablePrefix = "qs2_"
	b := openStore(t, d, cfg)
	ctx := testContext(t)
	if got := tableCount(t, d, "qs2\\_%"); got != 5 {
		t.Fatalf("tables with prefix qs2_ = %d, want 5", got)
	}
	// The two sets of state are independent.
	mustReserve(t, a, newRequest("1", "CLM-A"))
	if _, err := b.Request(ctx, "1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("prefix qs2_ sees request 1 of prefix quotesync_: %v", err)
	}
	if got := count(t, d, "SELECT COUNT(*) FROM qs2_requests"); got != 0 {
		t.Errorf("qs2_requests rows = %d, want 0", got)
	}
}
