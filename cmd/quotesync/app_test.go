package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// newerQuotesync makes the state tables of db look migrated by a newer
// quotesync: a version row past the latest this code knows.
func newerQuotesync(t *testing.T, d *shopdbtest.Database, db *shopdb.DB) (cur, latest int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, latest, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	table := "`" + db.Config().TablePrefix + "schema`"
	if _, err := d.SQL.ExecContext(ctx, "INSERT INTO "+table+" (version, name, applied_at) VALUES (?, 'from_a_newer_quotesync', NOW())", latest+1); err != nil {
		t.Fatal(err)
	}
	return latest + 1, latest
}

// TestPrepareSchema: without migration, prepareSchema (dry run) accepts
// current tables, explains missing ones, and refuses tables a newer
// quotesync migrated, saying to upgrade; with migration it refuses them
// with the same advice.
func TestPrepareSchema(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	empty := shopdbtest.NewDatabase(t)
	edb, err := shopdb.Open(ctx, empty.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer edb.Close()
	if err := (&app{db: edb}).prepareSchema(ctx, false); err == nil || !strings.Contains(err.Error(), "do not exist yet") {
		t.Errorf("prepareSchema on a database without state tables = %v, want 'do not exist yet'", err)
	}

	db, d := shopdbtest.New(t)
	a := &app{db: db}
	if err := a.prepareSchema(ctx, false); err != nil {
		t.Fatalf("prepareSchema on current tables: %v", err)
	}
	cur, latest := newerQuotesync(t, d, db)
	for _, migrate := range []bool{false, true} {
		err := a.prepareSchema(ctx, migrate)
		if !errors.Is(err, shopdb.ErrSchemaTooNew) {
			t.Fatalf("prepareSchema(migrate=%t) on version %d (latest %d) = %v, want ErrSchemaTooNew", migrate, cur, latest, err)
		}
		for _, w := range []string{"a newer quotesync migrated this database", "upgrade quotesync"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("prepareSchema(migrate=%t) error %q lacks %q", migrate, err, w)
			}
		}
	}
	if got, _, err := db.SchemaVersion(ctx); err != nil || got != cur {
		t.Errorf("schema version after the refusals = %d, %v; want %d untouched", got, err, cur)
	}
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
