package store_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/shopdb/store"
)

// TestMoveInOneTransaction: Move gives rows, their events and deliveries
// to another insurer in one transaction, in statements of a few hundred
// rows: each row's version bumped and its event recorded as the new
// insurer's; a row that changed since it was read (its version) moves
// nothing at all (ErrStale), nor does an id the insurer tracks already
// (ErrExists).
func TestMoveInOneTransaction(t *testing.T) {
	db, d := newStore(t)
	ctx := testContext(t)
	const n = 1201 // three statements of 500 rows
	var vals []string
	for i := range n {
		vals = append(vals, fmt.Sprintf("('old', 'm%d', 'waiting', NOW(6), NOW(6), 4)", i))
	}
	for _, q := range []string{
		"INSERT INTO quotesync_requests (insurer, request_id, phase, created_at, updated_at, version) VALUES " + strings.Join(vals, ", "),
		"INSERT INTO quotesync_events (insurer, request_id, kind, `at`) SELECT insurer, request_id, 'seen', NOW(6) FROM quotesync_requests",
		"INSERT INTO quotesync_outbox (event_id, target, kind, insurer, request_id, `at`, next_attempt_at) SELECT id, 'webhook', 'seen', insurer, request_id, NOW(6), NOW(6) FROM quotesync_events",
	} {
		if _, err := d.SQL.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.ListRequests(ctx, store.ListQuery{Insurer: "old"})
	if err != nil || len(rows) != n {
		t.Fatalf("rows of old: %d, %v", len(rows), err)
	}
	evs := make([]store.Event, n)
	for i := range evs {
		evs[i] = store.Event{Kind: "moved"}
	}
	moved := func() int { return count(t, d, "SELECT COUNT(*) FROM quotesync_requests WHERE insurer = 'new'") }

	// A row that changed since it was read: nothing moves.
	if _, err := d.SQL.ExecContext(ctx, "UPDATE quotesync_requests SET version = 5 WHERE request_id = 'm1200'"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Move(ctx, rows, "new", evs, nil); !errors.Is(err, store.ErrStale) {
		t.Fatalf("Move with a row changed meanwhile: %v, want ErrStale", err)
	}
	// An id the insurer tracks already: nothing moves.
	for i := range rows {
		if rows[i].RequestID == "m1200" {
			rows[i].Version = 5
		}
	}
	if _, err := db.Insurer("new").Insert(ctx, store.Request{RequestID: "m7", Phase: phWaiting}, store.Event{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Move(ctx, rows, "new", evs, nil); !errors.Is(err, store.ErrExists) {
		t.Fatalf("Move over an id the insurer tracks: %v, want ErrExists", err)
	}
	if got := moved(); got != 1 {
		t.Fatalf("%d rows of new after the refused moves, want its own 1", got)
	}
	if _, err := d.SQL.ExecContext(ctx, "DELETE FROM quotesync_requests WHERE insurer = 'new'"); err != nil {
		t.Fatal(err)
	}

	saved, a, err := db.Move(ctx, rows, "new", evs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Requests != n || a.Events != n || a.Deliveries != n || len(saved) != n {
		t.Errorf("moved %+v, %d rows; want %d requests, events and deliveries", a, len(saved), n)
	}
	for _, r := range saved {
		if want := int64(5) + map[bool]int64{true: 1}[r.RequestID == "m1200"]; r.Insurer != "new" || r.Version != want {
			t.Fatalf("%s as stored: insurer %q, version %d; want new, version %d", r.RequestID, r.Insurer, r.Version, want)
		}
	}
	checkStored(t, testDB{Store: db.Insurer("new"), shop: db.shop}, saved[n-1])
	for q, want := range map[string]int{
		"SELECT COUNT(*) FROM quotesync_requests WHERE insurer = 'new' AND version = 5":  n - 1,
		"SELECT COUNT(*) FROM quotesync_events WHERE insurer = 'new' AND kind = 'moved'": n,
		"SELECT COUNT(*) FROM quotesync_events WHERE insurer = 'new' AND kind = 'seen'":  n,
		"SELECT COUNT(*) FROM quotesync_outbox WHERE insurer = 'new'":                    n,
		"SELECT COUNT(*) FROM quotesync_requests WHERE insurer = 'old'":                  0,
		"SELECT COUNT(*) FROM quotesync_events WHERE insurer = 'old'":                    0,
	} {
		if got := count(t, d, q); got != want {
			t.Errorf("%s: %d, want %d", q, got, want)
		}
	}
}
