package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

// TestRequestsPage reads a 10,000-row state a page at a time: newest
// first, the quiet reasons left out on request (a supplement kept), in
// one round trip per page whatever the size of the table.
func TestRequestsPage(t *testing.T) {
	ctx := testContext(t)
	db, d := newStore(t)
	// Every 100th row is held, every 250th is a submitted one with a
	// supplement; created one second apart, gen-00001 the oldest.
	const digits = "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"
	_, err := d.SQL.ExecContext(ctx, `INSERT INTO quotesync_requests
(insurer, request_id, claim_number, job_number, phase, reason, supplement_needed, created_at, updated_at, version)
SELECT 'default', CONCAT('gen-', LPAD(i, 5, '0')), CONCAT('CLM-', i), CONCAT('J', i),
  CASE WHEN i % 250 = 0 THEN 'submitted' ELSE 'drafted' END,
  CASE WHEN i % 100 = 0 AND i % 250 <> 0 THEN 'shop_data' ELSE '' END,
  i % 250 = 0, TIMESTAMP('2026-01-01') + INTERVAL i SECOND, NOW(6), 1
FROM (SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 1 AS i FROM `+digits+` a, `+digits+` b, `+digits+` c, `+digits+` e) n`)
	if err != nil {
		t.Fatal(err)
	}
	n := trips(db)
	page, err := db.RequestsPage(ctx, store.PageQuery{Limit: 50, Offset: 100})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(page), 50; got != want {
		t.Fatalf("page of 50 at offset 100: %d rows", got)
	}
	if got, want := page[0].RequestID, "gen-09900"; got != want {
		t.Errorf("first row of the third page = %s, want %s (newest first)", got, want)
	}
	if got := n(); got != 1 {
		t.Errorf("a page took %d round trips, want 1", got)
	}
	if page[0].RequestJSON != nil {
		t.Errorf("a page reads the request's JSON; it should not")
	}

	person, err := db.RequestsPage(ctx, store.PageQuery{Quiet: []store.Reason{""}, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	// 100 rows with i % 100 == 0, of which 20 are supplements (i % 500
	// == 0 is in both), plus 40 - 20 supplements with i % 100 != 0.
	held, supp := 0, 0
	for _, r := range person {
		switch {
		case r.Reason == "shop_data":
			held++
		case r.SupplementNeeded:
			supp++
		default:
			t.Errorf("row %s (reason %q, no supplement) is not quiet, yet listed", r.RequestID, r.Reason)
		}
	}
	if held != 80 || supp != 40 {
		t.Errorf("needs a person: %d held and %d supplements, want 80 and 40", held, supp)
	}

	if _, err := db.RequestsPage(ctx, store.PageQuery{}); err == nil {
		t.Error("a page without a limit was read")
	}
}

// TestEventsForPage: the newest event of each of a page's requests in one
// statement, and the requests of a job number, held or given up.
func TestEventsForPage(t *testing.T) {
	ctx := testContext(t)
	db, _ := newStore(t)
	for i, id := range []string{"r1", "r2", "r3"} {
		r, err := db.Insert(ctx, store.Request{RequestID: id, ClaimNumber: "C" + id, JobNumber: fmt.Sprintf("J%d", i+1), Phase: phReserved},
			store.Event{Kind: "reserved", To: phReserved})
		if err != nil {
			t.Fatal(err)
		}
		if id == "r3" {
			continue // one event only
		}
		next := r
		next.Phase = phAccepted
		if _, err := db.Update(ctx, r, next, store.Event{Kind: "accepted"}); err != nil {
			t.Fatal(err)
		}
	}
	// Another insurer's service uses the id r1 too; its newest event is
	// newer than the first's.
	bb := db.Insurer("bb")
	if _, err := bb.Insert(ctx, store.Request{RequestID: "r1", JobNumber: "JB1", Phase: phReserved},
		store.Event{Kind: "reserved", To: phReserved}); err != nil {
		t.Fatal(err)
	}
	key := func(ins, id string) store.RequestKey { return store.RequestKey{Insurer: ins, RequestID: id} }
	n := trips(db)
	last, err := db.LatestEvents(ctx, []store.RequestKey{key("default", "r1"), key("default", "r3"), key("default", "nobody"), key("bb", "r1")})
	if err != nil {
		t.Fatal(err)
	}
	if got := n(); got != 1 {
		t.Errorf("LatestEvents took %d round trips, want 1", got)
	}
	if len(last) != 3 || last[key("default", "r1")].Kind != "accepted" || last[key("default", "r3")].Kind != "reserved" ||
		last[key("bb", "r1")].Kind != "reserved" || last[key("bb", "r1")].Job != "JB1" {
		t.Errorf("latest events = %+v, want default's r1 accepted, r3 reserved and bb's r1 reserved (job JB1)", last)
	}
	if only, err := db.LatestEvents(ctx, []store.RequestKey{key("default", "r1")}); err != nil || len(only) != 1 || only[key("default", "r1")].Kind != "accepted" {
		t.Errorf("latest events of default's r1 alone = %+v (%v), want its accepted event only", only, err)
	}

	// r2 gives its job up; r4 later gets the same number.
	r2, err := db.Request(ctx, "r2")
	if err != nil {
		t.Fatal(err)
	}
	gave := r2
	gave.Phase, gave.JobNumber, gave.ReleasedJob = phGone, "", r2.JobNumber
	if _, err := db.Update(ctx, r2, gave, store.Event{Kind: "gone"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	if _, err := db.Insert(ctx, store.Request{RequestID: "r4", JobNumber: "J2", Phase: phReserved}, store.Event{Kind: "reserved"}); err != nil {
		t.Fatal(err)
	}
	rs, err := db.RequestsOfJob(ctx, "J2")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].RequestID != "r4" || rs[1].RequestID != "r2" {
		t.Errorf("requests of job J2 = %v, want r4 (holds it) then r2 (gave it up)", rs)
	}
}

// TestPageWithoutStateTables: before the daemon's first start the page's
// reads say so with ErrNoStateTables.
func TestPageWithoutStateTables(t *testing.T) {
	ctx := testContext(t)
	d := shopdbtest.NewSampleShop(t)
	db := unmigrated(t, d.Config())
	if _, err := db.RequestsPage(ctx, store.PageQuery{Limit: 10}); !errors.Is(err, store.ErrNoStateTables) {
		t.Errorf("RequestsPage without tables: %v, want ErrNoStateTables", err)
	}
	if _, err := db.LatestEvents(ctx, []store.RequestKey{{Insurer: "default", RequestID: "x"}}); !errors.Is(err, store.ErrNoStateTables) {
		t.Errorf("LatestEvents without tables: %v, want ErrNoStateTables", err)
	}
}
