package store

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/internal/server"
)

// migrations/NNNN_name.sql: one DDL statement per file (MariaDB and MySQL
// commit DDL implicitly, so a step cannot be transactional), "{{prefix}}"
// replaced by the table prefix. A step that fails with "already exists"
// (table, column, key) or "cannot drop" counts as applied: that is a
// previous run that died between the DDL and its version row. pressly/goose
// and golang-migrate were weighed: after a DDL whose version row a crash
// lost, goose fails on "already exists" and golang-migrate on its dirty
// flag until a person steps in.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations(prefix string) ([]migration, error) {
	entries, err := migrationFiles.ReadDir("migrations")
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".sql")
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("read embedded migration %s: name is not NNNN_name.sql", e.Name())
		}
		b, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read embedded migration %s: %w", e.Name(), err)
		}
		ms = append(ms, migration{version: v, name: name, sql: strings.ReplaceAll(string(b), "{{prefix}}", prefix)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return cmp.Compare(a.version, b.version) })
	for i := range ms {
		if ms[i].version != i+1 {
			return nil, fmt.Errorf("read embedded migrations: versions are not 1..%d without gaps", len(ms))
		}
	}
	return ms, nil
}

// SchemaVersion returns the version of the state tables in the database (0
// before the first Migrate) and the latest this code knows.
func (st *Store) SchemaVersion(ctx context.Context) (current, latest int, err error) {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	ms, err := loadMigrations(st.cfg.TablePrefix)
	if err != nil {
		return 0, 0, err
	}
	current, err = st.currentVersion(ctx, st.x)
	if err != nil {
		return 0, len(ms), fmt.Errorf("read schema version: %w", err)
	}
	return current, len(ms), nil
}

func (st *Store) currentVersion(ctx context.Context, x queryer) (int, error) {
	rows, err := x.QueryContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM "+st.t.schema)
	if mysqlErrno(err) == errNoSuchTable {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	// Zero rows (go-mysql-server's answer on an empty table) is version 0.
	var v int
	if rows.Next() {
		if err := rows.Scan(&v); err != nil {
			return 0, err
		}
	}
	return v, rows.Err()
}

// Migrate brings the state tables to the latest version. It is idempotent,
// and two daemons starting at once take turns (GET_LOCK). ErrSchemaTooNew
// when the tables were migrated by a newer quotesync: that database must
// not be used by this one.
func (st *Store) Migrate(ctx context.Context) error {
	ms, err := loadMigrations(st.cfg.TablePrefix)
	if err != nil {
		return err
	}
	conn, err := st.x.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrate state tables: %w", err)
	}
	defer conn.Close()
	lock := server.LockName(st.cfg.LockName + ".migrate")
	wait := st.cfg.QueryTimeout
	var got sql.NullInt64
	lctx, cancel := context.WithTimeout(ctx, wait+5*time.Second)
	err = conn.QueryRowContext(lctx, "SELECT GET_LOCK(?, ?)", lock, int(wait.Seconds())).Scan(&got)
	cancel()
	if err != nil {
		return fmt.Errorf("migrate state tables: take lock %s: %w", lock, err)
	}
	if !got.Valid || got.Int64 != 1 {
		return fmt.Errorf("migrate state tables: lock %s still held by another migration after %s", lock, wait)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		var freed sql.NullInt64
		if err := conn.QueryRowContext(rctx, "SELECT RELEASE_LOCK(?)", lock).Scan(&freed); err != nil {
			// Drop the session rather than pool it with the lock held.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	if err := st.migrateLocked(ctx, conn, ms); err != nil {
		return fmt.Errorf("migrate state tables: %w", explainMigrate(err, st.cfg))
	}
	return nil
}

func (st *Store) migrateLocked(ctx context.Context, conn *sql.Conn, ms []migration) error {
	_, err := conn.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+st.t.schema+
		" (version INT NOT NULL, name VARCHAR(255) NOT NULL, applied_at DATETIME(6) NOT NULL, PRIMARY KEY (version))"+
		" ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin")
	if err != nil {
		return fmt.Errorf("create %s: %w", st.t.schema, err)
	}
	cur, err := st.currentVersion(ctx, conn)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if cur > len(ms) {
		return fmt.Errorf("tables %s* are at version %d, this quotesync knows up to %d: %w", st.cfg.TablePrefix, cur, len(ms), ErrSchemaTooNew)
	}
	for _, m := range ms[cur:] {
		if _, err := conn.ExecContext(ctx, m.sql); err != nil && !alreadyApplied(err) {
			return fmt.Errorf("apply %s: %w", m.name, err)
		}
		_, err := conn.ExecContext(ctx, "INSERT INTO "+st.t.schema+" (version, name, applied_at) VALUES (?, ?, ?)",
			m.version, m.name, now())
		if err != nil {
			return fmt.Errorf("record %s: %w", m.name, err)
		}
	}
	return nil
}

// alreadyApplied: the DDL's effect is already there.
func alreadyApplied(err error) bool {
	switch mysqlErrno(err) {
	case errTableExists, errDupFieldName, errDupKeyName, errCantDropKey:
		return true
	}
	return false
}

// explainMigrate adds what a failed migration needs.
func explainMigrate(err error, c shopdb.Config) error {
	switch {
	case errors.Is(err, ErrSchemaTooNew):
		return fmt.Errorf("%w; a newer quotesync migrated this database: upgrade quotesync on this machine to that version (or newer) before running it again", err)
	case mysqlErrno(err) == server.ErrTableAccessDenied:
		return fmt.Errorf("%w; the database user needs CREATE, ALTER and INDEX on %s for its own tables (%s*): GRANT CREATE, ALTER, INDEX, SELECT, INSERT, UPDATE ON `%s`.* TO '%s'@…", err, c.Database, c.TablePrefix, c.Database, c.User)
	}
	return err
}
