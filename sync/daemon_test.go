package sync_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// TestOpenSchema: without migration, Open accepts current tables,
// explains missing ones (but lets a dry run plan on a fresh database), and
// refuses tables a newer quotesync migrated, saying to upgrade; with
// migration it refuses them with the same advice.
func TestOpenSchema(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	settings := func(cfg shopdb.Config) qsync.Settings {
		return qsync.Settings{Insurers: []qsync.Insurer{{Name: qsync.DefaultInsurer, Remote: remote.Config{BaseURL: "http://127.0.0.1:9"}, Tokens: remote.StaticToken("t")}},
			Shop: cfg, Sync: qsync.DefaultConfig()}
	}
	open := func(cfg shopdb.Config, o qsync.OpenOptions) error {
		qd, err := qsync.Open(ctx, settings(cfg), o)
		if err == nil {
			qd.Close()
		}
		return err
	}

	empty := shopdbtest.NewSampleShop(t)
	if err := open(empty.Config(), qsync.OpenOptions{}); err == nil || !strings.Contains(err.Error(), "do not exist yet") {
		t.Errorf("Open on a database without state tables = %v, want 'do not exist yet'", err)
	}
	if err := open(empty.Config(), qsync.OpenOptions{AllowNoTables: true}); err != nil {
		t.Errorf("Open for a dry run on a database without state tables = %v, want it allowed", err)
	}

	db, d := shopdbtest.New(t)
	if err := open(d.Config(), qsync.OpenOptions{}); err != nil {
		t.Fatalf("Open on current tables: %v", err)
	}
	_, latest, err := store.New(db).SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.SQL.ExecContext(ctx, "INSERT INTO quotesync_schema (version, name, applied_at) VALUES (?, 'from_a_newer_quotesync', NOW())", latest+1); err != nil {
		t.Fatal(err)
	}
	for _, migrate := range []bool{false, true} {
		err := open(d.Config(), qsync.OpenOptions{Migrate: migrate, AllowNoTables: true})
		if !errors.Is(err, store.ErrSchemaTooNew) {
			t.Fatalf("Open(migrate=%t) on version %d (latest %d) = %v, want ErrSchemaTooNew", migrate, latest+1, latest, err)
		}
		for _, w := range []string{"a newer quotesync migrated this database", "upgrade quotesync"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Open(migrate=%t) error %q lacks %q", migrate, err, w)
			}
		}
	}
	if got, _, err := store.New(db).SchemaVersion(ctx); err != nil || got != latest+1 {
		t.Errorf("schema version after the refusals = %d, %v; want %d untouched", got, err, latest+1)
	}
}
