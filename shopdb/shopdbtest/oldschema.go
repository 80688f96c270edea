package shopdbtest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// BuildSchema creates quotesync's tables (prefix quotesync_) as the
// migrations up to version left them, by applying the store's migration
// files, and records them as applied: the tables an older quotesync left
// behind, for tests of what a newer one does with them.
func (d *Database) BuildSchema(tb testing.TB, version int) {
	tb.Helper()
	_, here, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("shopdbtest: cannot tell where the migration files are")
	}
	files, err := filepath.Glob(filepath.Join(filepath.Dir(here), "..", "store", "migrations", "00*.sql"))
	if err != nil || len(files) < version {
		tb.Fatalf("shopdbtest: migration files: %v, %v; want at least %d", files, err, version)
	}
	sort.Strings(files)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := d.SQL.ExecContext(ctx, "CREATE TABLE quotesync_schema (version INT NOT NULL, name VARCHAR(255) NOT NULL, applied_at DATETIME(6) NOT NULL, PRIMARY KEY (version))"); err != nil {
		tb.Fatalf("shopdbtest: %v", err)
	}
	for v, f := range files[:version] {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatalf("shopdbtest: %v", err)
		}
		if _, err := d.SQL.ExecContext(ctx, strings.ReplaceAll(string(b), "{{prefix}}", "quotesync_")); err != nil {
			tb.Fatalf("shopdbtest: %s: %v", f, err)
		}
		if _, err := d.SQL.ExecContext(ctx, "INSERT INTO quotesync_schema VALUES (?, ?, NOW(6))", v+1, strings.TrimSuffix(filepath.Base(f), ".sql")); err != nil {
			tb.Fatalf("shopdbtest: %v", err)
		}
	}
}
