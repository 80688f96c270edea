package main

import (
	"context"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

// TestMarkersOnEmbeddedServer: GMS refuses the syntax of UpdateMarkers'
// JSON_TABLE statement (its column definitions take no CHARACTER SET or
// COLLATE), so the store writes the markers in CASE statements instead, from
// the first refusal on; the compare-and-set holds on that path too.
func TestMarkersOnEmbeddedServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mc, err := mysql.ParseDSN(mustStartMySQL(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	cfg := sampleshop.Mapping()
	cfg.Addr, cfg.User, cfg.Password, cfg.Database = mc.Addr, mc.User, mc.Passwd, mc.DBName
	cfg.LockWait = -time.Second // the embedded server keeps no lock wait per session
	cfg.Connector = &shopdbtest.Trips{}
	db, err := shopdb.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := store.New(db)
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var us []store.MarkerUpdate
	for _, id := range []string{"r1", "r2", `r'3"\`} {
		r, err := st.Insert(ctx, store.Request{RequestID: id, Phase: "drafted"}, store.Event{})
		if err != nil {
			t.Fatal(err)
		}
		us = append(us, store.MarkerUpdate{RequestID: id, Version: r.Version, Marker: "m'" + id + `"\é`})
	}
	// r2 moves on before the markers are written.
	cur, err := st.Request(ctx, "r2")
	if err != nil {
		t.Fatal(err)
	}
	next := cur
	next.Reason = "moved"
	if _, err := st.Update(ctx, cur, next, store.Event{}); err != nil {
		t.Fatal(err)
	}

	start := shopdbtest.RoundTrips(db)
	written, err := st.UpdateMarkers(ctx, us)
	if err != nil {
		t.Fatalf("UpdateMarkers on the embedded server: %v", err)
	}
	if written != 2 {
		t.Errorf("written %d, want 2 (r2's version moved)", written)
	}
	if got := shopdbtest.RoundTrips(db) - start; got != 2 {
		t.Errorf("UpdateMarkers cost %d round trips, want 2: the refused JSON_TABLE statement, then one CASE statement", got)
	}
	for i, want := range []struct {
		marker  string
		version int64
	}{{us[0].Marker, 2}, {"", 2}, {us[2].Marker, 2}} {
		r, err := st.Request(ctx, us[i].RequestID)
		if err != nil || r.PushedMarker != want.marker || r.Version != want.version {
			t.Errorf("%s = marker %q version %d, %v; want %q at version %d", us[i].RequestID, r.PushedMarker, r.Version, err, want.marker, want.version)
		}
	}

	us[1].Version = 2
	start = shopdbtest.RoundTrips(db)
	if written, err := st.UpdateMarkers(ctx, us[1:2]); written != 1 || err != nil {
		t.Errorf("second UpdateMarkers = %d, %v; want 1", written, err)
	}
	if got := shopdbtest.RoundTrips(db) - start; got != 1 {
		t.Errorf("second UpdateMarkers cost %d round trips, want 1: the refused statement is not sent again", got)
	}
}
