package store_test

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

func TestUpdateStoresEveryField(t *testing.T) {
	db, _ := newStore(t)
	ctx := testContext(t)
	cur := mustReserve(t, db, newRequest("1", sampleshop.ClaimDraft))

	next := cur
	next.Phase = phDrafted
	next.ResumePhase = phAccepted
	next.PushedHash = "sha256:abc"
	next.PushedMarker = "DRAFT|2025-07-01|4"
	next.SupplementNeeded = true
	next.Attempts = 3
	next.NextAttemptAt = time.Date(2030, 5, 6, 7, 8, 9, 123456789, time.FixedZone("NZST", 12*3600))
	next.LastError = strings.Repeat("é", 3000) + ": the decisive cause" // 6000 bytes: capped, the end kept
	next.PushedAt = time.Now()
	next.SubmittedAt = time.Now().Add(time.Minute)
	next.BookingDate = time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)
	got, err := db.Update(ctx, cur, next, store.Event{Kind: "phase", Message: "drafted"})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if got.Version != cur.Version+1 || got.Phase != phDrafted {
		t.Errorf("returned version %d phase %s, want %d drafted", got.Version, got.Phase, cur.Version+1)
	}
	if len(got.LastError) > 4000 || !strings.Contains(got.LastError, " bytes cut] … ") || !strings.HasSuffix(got.LastError, ": the decisive cause") {
		t.Errorf("last error is %d bytes, want capped at 4000 keeping its end: …%s", len(got.LastError), got.LastError[len(got.LastError)-40:])
	}
	stored, err := db.Request(ctx, "1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, stored); diff != "" {
		t.Errorf("Update's returned row differs from the stored row (-returned +stored):\n%s", diff)
	}
	if !stored.NextAttemptAt.Equal(next.NextAttemptAt.Truncate(time.Microsecond)) {
		t.Errorf("next attempt = %v, want %v", stored.NextAttemptAt, next.NextAttemptAt)
	}
	evs, err := db.Events(ctx, "1", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := store.Event{ID: evs[0].ID, Insurer: shopdb.DefaultInsurer, RequestID: "1", Job: sampleshop.JobDraft, Kind: "phase",
		From: phReserved, To: phDrafted, Message: "drafted", At: got.UpdatedAt}
	if diff := cmp.Diff(want, evs[0]); diff != "" {
		t.Errorf("event (-want +got):\n%s", diff)
	}
}

// TestUpdateCompareAndSet runs two updaters of the same row at once: one
// wins, the other gets ErrStale, and only the winner's event is written.
func TestUpdateCompareAndSet(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	a, b := openStore(t, d, d.Config()), openStore(t, d, d.Config())
	ctx := testContext(t)
	cur := mustReserve(t, a, newRequest("1", sampleshop.ClaimDraft))

	for round := 0; round < 5; round++ {
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, db := range []testDB{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				next := cur
				next.Attempts = cur.Attempts + 1
				next.LastError = "updater " + string(rune('A'+i))
				_, errs[i] = db.Update(ctx, cur, next, store.Event{Kind: "call", Message: next.LastError})
			}()
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, store.ErrStale):
				t.Fatalf("round %d: Update error %v, want nil or ErrStale", round, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d updaters won, want exactly 1 (errors %v)", round, wins, errs)
		}
		var err error
		if cur, err = a.Request(ctx, "1"); err != nil {
			t.Fatal(err)
		}
		if cur.Version != int64(round+2) || cur.Attempts != round+1 {
			t.Fatalf("round %d: version %d attempts %d, want %d and %d", round, cur.Version, cur.Attempts, round+2, round+1)
		}
	}
	if got := count(t, d, "SELECT COUNT(*) FROM quotesync_events WHERE kind = 'call'"); got != 5 {
		t.Errorf("call events = %d, want 5 (losers write none)", got)
	}

	// A stale phase or version loses too.
	stale := cur
	stale.Phase = phAccepted
	if _, err := a.Update(ctx, stale, cur, store.Event{}); !errors.Is(err, store.ErrStale) {
		t.Errorf("Update with the wrong phase: %v, want ErrStale", err)
	}
	stale = cur
	stale.Version--
	if _, err := a.Update(ctx, stale, cur, store.Event{}); !errors.Is(err, store.ErrStale) {
		t.Errorf("Update with an old version: %v, want ErrStale", err)
	}
}

func TestUpdateJobInUse(t *testing.T) {
	db, _ := newStore(t)
	ctx := testContext(t)
	mustReserve(t, db, newRequest("1", sampleshop.ClaimDraft))
	r2 := mustReserve(t, db, newRequest("2", sampleshop.ClaimFinal))
	next := r2
	next.JobNumber = sampleshop.JobDraft
	if _, err := db.Update(ctx, r2, next, store.Event{}); !errors.Is(err, store.ErrJobInUse) {
		t.Errorf("Update to a job of another request: %v, want ErrJobInUse", err)
	}
}

func TestUpdateRoundTrips(t *testing.T) {
	db, _ := newStore(t)
	ctx := testContext(t)
	cur := mustReserve(t, db, newRequest("1", sampleshop.ClaimDraft))
	next := cur
	next.Attempts++
	n := trips(db)
	cur, err := db.Update(ctx, cur, next, store.Event{})
	if err != nil {
		t.Fatal(err)
	}
	if got := n(); got != 1 {
		t.Errorf("Update without event cost %d round trips, want 1", got)
	}
	next = cur
	next.Phase = phAccepted
	n = trips(db)
	if _, err := db.Update(ctx, cur, next, store.Event{Kind: "phase"}); err != nil {
		t.Fatal(err)
	}
	if got := n(); got != 4 {
		t.Errorf("Update with event cost %d round trips, want 4 (begin, update, insert, commit)", got)
	}
}

func TestOpenAndListRequests(t *testing.T) {
	db, d := newStore(t)
	ctx := testContext(t)
	since := time.Now().Add(-time.Hour)

	if _, err := db.Insert(ctx, store.Request{RequestID: "waiting", ClaimNumber: "CLM-NONE", Phase: phWaiting},
		store.Event{Kind: "waiting"}); err != nil {
		t.Fatalf("Insert: %v", err)
	}
	shop := d.Shop()
	reserve := func(id string) store.Request {
		job, err := shop.CreateJob(ctx, "CLM-"+id, "")
		if err != nil {
			t.Fatal(err)
		}
		r := mustReserve(t, db, newRequest(id, "CLM-"+id))
		if r.JobNumber != job {
			t.Fatalf("request %s got job %s, want %s", id, r.JobNumber, job)
		}
		return r
	}
	reserve("reserved")
	advance(t, db, reserve("accepted"), phAccepted, nil)
	advance(t, db, advance(t, db, reserve("drafted"), phAccepted, nil), phDrafted, nil)
	submit := func(id string, supplement bool) {
		advance(t, db, reserve(id), phSubmitted, func(r *store.Request) {
			r.SubmittedAt, r.SupplementNeeded = time.Now(), supplement
		})
	}
	submit("submitted-new", false)
	submit("submitted-old", false)
	if _, err := d.SQL.ExecContext(ctx, "UPDATE quotesync_requests SET updated_at = ? WHERE request_id = 'submitted-old'", since.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	submit("submitted-supplement", true)
	advance(t, db, reserve("rejected"), phRejected, func(r *store.Request) { r.ResumePhase = phReserved })
	advance(t, db, advance(t, db, reserve("rejected-late"), phAccepted, nil), phRejected,
		func(r *store.Request) { r.ResumePhase = phAccepted })
	advance(t, db, reserve("gone"), phGone, nil)

	n := trips(db)
	open, err := db.OpenRequests(ctx, store.OpenQuery{
		Phases: []store.Phase{phWaiting, phReserved, phAccepted, phDrafted},
		Recent: []store.Phase{phSubmitted}, Since: since,
		IDs: []string{"rejected", "not-tracked"},
	})
	if err != nil {
		t.Fatalf("OpenRequests: %v", err)
	}
	if got := n(); got != 1 {
		t.Errorf("OpenRequests cost %d round trips, want 1", got)
	}
	// The open phases, the submitted ones changed since, and the listed
	// ones whatever their phase (so that a known request is never taken
	// for a new one), oldest first.
	want := []string{"waiting:waiting", "reserved:reserved", "accepted:accepted", "drafted:drafted", "submitted-new:submitted",
		"submitted-supplement:submitted", "rejected:rejected"}
	if diff := cmp.Diff(want, ids(open)); diff != "" {
		t.Errorf("OpenRequests (-want +got):\n%s", diff)
	}
	all, err := db.OpenRequests(ctx, store.OpenQuery{Recent: []store.Phase{phSubmitted}})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 {
		t.Errorf("OpenRequests(recent submitted, no since) = %v, want the three submitted", ids(all))
	}
	if none, err := db.OpenRequests(ctx, store.OpenQuery{}); err != nil || len(none) != 0 {
		t.Errorf("OpenRequests(nothing asked) = %v, %v; want nothing", ids(none), err)
	}

	hide := store.ListQuery{Hide: []store.Phase{phSubmitted, phGone}, KeepSupplements: true}
	list, err := db.ListRequests(ctx, hide)
	if err != nil {
		t.Fatal(err)
	}
	// Submitted with a supplement due needs attention; submitted without
	// one and gone do not.
	wantList := []string{"rejected-late:rejected", "rejected:rejected", "submitted-supplement:submitted",
		"drafted:drafted", "accepted:accepted", "reserved:reserved", "waiting:waiting"}
	if diff := cmp.Diff(wantList, ids(list)); diff != "" {
		t.Errorf("ListRequests(hide submitted and gone) newest first (-want +got):\n%s", diff)
	}
	list, err = db.ListRequests(ctx, store.ListQuery{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"gone:gone", "rejected-late:rejected", "rejected:rejected"}, ids(list)); diff != "" {
		t.Errorf("ListRequests(all, 3) (-want +got):\n%s", diff)
	}
}

// TestEvents: the events a row's writes record read back as written,
// newest first; an event without a kind is refused.
func TestEvents(t *testing.T) {
	db, _ := newStore(t)
	ctx := testContext(t)
	at := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	in := []store.Event{
		{Job: "RO-1", Kind: "call", Route: "POST /requests/{id}", Status: 503, Attempt: 2, Duration: 1500 * time.Millisecond, Message: "busy", At: at},
		{Kind: "warning", Message: "lines changed after submit", At: at.Add(time.Second)},
		{Kind: "call", Route: "POST /requests/{id}", Status: 201, Attempt: 3, At: at.Add(2 * time.Second)},
	}
	r7, err := db.Insert(ctx, store.Request{RequestID: "7", JobNumber: "RO-1", Phase: phReserved}, in[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Insert(ctx, store.Request{RequestID: "8", Phase: phWaiting}, in[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Update(ctx, r7, r7, in[2]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RecordOnce(ctx, store.Event{RequestID: "7", Outbox: &store.Outbox{OnceKey: "k", Targets: []string{store.TargetWebhook}}}); err == nil {
		t.Error("an event without a kind was recorded")
	}
	// What the rows say: the request, the insurer of the recording store,
	// the job, and a new row's phase.
	in[0].RequestID, in[0].To = "7", phReserved
	in[1].RequestID, in[1].To = "8", phWaiting
	in[2].RequestID, in[2].Job = "7", "RO-1"
	for i := range in {
		in[i].Insurer = shopdb.DefaultInsurer
	}
	got, err := db.Events(ctx, "7", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Event{in[2], in[0]}
	if diff := cmp.Diff(want, got, cmpIgnoreID()); diff != "" {
		t.Errorf("Events(7) newest first (-want +got):\n%s", diff)
	}
	all, err := db.Events(ctx, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.Event{in[2], in[1]}, all, cmpIgnoreID()); diff != "" {
		t.Errorf("Events(all, 2) (-want +got):\n%s", diff)
	}
	if !sort.SliceIsSorted(got, func(i, j int) bool { return got[i].ID > got[j].ID }) {
		t.Error("events are not newest first")
	}
}

func cmpIgnoreID() cmp.Option {
	return cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".ID" }, cmp.Ignore())
}

// TestUpdateMarkers writes many rows' markers in one statement, and leaves
// a row that changed meanwhile as it is.
func TestUpdateMarkers(t *testing.T) {
	db, _ := newStore(t)
	ctx := testContext(t)
	var us []store.MarkerUpdate
	for i := range 1200 {
		r, err := db.Insert(ctx, store.Request{RequestID: fmt.Sprint("m", i), Phase: phDrafted}, store.Event{})
		if err != nil {
			t.Fatal(err)
		}
		us = append(us, store.MarkerUpdate{RequestID: r.RequestID, Version: r.Version, Marker: fmt.Sprint("marker-", i)})
	}
	stale := us[7]
	stale.Version = 99
	us[7] = stale
	n := trips(db)
	written, err := db.UpdateMarkers(ctx, us)
	if err != nil {
		t.Fatal(err)
	}
	if written != 1199 {
		t.Errorf("written %d, want 1199 (one row at another version left alone)", written)
	}
	if got := n(); got != 1 {
		t.Errorf("UpdateMarkers of 1,200 rows cost %d round trips, want 1", got)
	}
	r, err := db.Request(ctx, "m5")
	if err != nil || r.PushedMarker != "marker-5" || r.Version != 2 {
		t.Errorf("m5 = %+v, %v; want marker-5 at version 2", r, err)
	}
	if r, _ := db.Request(ctx, "m7"); r.PushedMarker != "" || r.Version != 1 {
		t.Errorf("m7 (stale) = marker %q version %d; want untouched", r.PushedMarker, r.Version)
	}
}
