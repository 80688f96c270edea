package main

import (
	"cmp"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/shopdb"
)

// TestInvalidRemoteSettingBinary: with remote.draft_update: patch, once,
// run and check exit 2 naming the key, before the database is touched:
// no state table exists afterwards (run used to migrate, then exit 1, and
// systemd restarted it in a loop).
func TestInvalidRemoteSettingBinary(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, func(fc *config.File) { fc.Remote.DraftUpdate = "patch" })
	const want = `remote.draft_update: "patch" must be repost or put`
	for _, args := range [][]string{{"once"}, {"once", "--dry-run"}, {"run"}, {"check"}} {
		r := e.run(append(args, "--config", e.Conf)...)
		name := strings.Join(args, " ")
		if r.Code != exitUsage {
			t.Errorf("%s: exit %d, want 2:\n%s", name, r.Code, r)
		}
		if out := r.Stdout + r.Stderr; !strings.Contains(out, want) || strings.Contains(out, "DraftUpdate") {
			t.Errorf("%s: output does not name the key as %q:\n%s", name, want, r)
		}
		if args[0] == "check" {
			if l := checkLine(r.Stdout, "config file"); !strings.HasPrefix(l, "FAIL") {
				t.Errorf("check: config file line %q, want FAIL", l)
			}
		}
	}
	fc, err := config.Load(e.Conf)
	if err != nil {
		t.Fatal(err)
	}
	prefix := cmp.Or(fc.Shop.TablePrefix, shopdb.DefaultTablePrefix)
	stateTables := func() int {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var n int
		err := e.DB.SQL.GetContext(ctx, &n, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = ? AND table_name LIKE ?",
			e.DB.Name, strings.ReplaceAll(prefix, "_", `\_`)+"%")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := stateTables(); n != 0 {
		t.Errorf("%d state tables (%s*) exist after the refused starts, want none", n, prefix)
	}
	// The count sees the tables once they exist.
	cfg := e.DB.Config()
	cfg.TablePrefix = prefix
	e.DB.Open(t, cfg)
	if n := stateTables(); n == 0 {
		t.Errorf("no state tables (%s*) counted after a migration", prefix)
	}
}
