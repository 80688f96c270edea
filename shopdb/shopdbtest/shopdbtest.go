// Package shopdbtest gives each test a fresh, uniquely named database
// (qstest_<random>) on a real MySQL or MariaDB server, dropped when the test
// ends. The server comes from the environment variable QUOTESYNC_TEST_DSN
// (default root@tcp(127.0.0.1:3306)/); `make test` starts one when none
// answers. When no server answers, the test fails and says so: it never
// skips.
package shopdbtest

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/store"
)

// EnvDSN names the environment variable holding the test server's DSN
// (go-sql-driver/mysql form, no database); DefaultDSN is used when unset.
const (
	EnvDSN     = "QUOTESYNC_TEST_DSN"
	DefaultDSN = "root@tcp(127.0.0.1:3306)/"
	// NamePrefix starts every test database's name; the CI test user may
	// create only those.
	NamePrefix = "qstest_"
)

// Database is a fresh database on the test server.
type Database struct {
	// Name is the database's name, NamePrefix + 12 hex digits.
	Name string
	// SQL is a pool on the database for the test's own statements (playing
	// the shop, assertions, KILL). Times are UTC.
	SQL  *sqlx.DB
	base *mysql.Config
}

// serverConfig parses the test server's DSN.
func serverConfig(tb testing.TB) *mysql.Config {
	tb.Helper()
	cfg, err := mysql.ParseDSN(cmp.Or(os.Getenv(EnvDSN), DefaultDSN))
	if err != nil {
		tb.Fatalf("shopdbtest: %s is not a go-sql-driver/mysql DSN: %v", EnvDSN, err)
	}
	cfg.DBName = ""
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.InterpolateParams = true
	cfg.MultiStatements = false
	return cfg
}

// DSN returns the DSN of database name on the test server, e.g. for an
// end-to-end test that points the real binary at it.
func DSN(tb testing.TB, name string) string {
	tb.Helper()
	cfg := serverConfig(tb)
	cfg.DBName = name
	return cfg.FormatDSN()
}

func unavailable(tb testing.TB, cfg *mysql.Config, err error) {
	tb.Helper()
	tb.Fatalf("shopdbtest: no MySQL/MariaDB server answers at %s as %s: %v\n"+
		"\tthe SQL tests need a real server: `make test` starts one (see .ci/mariadb),\n"+
		"\tor set %s=user:pass@tcp(host:port)/ (a user allowed to create %s* databases)",
		cfg.Addr, cfg.User, err, EnvDSN, NamePrefix)
}

// NewDatabase creates an empty database, dropped in tb.Cleanup.
func NewDatabase(tb testing.TB) *Database {
	tb.Helper()
	return newDatabase(tb, serverConfig(tb))
}

// newDatabase creates an empty database on the server of base.
func newDatabase(tb testing.TB, base *mysql.Config) *Database {
	tb.Helper()
	admin, err := sqlx.Open("mysql", base.FormatDSN())
	if err != nil {
		tb.Fatalf("shopdbtest: %v", err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		unavailable(tb, base, err)
	}
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		tb.Fatalf("shopdbtest: %v", err)
	}
	name := NamePrefix + hex.EncodeToString(rnd[:])
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+name+"` CHARACTER SET utf8mb4"); err != nil {
		tb.Fatalf("shopdbtest: create database %s: %v", name, err)
	}
	d := &Database{Name: name, base: base}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		admin, err := sqlx.Open("mysql", base.FormatDSN())
		if err == nil {
			_, err = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+name+"`")
			admin.Close()
		}
		if err != nil {
			tb.Errorf("shopdbtest: drop database %s: %v", name, err)
		}
	})
	if d.SQL, err = sqlx.Open("mysql", d.DSN()); err != nil {
		tb.Fatalf("shopdbtest: %v", err)
	}
	tb.Cleanup(func() { d.SQL.Close() })
	return d
}

// NewSampleShop creates a database holding the sample shop's schema and
// data (package sampleshop).
func NewSampleShop(tb testing.TB) *Database {
	tb.Helper()
	return withSampleShop(tb, NewDatabase(tb))
}

// withSampleShop fills d with the sample shop.
func withSampleShop(tb testing.TB, d *Database) *Database {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := sampleshop.Apply(ctx, d.SQL); err != nil {
		tb.Fatalf("shopdbtest: %v", err)
	}
	return d
}

// New is the common case: a sample shop database, and a shopdb.DB on it
// with the sample mapping, opened, with quotesync's tables migrated
// (store.New on it is their store).
func New(tb testing.TB) (*shopdb.DB, *Database) {
	tb.Helper()
	d := NewSampleShop(tb)
	return d.Open(tb, d.Config()), d
}

// DSN returns the database's DSN.
func (d *Database) DSN() string {
	cfg := d.base.Clone()
	cfg.DBName = d.Name
	return cfg.FormatDSN()
}

// Config returns a shopdb.Config for this database with the sample shop's
// mapping (sampleshop.Mapping) and small lock timings for tests.
func (d *Database) Config() shopdb.Config {
	cfg := sampleshop.Mapping()
	cfg.Addr = d.base.Addr
	cfg.User = d.base.User
	cfg.Password = d.base.Passwd
	cfg.Database = d.Name
	cfg.LockHeartbeat = 200 * time.Millisecond
	cfg.LockSessionTimeout = 2 * time.Second
	cfg.Connector = &Trips{} // RoundTrips counts what its pools send
	return cfg
}

// Open opens cfg and migrates quotesync's tables; tb.Cleanup closes the DB.
func (d *Database) Open(tb testing.TB, cfg shopdb.Config) *shopdb.DB {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, ok := cfg.Connector.(*Trips); ok || cfg.Connector == nil {
		cfg.Connector = &Trips{} // a count of this pool's own
	}
	db, err := shopdb.Open(ctx, cfg)
	if err != nil {
		tb.Fatalf("shopdbtest: open: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := store.New(db).Migrate(ctx); err != nil {
		tb.Fatalf("shopdbtest: migrate: %v", err)
	}
	return db
}

// Shop returns the sample shop's helper on this database.
func (d *Database) Shop() *sampleshop.Shop {
	return sampleshop.New(d.SQL.DB)
}

// Snapshot counts what a half-written reservation could leave behind,
// or a check that wrote would: the sample shop's job counter, jobs and
// estimates, and quotesync's requests and events.
func (d *Database) Snapshot(tb testing.TB) [5]int {
	tb.Helper()
	var out [5]int
	for i, q := range []string{"SELECT next_val FROM counters WHERE name = 'job'", "SELECT COUNT(*) FROM jobs",
		"SELECT COUNT(*) FROM estimates", "SELECT COUNT(*) FROM quotesync_requests", "SELECT COUNT(*) FROM quotesync_events"} {
		if err := d.SQL.Get(&out[i], q); err != nil {
			tb.Fatalf("shopdbtest: %s: %v", q, err)
		}
	}
	return out
}

// LineItems reads jobs' lines with shopdb.DB.Lines as a pass holds them:
// the lines of each job without a bad row, and the first bad row of each
// job with one.
func LineItems(ctx context.Context, db *shopdb.DB, jobs []string) (map[string][]shopdb.Line, map[string]error, error) {
	all, err := db.Lines(ctx, jobs)
	if err != nil {
		return nil, nil, err
	}
	lines, bad := map[string][]shopdb.Line{}, map[string]error{}
	for job, jl := range all {
		if err := jl.Err(); err != nil {
			bad[job] = err
		} else {
			lines[job] = jl.Lines
		}
	}
	return lines, bad, nil
}

// Hold opens a session of its own on db (closed at the test's end) and
// runs stmts in it, typically "BEGIN" and a statement that locks rows:
// the shop's program holding a lock while a dialog is open. holder is the
// session's connection id, which quotesync's messages must name.
func Hold(tb testing.TB, ctx context.Context, db *sql.DB, stmts ...string) (conn *sql.Conn, holder int64) {
	tb.Helper()
	conn, err := db.Conn(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&holder); err != nil {
		tb.Fatal(err)
	}
	for _, q := range stmts {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
	return conn, holder
}
