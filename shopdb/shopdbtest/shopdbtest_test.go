package shopdbtest_test

import (
	"database/sql"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"

	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

func TestNewDatabaseIsFreshAndDropped(t *testing.T) {
	var name, dsn string
	t.Run("Use", func(t *testing.T) {
		d := shopdbtest.NewDatabase(t)
		name, dsn = d.Name, d.DSN()
		if !strings.HasPrefix(name, shopdbtest.NamePrefix) || len(name) != len(shopdbtest.NamePrefix)+12 {
			t.Errorf("name %q, want %s + 12 hex digits", name, shopdbtest.NamePrefix)
		}
		var tables int
		if err := d.SQL.Get(&tables, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()"); err != nil {
			t.Fatal(err)
		}
		if tables != 0 {
			t.Errorf("fresh database has %d tables", tables)
		}
		if got := shopdbtest.DSN(t, name); got != dsn {
			t.Errorf("DSN(t, name) = %q, want %q", got, dsn)
		}
		other := shopdbtest.NewDatabase(t)
		if other.Name == name {
			t.Errorf("two databases share the name %s", name)
		}
	})
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(); err == nil || !strings.Contains(err.Error(), "Unknown database") {
		t.Errorf("database %s after the test: ping error %v, want Unknown database (dropped)", name, err)
	}
}

func TestNewOpensMigratedSampleShop(t *testing.T) {
	db, d := shopdbtest.New(t)
	cur, latest, err := store.New(db).SchemaVersion(t.Context())
	if err != nil || cur != latest {
		t.Fatalf("SchemaVersion = %d, %d, %v; want migrated", cur, latest, err)
	}
	job, err := d.Shop().FindJob(t.Context(), "CLM-1001")
	if err != nil || job != "RO-50001" {
		t.Errorf("sample data: FindJob(CLM-1001) = %q, %v", job, err)
	}
	if cfg := d.Config(); cfg.Database != d.Name || cfg.Queries.LineItems == "" {
		t.Errorf("Config() = %v, want the sample mapping on %s", cfg, d.Name)
	}
}
