package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

// newerQuotesync makes the state tables of db look migrated by a newer
// quotesync: a version row past the latest this code knows.
func newerQuotesync(t *testing.T, d *shopdbtest.Database, db *shopdb.DB) (cur, latest int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, latest, err := store.New(db).SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	table := "`" + db.Config().TablePrefix + "schema`"
	if _, err := d.SQL.ExecContext(ctx, "INSERT INTO "+table+" (version, name, applied_at) VALUES (?, 'from_a_newer_quotesync', NOW())", latest+1); err != nil {
		t.Fatal(err)
	}
	return latest + 1, latest
}

// TestNewerSchemaBinary: every verb refuses a state schema a newer
// quotesync migrated, with exit 1 and the advice to upgrade (check fails
// its state schema line); nothing is written.
func TestNewerSchemaBinary(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, nil)
	db := e.DB.Open(t, e.DB.Config())
	newerQuotesync(t, e.DB, db)
	const want = "a newer quotesync migrated this database"
	for _, args := range [][]string{{"once", "--dry-run"}, {"once"}, {"status"}, {"retry", "17"}} {
		r := e.run(append([]string{args[0], "--config", e.Conf}, args[1:]...)...)
		name := strings.Join(args, " ")
		if r.Code != exitFailure {
			t.Errorf("%s: exit %d, want 1:\n%s", name, r.Code, r)
		}
		if !strings.Contains(r.Stderr, want) || !strings.Contains(r.Stderr, "upgrade quotesync") {
			t.Errorf("%s: stderr lacks %q and the advice to upgrade:\n%s", name, want, r)
		}
	}
	r := e.run("check", "--config", e.Conf)
	if l := checkLine(r.Stdout, "state schema"); r.Code != exitFailure || !strings.HasPrefix(l, "FAIL") || !strings.Contains(l, "upgrade quotesync") {
		t.Errorf("check: state schema line %q:\n%s", l, r)
	}
	// check lists the requests (a read); nothing else may call the service.
	for route, n := range e.Emu.Calls() {
		if route != emulator.RouteListRequests && n > 0 {
			t.Errorf("%d calls to %s with a newer schema, want none", n, route)
		}
	}
}
