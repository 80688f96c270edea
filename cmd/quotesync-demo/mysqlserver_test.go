package main

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"
)

// These tests probe, through go-sql-driver/mysql and sqlx on real
// connections, every SQL feature quotesync's shop layer uses, against the
// embedded go-mysql-server. Where GMS deviates from MySQL/MariaDB the test
// pins the deviation (subtests named Quirk…) so that an upgrade that changes
// it fails here and EMBEDDED-SERVER.md gets updated.

// shopSchema is a small shop schema in the shape of the real ones.
var shopSchema = []string{
	`CREATE TABLE jobs (
		id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
		job_no VARCHAR(32) NOT NULL,
		claim_number VARCHAR(64) NULL,
		created_at DATETIME(6) NOT NULL,
		notes TEXT NULL,
		payload JSON NULL,
		body LONGTEXT NULL,
		version INT NOT NULL DEFAULT 0,
		UNIQUE KEY uq_jobs_job_no (job_no),
		UNIQUE KEY uq_jobs_claim (claim_number),
		KEY idx_jobs_created (created_at)
	) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`,
	`CREATE TABLE estimate_lines (
		id INT UNSIGNED NOT NULL AUTO_INCREMENT,
		job_id BIGINT NOT NULL,
		op_code VARCHAR(16) NOT NULL,
		qty DECIMAL(10,3) NOT NULL,
		unit_price DECIMAL(12,4) NULL,
		deleted TINYINT(1) NOT NULL DEFAULT 0,
		updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
		PRIMARY KEY (id),
		INDEX idx_lines_job (job_id, deleted)
	)`,
	`CREATE TABLE counters (name VARCHAR(32) NOT NULL PRIMARY KEY, next_val BIGINT NOT NULL)`,
	`INSERT INTO counters (name, next_val) VALUES ('job', 50000)`,
}

// t0 is a fixed time with microseconds, for DATETIME(6) round trips.
var t0 = time.Date(2026, 11, 2, 9, 30, 15, 123456000, time.UTC)

// mustStartMySQL starts an embedded server for the test and stops it after.
func mustStartMySQL(tb testing.TB, lockWait time.Duration) string {
	tb.Helper()
	mc, stop, err := startMySQL("", lockWait)
	if err != nil {
		tb.Fatalf("startMySQL: %v", err)
	}
	tb.Cleanup(func() {
		if err := stop(); err != nil {
			tb.Errorf("stop embedded server: %v", err)
		}
	})
	return mc.FormatDSN()
}

// withParams returns dsn with extra driver settings applied by edit.
func withParams(tb testing.TB, dsn string, edit func(*mysql.Config)) string {
	tb.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		tb.Fatalf("parse DSN: %v", err)
	}
	edit(cfg)
	return cfg.FormatDSN()
}

// mustOpen opens a pool on dsn, pings it and closes it after the test.
func mustOpen(tb testing.TB, dsn string) *sqlx.DB {
	tb.Helper()
	db, err := sqlx.Open("mysql", dsn)
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	if err := db.Ping(); err != nil {
		tb.Fatalf("ping: %v", err)
	}
	return db
}

// mustExec runs statements, failing the test on the first error.
func mustExec(tb testing.TB, db sqlx.ExecerContext, stmts ...string) {
	tb.Helper()
	for _, s := range stmts {
		if _, err := db.ExecContext(context.Background(), s); err != nil {
			tb.Fatalf("exec %.60q: %v", s, err)
		}
	}
}

// mustShop returns a pool on a fresh server loaded with shopSchema.
func mustShop(tb testing.TB, lockWait time.Duration) (*sqlx.DB, string) {
	tb.Helper()
	dsn := mustStartMySQL(tb, lockWait)
	db := mustOpen(tb, dsn)
	mustExec(tb, db, shopSchema...)
	return db, dsn
}

// affected runs one statement and returns its RowsAffected.
func affected(tb testing.TB, db sqlx.ExecerContext, query string, args ...any) int64 {
	tb.Helper()
	res, err := db.ExecContext(context.Background(), query, args...)
	if err != nil {
		tb.Fatalf("exec %.60q: %v", query, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		tb.Fatalf("rows affected: %v", err)
	}
	return n
}

// mysqlErr returns err's MySQL error, failing the test when it has none.
func mysqlErr(tb testing.TB, err error) *mysql.MySQLError {
	tb.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		tb.Fatalf("got error %v, want a *mysql.MySQLError", err)
	}
	return me
}

func TestStartMySQL(t *testing.T) {
	mc, stop, err := startMySQL("", 0)
	if err != nil {
		t.Fatalf("startMySQL: %v", err)
	}
	dsn := mc.FormatDSN()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("parse DSN %q: %v", dsn, err)
	}
	if !strings.HasPrefix(cfg.Addr, "127.0.0.1:") || cfg.Addr == "127.0.0.1:0" {
		t.Errorf("Addr = %q, want a concrete loopback port", cfg.Addr)
	}
	if got, want := cfg.User, DefaultMySQLUser; got != want {
		t.Errorf("User = %q, want %q", got, want)
	}
	if len(cfg.Passwd) < 16 || !cfg.ParseTime {
		t.Errorf("want a random password of 16+ chars and parseTime; got len %d, parseTime %v", len(cfg.Passwd), cfg.ParseTime)
	}

	db := mustOpen(t, dsn)
	var dbName, user string
	if err := db.QueryRow("SELECT DATABASE(), CURRENT_USER()").Scan(&dbName, &user); err != nil {
		t.Fatalf("select: %v", err)
	}
	if dbName != DefaultMySQLDatabase || !strings.HasPrefix(user, DefaultMySQLUser+"@") {
		t.Errorf("DATABASE(), CURRENT_USER() = %q, %q; want %q, %s@…", dbName, user, DefaultMySQLDatabase, DefaultMySQLUser)
	}

	t.Run("WrongPasswordRefused", func(t *testing.T) {
		bad, err := sql.Open("mysql", withParams(t, dsn, func(c *mysql.Config) { c.Passwd = "nope" }))
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		defer bad.Close()
		if got, want := mysqlErr(t, bad.Ping()).Number, uint16(1045); got != want {
			t.Errorf("error number %d, want %d (access denied)", got, want)
		}
	})

	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatalf("conn: %v", err)
	}
	defer conn.Close()
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := stop(); err != nil {
		t.Errorf("second stop: %v", err)
	}
	if err := conn.PingContext(context.Background()); err == nil {
		t.Error("open session still answers after stop")
	}
	fresh, _ := sql.Open("mysql", dsn)
	defer fresh.Close()
	if err := fresh.Ping(); err == nil {
		t.Error("new connection accepted after stop")
	}
}

func TestMySQLSchema(t *testing.T) {
	db, _ := mustShop(t, 0)

	t.Run("TableExists", func(t *testing.T) {
		const q = `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?`
		for name, want := range map[string]int{"jobs": 1, "estimate_lines": 1, "nope": 0} {
			var got int
			if err := db.Get(&got, q, name); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got != want {
				t.Errorf("table %s: count %d, want %d", name, got, want)
			}
		}
	})

	t.Run("ColumnTypes", func(t *testing.T) {
		var got []string
		err := db.Select(&got, `SELECT CONCAT(column_name, ' ', column_type, ' ', is_nullable)
			FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ?
			ORDER BY ordinal_position`, "jobs")
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"id bigint NO", "job_no varchar(32) NO", "claim_number varchar(64) YES",
			"created_at datetime(6) NO", "notes text YES", "payload json YES", "body longtext YES", "version int NO"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("jobs columns (-want +got):\n%s", diff)
		}
		var scales []string
		err = db.Select(&scales, `SELECT CONCAT(column_name, ' ', column_type) FROM information_schema.columns
			WHERE table_schema = DATABASE() AND table_name = 'estimate_lines' AND data_type = 'decimal' ORDER BY ordinal_position`)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"qty decimal(10,3)", "unit_price decimal(12,4)"}, scales); diff != "" {
			t.Errorf("decimal columns (-want +got):\n%s", diff)
		}
	})

	t.Run("Indexes", func(t *testing.T) {
		var got []string
		err := db.Select(&got, `SELECT CONCAT(index_name, ' ', column_name, ' ', non_unique) FROM information_schema.statistics
			WHERE table_schema = DATABASE() AND table_name = 'jobs' ORDER BY index_name, seq_in_index`) // case-insensitive order, as in MySQL
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"idx_jobs_created created_at 1", "PRIMARY id 0", "uq_jobs_claim claim_number 0", "uq_jobs_job_no job_no 0"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("indexes (-want +got):\n%s", diff)
		}
	})

	t.Run("AutoIncrementAndNullableUnique", func(t *testing.T) {
		for i, job := range []string{"RO-1", "RO-2", "RO-3"} {
			res, err := db.Exec(`INSERT INTO jobs (job_no, claim_number, created_at) VALUES (?, NULL, ?)`, job, t0)
			if err != nil {
				t.Fatalf("insert %s with NULL claim: %v", job, err)
			}
			if id, _ := res.LastInsertId(); id != int64(i+1) {
				t.Errorf("LastInsertId = %d, want %d", id, i+1)
			}
		}
		var nulls int
		if err := db.Get(&nulls, `SELECT COUNT(*) FROM jobs WHERE claim_number IS NULL`); err != nil || nulls != 3 {
			t.Errorf("rows with NULL in the unique column: %d (%v), want 3", nulls, err)
		}
	})

	t.Run("CreateAndDropDatabase", func(t *testing.T) {
		mustExec(t, db, "CREATE DATABASE qstest_probe", "CREATE TABLE qstest_probe.t (id INT PRIMARY KEY)",
			"CREATE TABLE qstest_probe.c (id INT PRIMARY KEY, t_id INT NULL, CONSTRAINT c_t FOREIGN KEY (t_id) REFERENCES qstest_probe.t (id))",
			"INSERT INTO qstest_probe.t VALUES (1)", "INSERT INTO qstest_probe.c VALUES (1, 1)")
		_, err := db.Exec("INSERT INTO qstest_probe.c VALUES (2, 2)")
		if got := mysqlErr(t, err).Number; got != 1452 {
			t.Errorf("row breaking the foreign key: error %d, want 1452", got)
		}
		mustExec(t, db, "DROP DATABASE qstest_probe")
		var n int
		if err := db.Get(&n, `SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'qstest_probe'`); err != nil || n != 0 {
			t.Errorf("dropped database still listed: %d (%v)", n, err)
		}
	})
}
