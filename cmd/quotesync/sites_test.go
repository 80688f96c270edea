package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
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
