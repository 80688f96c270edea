package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"go.yaml.in/yaml/v3"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// serverAdmin is a pool on the test server with no current database: its
// own connections are in no schema's count.
func serverAdmin(tb testing.TB) *sqlx.DB {
	tb.Helper()
	admin, err := sqlx.Open("mysql", shopdbtest.DSN(tb, ""))
	if err != nil {
		tb.Fatal(err)
	}
	admin.SetMaxIdleConns(1)
	tb.Cleanup(func() { admin.Close() })
	return admin
}

// schemaConns returns how many server connections have schema as their
// current database.
func schemaConns(ctx context.Context, tb testing.TB, admin *sqlx.DB, schema string) int {
	tb.Helper()
	var n int
	if err := admin.GetContext(ctx, &n, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = ?", schema); err != nil {
		tb.Fatal(err)
	}
	return n
}

// TestIdleSiteConnections: a busy first pass opens several pooled
// connections (accepts run side by side); once the daemon is idle it
// holds at most two, its lock's session and one pooled connection
// (shop.conn_max_idle_time closes the rest), which is what a database
// server shared by many sites can count on.
func TestIdleSiteConnections(t *testing.T) {
	e := newE2E(t, e2eOptions{Concurrency: 8, Schedule: "@every 1h", LogLevel: "debug"})
	const idle = 2 * time.Second
	e2eConfigure(e, func(doc map[string]any) {
		doc["shop"].(map[string]any)["conn_max_idle_time"] = idle.String()
	})
	for i := range 24 {
		e.seed(fmt.Sprintf("IDLE-%02d", i), fmt.Sprintf("IDL%03d", i))
	}
	admin := serverAdmin(t)
	e.DB.SQL.SetMaxIdleConns(0) // the test's own pool on the schema holds none
	p := e.start("run")
	busy := 0
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(p.out.String(), `"pass done"`) {
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("no pass done within a minute:\n%s", e2eTail(p.out.String(), 20))
		}
		busy = max(busy, schemaConns(e.ctx(), t, admin, e.DB.Name))
		time.Sleep(5 * time.Millisecond)
	}
	if busy <= 2 {
		t.Fatalf("the busy pass held at most %d connections: it opened no surplus for the idle pool to close, so this test shows nothing", busy)
	}
	// database/sql's cleaner closes a connection idle for longer than
	// conn_max_idle_time within about as long again.
	time.Sleep(3 * idle)
	got := schemaConns(e.ctx(), t, admin, e.DB.Name)
	t.Logf("connections: %d during the busy pass, %d idle", busy, got)
	if got > 2 {
		t.Errorf("an idle site holds %d connections, want at most 2 (its lock's session and one pooled)", got)
	}
	if code := p.stop(30 * time.Second); code != 0 {
		t.Fatalf("quotesync run: exit %d\n%s", code, e2eTail(p.out.String(), 20))
	}
}

// TestCheckOtherSites: check compares its file with the other
// configurations of the host (the single unit's config.yaml and the
// template's sites/*.yaml): a site in its own schema passes; one that
// would share the state tables or the lock fails, naming the file and
// the fix; the installed example is left out; a file that does not parse
// is a warning.
func TestCheckOtherSites(t *testing.T) {
	e := newCLIEnv(t, nil)
	e.DB.Open(t, e.DB.Config())
	sites := filepath.Join(filepath.Dir(e.Conf), "sites")
	if err := os.Mkdir(sites, 0o755); err != nil {
		t.Fatal(err)
	}
	other := shopdbtest.NewDatabase(t).Name
	sibling := func(name string, edit func(fc *config.File)) {
		fc := loadExample(t)
		fc.Shop.Addr, fc.Shop.User, fc.Shop.Database = e.DB.Config().Addr, e.DB.Config().User, other
		fc.Remote.BaseURL = "https://insurer.test"
		edit(fc)
		data, err := yaml.Marshal(fc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sites, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(t *testing.T, wantCode int, wantStatus string, want ...string) {
		t.Helper()
		r := e.run("check", "--config", e.Conf)
		l := checkLine(r.Stdout, checkSitesName)
		if r.Code != wantCode || !strings.HasPrefix(l, wantStatus) {
			t.Fatalf("exit %d, %q line %q; want exit %d and %s\n%s", r.Code, checkSitesName, l, wantCode, wantStatus, r.Stdout)
		}
		for _, w := range want {
			if !strings.Contains(r.Stdout, w) {
				t.Errorf("output does not say %q:\n%s", w, r.Stdout)
			}
		}
	}
	lock := "quotesync." + e.DB.Name + ".quotesync_"

	t.Run("Alone", func(t *testing.T) { check(t, exitOK, "ok", "no other configuration in") })
	t.Run("OwnSchema", func(t *testing.T) {
		sibling("south.yaml", func(*config.File) {})
		check(t, exitOK, "ok", "none of 1 other configuration on this host shares them", "lock "+lock)
	})
	t.Run("SameSchema", func(t *testing.T) {
		sibling("east.yaml", func(fc *config.File) { fc.Shop.Database = e.DB.Name })
		check(t, exitFailure, "FAIL", filepath.Join(sites, "east.yaml")+": the same state tables", "give one its own shop.table_prefix")
	})
	t.Run("SameSchemaOwnPrefix", func(t *testing.T) {
		sibling("east.yaml", func(fc *config.File) { fc.Shop.Database, fc.Shop.TablePrefix = e.DB.Name, "qs_east_" })
		check(t, exitOK, "ok", "none of 2 other configurations")
	})
	t.Run("SameLockName", func(t *testing.T) {
		sibling("west.yaml", func(fc *config.File) { fc.Shop.LockName = lock })
		check(t, exitFailure, "FAIL", filepath.Join(sites, "west.yaml")+": the same lock ("+lock+")", "leave shop.lock_name unset")
		if err := os.Remove(filepath.Join(sites, "west.yaml")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ExampleLeftOut", func(t *testing.T) {
		sibling("new.yaml", func(fc *config.File) { fc.Shop.Database, fc.Remote.BaseURL = e.DB.Name, "https://api.insurer.example" })
		check(t, exitOK, "ok", "none of 2 other configurations")
	})
	t.Run("Unreadable", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(sites, "broken.yaml"), []byte("shop: [\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		check(t, exitOK, "warn", "not read (fix them, then check again): "+filepath.Join(sites, "broken.yaml"))
	})
	// From a site's side, the single unit's config.yaml one directory up
	// is a sibling too.
	t.Run("FromTheSite", func(t *testing.T) {
		sibling("north.yaml", func(fc *config.File) { fc.Shop.Database = e.DB.Name })
		r := e.run("check", "--config", filepath.Join(sites, "north.yaml"))
		if l := checkLine(r.Stdout, checkSitesName); !strings.HasPrefix(l, "FAIL") || !strings.Contains(r.Stdout, e.Conf+": the same state tables") {
			t.Errorf("check of sites/north.yaml: %q line %q, want it to fail naming %s\n%s", checkSitesName, l, e.Conf, r.Stdout)
		}
	})
}

// TestSiteFlag: --site names the site on every line the daemon logs,
// makes the site's file under /etc/quotesync/sites the default of
// --config and the site's own socket the default of control.socket, and
// refuses a name no site may have.
func TestSiteFlag(t *testing.T) {
	e := newE2E(t, e2eOptions{Schedule: "@every 1h"})
	p := e.start("run", "--site", "north-yard")
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(p.out.String(), `"msg":"leadership acquired"`) {
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("no leadership within a minute:\n%s", e2eTail(p.out.String(), 20))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := p.stop(30 * time.Second); code != 0 {
		t.Fatalf("quotesync run: exit %d\n%s", code, e2eTail(p.out.String(), 20))
	}
	lines := strings.Split(strings.TrimSpace(p.out.String()), "\n")
	for _, l := range lines {
		if !strings.HasPrefix(l, "{") {
			continue // the race detector's or the runtime's own text
		}
		if !strings.Contains(l, `"site":"north-yard"`) {
			t.Errorf("a line without the site: %s", l)
		}
	}
	if len(lines) < 4 {
		t.Errorf("only %d lines:\n%s", len(lines), p.out.String())
	}

	bin := quotesyncBinary(t)
	out, code := runBinary(t, bin, "config", "--site", "north-yard", "--config", e.Conf)
	if code != exitOK || !regexp.MustCompile(`control\.socket\s+/run/quotesync@north-yard/control\.sock\s+default`).MatchString(out) {
		t.Errorf("config --site north-yard: exit %d, want control.socket's default the site's:\n%s", code, out)
	}
	out, code = runBinary(t, bin, "sync-now", "--site", "north-yard", "--config", e.Conf)
	if code != exitFailure || !strings.Contains(out, "/run/quotesync@north-yard/control.sock") {
		t.Errorf("sync-now --site north-yard with no daemon: exit %d, want 1 naming the site's socket:\n%s", code, out)
	}
	out, code = runBinary(t, bin, "status", "--site", "no-such-site-7f3a")
	if code != exitUsage || !strings.Contains(out, "/etc/quotesync/sites/no-such-site-7f3a.yaml") {
		t.Errorf("status --site without --config: exit %d, want 2 naming the site's file:\n%s", code, out)
	}
	out, code = runBinary(t, bin, "check", "--site", "../etc")
	if code != exitUsage || !strings.Contains(out, "a site's name is") {
		t.Errorf("check --site ../etc: exit %d, want 2 and why:\n%s", code, out)
	}
}

// runBinary runs bin with args and returns its output (standard output
// and error) and exit status.
func runBinary(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}
