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

// TestServerOfItsOwn: a server started for a test runs with the sql_mode
// asked for (every session starts with it), holds a sample shop, and is
// gone, with its data directory, when the test ends.
func TestServerOfItsOwn(t *testing.T) {
	mode := shopdbtest.MySQL8Mode
	var addr string
	t.Run("Use", func(t *testing.T) {
		s := shopdbtest.StartServer(t, shopdbtest.ServerOptions{SQLMode: &mode})
		addr = s.Addr
		if s.Mode != mode {
			t.Errorf("the server's sql_mode is %q, want %q", s.Mode, mode)
		}
		d := s.NewSampleShop(t)
		var session string
		var jobs int
		if err := d.SQL.QueryRow("SELECT @@SESSION.sql_mode, (SELECT COUNT(*) FROM jobs)").Scan(&session, &jobs); err != nil {
			t.Fatal(err)
		}
		if session != mode || jobs == 0 {
			t.Errorf("a session on it: sql_mode %q with %d jobs; want %q and the sample shop's jobs", session, jobs, mode)
		}
		if c := d.Config(); c.Addr != s.Addr {
			t.Errorf("the database's config points at %s, not the server's %s", c.Addr, s.Addr)
		}
	})
	db, err := sql.Open("mysql", "root@tcp("+addr+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(); err == nil {
		t.Errorf("the server at %s still answers after its test", addr)
	}
}
