package store_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

// markerRow is what UpdateMarkers writes of a row.
type markerRow struct {
	Marker    string    `db:"pushed_marker"`
	Version   int64     `db:"version"`
	UpdatedAt time.Time `db:"updated_at"`
}

// rowsAt is the time insertRows gives the rows' updated_at.
var rowsAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// insertRows adds drafted rows with ids at version 1, many per statement
// (Insert would take a transaction each, and refuses ids longer than 64
// bytes, which the column holds).
func insertRows(tb testing.TB, d *shopdbtest.Database, ids []string) {
	tb.Helper()
	for len(ids) > 0 {
		batch := ids[:min(len(ids), 1000)]
		ids = ids[len(batch):]
		args := make([]any, 0, 3*len(batch))
		for _, id := range batch {
			args = append(args, id, rowsAt, rowsAt)
		}
		q := "INSERT INTO quotesync_requests (insurer, request_id, phase, created_at, updated_at) VALUES " +
			strings.TrimSuffix(strings.Repeat("('default', ?, 'drafted', ?, ?), ", len(batch)), ", ")
		if _, err := d.SQL.Exec(q, args...); err != nil {
			tb.Fatalf("insert %d rows: %v", len(batch), err)
		}
	}
}

// markerRows reads every row's marker, version and updated_at by id.
func markerRows(tb testing.TB, d *shopdbtest.Database) map[string]markerRow {
	tb.Helper()
	var rows []struct {
		ID string `db:"request_id"`
		markerRow
	}
	if err := d.SQL.Select(&rows, "SELECT request_id, pushed_marker, version, updated_at FROM quotesync_requests"); err != nil {
		tb.Fatal(err)
	}
	out := make(map[string]markerRow, len(rows))
	for _, r := range rows {
		r.UpdatedAt = r.UpdatedAt.UTC()
		out[r.ID] = r.markerRow
	}
	return out
}

// moveVersions bumps the version of the rows with ids, as a concurrent
// writer would.
func moveVersions(tb testing.TB, d *shopdbtest.Database, ids []string) {
	tb.Helper()
	for _, id := range ids {
		if _, err := d.SQL.Exec("UPDATE quotesync_requests SET version = version + 1 WHERE request_id = ?", id); err != nil {
			tb.Fatal(err)
		}
	}
}

// checkMarkers fails unless every row in us whose id is not in moved holds
// its marker at its version+1, written at or after since, and every other
// row is as insertRows left it (moved rows one version on).
func checkMarkers(tb testing.TB, d *shopdbtest.Database, us []store.MarkerUpdate, moved map[string]bool, since time.Time) {
	tb.Helper()
	got := markerRows(tb, d)
	want := map[string]markerRow{}
	for id := range got {
		want[id] = markerRow{Version: 1, UpdatedAt: rowsAt}
	}
	for id := range moved {
		want[id] = markerRow{Version: 2, UpdatedAt: rowsAt}
	}
	for _, u := range us {
		if _, ok := got[u.RequestID]; ok && !moved[u.RequestID] {
			want[u.RequestID] = markerRow{Marker: u.Marker, Version: u.Version + 1}
		}
	}
	bad := 0
	for id, w := range want {
		g := got[id]
		ok := g.Marker == w.Marker && g.Version == w.Version
		if w.UpdatedAt.IsZero() {
			ok = ok && !g.UpdatedAt.Before(since.Truncate(time.Microsecond))
		} else {
			ok = ok && g.UpdatedAt.Equal(w.UpdatedAt)
		}
		if !ok {
			if bad++; bad <= 5 {
				tb.Errorf("row %q = %q at version %d, updated %s; want %q at version %d (updated_at %v)",
					id, g.Marker, g.Version, g.UpdatedAt, w.Marker, w.Version, w.UpdatedAt)
			}
		}
	}
	if bad > 5 {
		tb.Errorf("… and %d more rows wrong", bad-5)
	}
}

// markerUpdates is one update per id at version 1, the marker made by
// marker.
func markerUpdates(ids []string, marker func(i int) string) []store.MarkerUpdate {
	us := make([]store.MarkerUpdate, len(ids))
	for i, id := range ids {
		us[i] = store.MarkerUpdate{RequestID: id, Version: 1, Marker: marker(i)}
	}
	return us
}

func seqIDs(n int, format string) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf(format, i)
	}
	return ids
}

// TestUpdateMarkersOneStatement: 10,000 markers, as the sample mapping
// makes them, go in one statement, and the rows whose version moved
// meanwhile are neither written nor counted.
func TestUpdateMarkersOneStatement(t *testing.T) {
	db, d := newStore(t)
	ctx := testContext(t)
	ids := seqIDs(10000, "req-%05d")
	insertRows(t, d, ids)
	moved := map[string]bool{}
	var movedIDs []string
	for i := 0; i < len(ids); i += 73 {
		moved[ids[i]] = true
		movedIDs = append(movedIDs, ids[i])
	}
	moveVersions(t, d, movedIDs)
	us := markerUpdates(ids, func(i int) string {
		return fmt.Sprintf("DRAFT|2026-11-02 09:30:%02d.%06d|30|2026-11-02 09:30:15.123456", i%60, i)
	})

	start, n := time.Now(), trips(db)
	written, err := db.UpdateMarkers(ctx, us)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(ids) - len(moved); written != want {
		t.Errorf("written %d, want %d (%d rows at another version left alone)", written, want, len(moved))
	}
	if got := n(); got != 1 {
		t.Errorf("UpdateMarkers of 10,000 rows cost %d round trips, want 1", got)
	}
	if store.MarkersByCase(db.Store) {
		t.Error("UpdateMarkers fell back to CASE statements on MariaDB")
	}
	if got := store.MarkerBytes(db.Store); got != 0 {
		t.Errorf("asked the server's max_allowed_packet (bound %d) for a statement under 1 MiB", got)
	}
	checkMarkers(t, d, us, moved, start)
}

// TestUpdateMarkersAsksPacketOnce: a statement over 1 MiB asks the server
// its max_allowed_packet, once, and stays within half of it.
func TestUpdateMarkersAsksPacketOnce(t *testing.T) {
	db, d := newStore(t)
	ctx := testContext(t)
	ids := seqIDs(10000, "request-%05d-0123456789abcdef0123456789abcdef")
	insertRows(t, d, ids)
	us := markerUpdates(ids, func(i int) string { return fmt.Sprintf("%05d|%s", i, strings.Repeat("m", 150)) })
	var packet int
	if err := d.SQL.Get(&packet, "SELECT @@max_allowed_packet"); err != nil {
		t.Fatal(err)
	}
	wantBytes := min(packet/2, 16<<20)
	if chunks := store.MarkerChunks(db.Store, us, 1<<20); chunks < 2 {
		t.Fatalf("the test's markers fit in 1 MiB (%d statement): make them longer", chunks)
	}
	chunks := store.MarkerChunks(db.Store, us, wantBytes)

	start, n := time.Now(), trips(db)
	written, err := db.UpdateMarkers(ctx, us)
	if err != nil {
		t.Fatal(err)
	}
	if written != len(us) {
		t.Errorf("written %d, want %d", written, len(us))
	}
	if got := n(); got != int64(1+chunks) {
		t.Errorf("first UpdateMarkers over 1 MiB cost %d round trips, want %d (the question, then %d statements)", got, 1+chunks, chunks)
	}
	if got := store.MarkerBytes(db.Store); got != wantBytes {
		t.Errorf("statement bound %d bytes, want %d (half the server's max_allowed_packet %d, at most 16 MiB)", got, wantBytes, packet)
	}
	checkMarkers(t, d, us, nil, start)

	for i := range us {
		us[i].Version++
		us[i].Marker += "+"
	}
	n = trips(db)
	if written, err := db.UpdateMarkers(ctx, us); err != nil || written != len(us) {
		t.Fatalf("second UpdateMarkers: written %d, %v; want %d", written, err, len(us))
	}
	if got := n(); got != int64(chunks) {
		t.Errorf("second UpdateMarkers cost %d round trips, want %d: the server is asked once", got, chunks)
	}
}

// TestUpdateMarkersSplit: past the byte bound the rows are split over as
// few statements as fit, and a version conflict in any of them is left
// alone.
func TestUpdateMarkersSplit(t *testing.T) {
	db, d := newStore(t)
	ctx := testContext(t)
	ids := seqIDs(3000, "split-%04d")
	insertRows(t, d, ids)
	moved := map[string]bool{ids[0]: true, ids[1499]: true, ids[2999]: true}
	moveVersions(t, d, []string{ids[0], ids[1499], ids[2999]})
	// Quotes and backslashes are escaped in the statement: they count
	// twice towards the bound.
	us := markerUpdates(ids, func(i int) string { return fmt.Sprintf(`m"%d'\%s`, i, strings.Repeat(`"`, i%40)) })
	const limit = 16 << 10
	store.SetMarkerBytes(db.Store, limit)
	chunks := store.MarkerChunks(db.Store, us, limit)
	if chunks < 10 {
		t.Fatalf("%d statements of %d bytes: the test wants more", chunks, limit)
	}

	start, n := time.Now(), trips(db)
	written, err := db.UpdateMarkers(ctx, us)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(ids) - len(moved); written != want {
		t.Errorf("written %d, want %d", written, want)
	}
	if got := n(); got != int64(chunks) {
		t.Errorf("UpdateMarkers cost %d round trips, want %d statements of at most %d bytes", got, chunks, limit)
	}
	checkMarkers(t, d, us, moved, start)
}

// trickyIDs are request ids the column holds, each with a marker.
var trickyIDs = []struct{ id, marker string }{
	{`it's`, `it's`},
	{`say "hi"`, `"quoted" and 'single'`},
	{`back\slash`, `\\ \' \" \n \u0000`},
	{`ends with \`, `ends with \`},
	{`?`, `? ?? (?, ?)`},
	{`-- comment`, `/* not a comment */ # nor this`},
	{"nul\x00in", "nul\x00in marker"},
	{"ctrl\n\r\t\x1a", "ctrl\n\r\t\x1a\x01\x1f\x7f"},
	{"é", "Ünïcödé ∑ 中文 \u2028\u2029 \ufeff"},
	{"e", "plain e (é differs in utf8mb4_bin)"},
	{"😀", "😀 astral 𝄞"},
	{"abc", "lower"},
	{"ABC", "upper"},
	{`["x",1,"y"]`, `[["json",1,"inside"]]`},
	{`$[0]`, `$[*]`},
	{strings.Repeat("😀", 64), strings.Repeat("𝄞", 255)}, // the columns' full lengths, 4 bytes a character
	{strings.Repeat("x", 64), strings.Repeat("'", 255)},
	{"", "an empty id"},
}

// markerForms runs f on UpdateMarkers' JSON statement and on its CASE
// fallback, each with a fresh database.
func markerForms(t *testing.T, f func(t *testing.T, db testDB, d *shopdbtest.Database)) {
	t.Run("JSON", func(t *testing.T) {
		db, d := newStore(t)
		f(t, db, d)
		if store.MarkersByCase(db.Store) {
			t.Error("fell back to CASE statements on MariaDB")
		}
	})
	t.Run("CASE", func(t *testing.T) {
		db, d := newStore(t)
		refuseJSON(db)
		f(t, db, d)
		if !store.MarkersByCase(db.Store) {
			t.Error("did not fall back to CASE statements")
		}
	})
}

// refuseJSON makes the server refuse UpdateMarkers' statement, as a server
// without JSON_TABLE does.
func refuseJSON(db testDB) {
	store.EditMarkerSQL(db.Store, func(q string) string { return strings.Replace(q, "JSON_TABLE(", "JSON_TABLE_MISSING(", 1) })
}

// TestUpdateMarkersStrings: ids and markers are any text the columns hold,
// compared as the primary key compares them.
func TestUpdateMarkersStrings(t *testing.T) {
	markerForms(t, func(t *testing.T, db testDB, d *shopdbtest.Database) {
		ctx := testContext(t)
		var ids []string
		var us []store.MarkerUpdate
		for _, c := range trickyIDs {
			ids = append(ids, c.id)
			if c.id != "ABC" { // only "abc" is written
				us = append(us, store.MarkerUpdate{RequestID: c.id, Version: 1, Marker: c.marker})
			}
		}
		insertRows(t, d, ids)
		// Ids no row has: one that is a row's id and one more character
		// (a cut to the column's 64 would match it), an unknown one.
		us = append(us,
			store.MarkerUpdate{RequestID: strings.Repeat("x", 64) + "y", Version: 1, Marker: "cut"},
			store.MarkerUpdate{RequestID: "nobody", Version: 1, Marker: "none"})
		start := time.Now()
		written, err := db.UpdateMarkers(ctx, us)
		if err != nil {
			t.Fatal(err)
		}
		if want := len(trickyIDs) - 1; written != want {
			t.Errorf("written %d, want %d", written, want)
		}
		checkMarkers(t, d, us, nil, start)
	})
}

// TestUpdateMarkersTooLong: a marker longer than the column is refused as
// Update refuses it, and nothing of its statement is written.
func TestUpdateMarkersTooLong(t *testing.T) {
	markerForms(t, func(t *testing.T, db testDB, d *shopdbtest.Database) {
		ctx := testContext(t)
		insertRows(t, d, []string{"a", "b"})
		us := []store.MarkerUpdate{
			{RequestID: "a", Version: 1, Marker: "fine"},
			{RequestID: "b", Version: 1, Marker: strings.Repeat("m", 256)},
		}
		written, err := db.UpdateMarkers(ctx, us)
		if !shopdb.IsTooLong(err) || written != 0 {
			t.Errorf("UpdateMarkers with a 256-character marker = %d, %v; want 0 and the server's data too long", written, err)
		}
		checkMarkers(t, d, nil, nil, time.Now())
	})
}

// TestUpdateMarkersEmpty: nothing to write costs nothing.
func TestUpdateMarkersEmpty(t *testing.T) {
	db, _ := newStore(t)
	ctx := testContext(t)
	n := trips(db)
	for _, us := range [][]store.MarkerUpdate{nil, {}} {
		if written, err := db.UpdateMarkers(ctx, us); written != 0 || err != nil {
			t.Errorf("UpdateMarkers(%#v) = %d, %v; want 0, nil", us, written, err)
		}
	}
	if got := n(); got != 0 {
		t.Errorf("UpdateMarkers of nothing cost %d round trips, want 0", got)
	}
}

// TestUpdateMarkersFallback: a server that refuses the JSON_TABLE
// statement's syntax is asked once; the markers go in CASE statements of
// 500 rows, then and from then on.
func TestUpdateMarkersFallback(t *testing.T) {
	db, d := newStore(t)
	ctx := testContext(t)
	ids := seqIDs(1200, "fb-%04d")
	insertRows(t, d, ids)
	moved := map[string]bool{ids[7]: true, ids[1000]: true}
	moveVersions(t, d, []string{ids[7], ids[1000]})
	us := markerUpdates(ids, func(i int) string { return fmt.Sprint("marker-", i) })
	refuseJSON(db)

	start, n := time.Now(), trips(db)
	written, err := db.UpdateMarkers(ctx, us)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(ids) - len(moved); written != want {
		t.Errorf("written %d, want %d", written, want)
	}
	if got := n(); got != 4 {
		t.Errorf("UpdateMarkers of 1,200 rows cost %d round trips, want 4 (the refused statement, then 3 of 500 rows)", got)
	}
	if !store.MarkersByCase(db.Store) {
		t.Error("MarkersByCase false after the server refused the statement")
	}
	checkMarkers(t, d, us, moved, start)

	for i := range us {
		us[i].Version++ // every row is at version 2 now, the moved ones too
	}
	n = trips(db)
	if written, err := db.UpdateMarkers(ctx, us); err != nil || written != len(us) {
		t.Errorf("second UpdateMarkers: written %d, %v; want %d", written, err, len(us))
	}
	if got := n(); got != 3 {
		t.Errorf("second UpdateMarkers cost %d round trips, want 3: the refused statement is not sent again", got)
	}
}

// TestUpdateMarkersNotText: a marker that is not UTF-8 (a binary column's
// bytes) is refused, naming the request and the fix, before anything is
// written; an id that is not UTF-8 is no row's and is not written.
func TestUpdateMarkersNotText(t *testing.T) {
	markerForms(t, func(t *testing.T, db testDB, d *shopdbtest.Database) {
		ctx := testContext(t)
		insertRows(t, d, []string{"a", "b"})
		written, err := db.UpdateMarkers(ctx, []store.MarkerUpdate{
			{RequestID: "a", Version: 1, Marker: "fine"},
			{RequestID: "b", Version: 1, Marker: "md5 \xe2\x82\xff"},
		})
		if written != 0 || err == nil || !strings.Contains(err.Error(), "request b: marker") ||
			!strings.Contains(err.Error(), "estimate_state return text") {
			t.Errorf("UpdateMarkers with a binary marker = %d, %v; want 0 and an error naming request b and the fix", written, err)
		}
		checkMarkers(t, d, nil, nil, time.Now())

		us := []store.MarkerUpdate{
			{RequestID: "a\xff", Version: 1, Marker: "no such row"},
			{RequestID: "a", Version: 1, Marker: "fine"},
			{RequestID: "\xe2\x82", Version: 1, Marker: "nor this"},
			{RequestID: "b", Version: 1, Marker: "fine too"},
		}
		start := time.Now()
		if written, err := db.UpdateMarkers(ctx, us); written != 2 || err != nil {
			t.Errorf("UpdateMarkers with ids that are not UTF-8 = %d, %v; want the 2 others written", written, err)
		}
		checkMarkers(t, d, us, nil, start)
	})
}
