package sync_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	qsync "github.com/quotesync/quotesync/sync"
)

// noMarkerMapping is the sample mapping with estimate_state returning no
// marker column.
func noMarkerMapping(c *shopdb.Config) {
	c.Queries.ShopChanged = ""
	c.Queries.EstimateState = `SELECT j.job_no AS job, MAX(CASE WHEN e.status = 'FINAL' THEN 1 ELSE 0 END) AS final
FROM jobs j JOIN estimates e ON e.job_id = j.job_id WHERE j.job_no IN (:jobs) GROUP BY j.job_no`
}

// TestDerivedMarkerDrivesPushes runs a mapping without a marker in both of
// the emulator's modes: quotesync keeps the marker it derives from the
// lines, an idle pass (the lines' updated_at touched included) pushes
// nothing, and every change to the lines is pushed as a new Draft.
func TestDerivedMarkerDrivesPushes(t *testing.T) {
	for _, documented := range []bool{false, true} {
		name := "spec"
		if documented {
			name = "documented"
		}
		t.Run(name, func(t *testing.T) {
			r := newRig(t, rigOptions{shop: noMarkerMapping, documented: documented})
			id := r.seed(sampleshop.ClaimDraft)[0]
			r.pass()
			r.pass()
			row := r.row(id)
			if row.Phase != "drafted" || !strings.HasPrefix(row.PushedMarker, "qs-lines:") {
				t.Fatalf("after two passes: phase %s, marker %q; want drafted with a derived marker", row.Phase, row.PushedMarker)
			}
			r.assertRemoteHoldsShopLines(sampleshop.JobDraft)
			before := r.emu.Calls()
			if _, err := r.d.SQL.Exec("UPDATE estimate_lines SET updated_at = NOW(6) + INTERVAL 1 SECOND"); err != nil {
				t.Fatal(err)
			}
			r.pass()
			if w := r.writes(before); len(w) != 0 {
				t.Errorf("idle pass (lines touched, not changed): remote writes %v, want none", w)
			}
			lines, err := r.shop.Lines(r.ctx, sampleshop.JobDraft)
			if err != nil {
				t.Fatal(err)
			}
			edits := []func(l *sampleshop.Line){
				func(l *sampleshop.Line) { l.Description += " (left)" },
				func(l *sampleshop.Line) { l.Qty = l.Qty.Add(d("0.5")) },
				func(l *sampleshop.Line) { l.Supplier = "Aftermarket" },
			}
			for i, edit := range edits {
				l := lines[i]
				edit(&l)
				if err := r.shop.EditLine(r.ctx, l); err != nil {
					t.Fatal(err)
				}
				before := r.emu.Calls()
				r.pass()
				if w := r.writes(before); w[emulator.RouteCreateQuote] != 1 {
					t.Errorf("edit %d: remote writes %v, want one Draft", i, w)
				}
				r.assertRemoteHoldsShopLines(sampleshop.JobDraft)
				if m := r.row(id).PushedMarker; m == row.PushedMarker || !strings.HasPrefix(m, "qs-lines:") {
					t.Errorf("edit %d: marker %q (was %q), want a new derived one", i, m, row.PushedMarker)
				}
				row = r.row(id)
			}
		})
	}
}

// TestStatesReadAhead: without shop_changed, a pass reads the estimate
// states of the jobs the last pass asked for while it lists and reads its
// rows, and reads after only those of jobs new since. A change made
// between two passes is pushed all the same, as is a new request's
// estimate; with shop_changed nothing is read ahead.
func TestStatesReadAhead(t *testing.T) {
	r := newRig(t, rigOptions{shop: noMarkerMapping})
	first := r.seed(sampleshop.ClaimDraft)[0]
	r.pass()
	if _, passes, _ := r.engine.StatesAhead(); passes != 0 {
		t.Fatalf("the first pass used %d states read ahead, want none: there was no pass before", passes)
	}
	r.pass()
	if _, passes, after := r.engine.StatesAhead(); passes != 1 || after != 0 {
		t.Fatalf("second pass: %d passes used states read ahead, %d jobs read after; want 1 and 0", passes, after)
	}
	marker := r.row(first).PushedMarker
	lines, err := r.shop.Lines(r.ctx, sampleshop.JobDraft)
	if err != nil {
		t.Fatal(err)
	}
	lines[0].Description += " (rear)"
	if err := r.shop.EditLine(r.ctx, lines[0]); err != nil {
		t.Fatal(err)
	}
	second := r.seed(sampleshop.ClaimNoLines)[0]
	before := r.emu.Calls()
	r.pass()
	if _, passes, after := r.engine.StatesAhead(); passes != 2 || after != 1 {
		t.Errorf("third pass: %d passes used states read ahead, %d jobs read after; want 2 and 1 (the new request's job)", passes, after)
	}
	if w := r.writes(before); w[emulator.RouteCreateQuote] != 1 || w[emulator.RouteAccept] != 1 {
		t.Errorf("third pass: remote writes %v, want the new request accepted and the edited job's Draft", w)
	}
	r.assertRemoteHoldsShopLines(sampleshop.JobDraft)
	if m := r.row(first).PushedMarker; m == marker {
		t.Errorf("the edited job's marker stayed %q", m)
	}
	// Its job has no lines yet: its state was read (the marker of no
	// lines is kept), and there is no Draft to push.
	if row := r.row(second); row.Phase != "accepted" || row.PushedMarker != "qs-lines:0" {
		t.Errorf("the new request: phase %s, marker %q; want accepted, qs-lines:0", row.Phase, row.PushedMarker)
	}
	before = r.emu.Calls()
	r.pass()
	if _, passes, after := r.engine.StatesAhead(); passes != 3 || after != 1 {
		t.Errorf("fourth pass: %d passes used states read ahead, %d jobs read after; want 3 and 1", passes, after)
	}
	if w := r.writes(before); len(w) != 0 {
		t.Errorf("idle pass: remote writes %v, want none", w)
	}

	withShopChanged := newRig(t, rigOptions{})
	withShopChanged.seed(sampleshop.ClaimDraft)
	for range 3 {
		withShopChanged.pass()
	}
	if started, _, _ := withShopChanged.engine.StatesAhead(); started != 0 {
		t.Errorf("with shop_changed: %d passes read states ahead, want none", started)
	}
}

// TestStatesReadAheadStopsWithTheJobs: once no job needs its state (the
// last one submitted and no longer watched), passes read none ahead.
func TestStatesReadAheadStopsWithTheJobs(t *testing.T) {
	r := newRig(t, rigOptions{shop: noMarkerMapping, sync: func(c *qsync.Config) { c.WatchSubmitted = time.Minute }})
	id := r.seed(sampleshop.ClaimFinal)[0]
	for i := 1; ; i++ {
		r.pass()
		if phase := r.row(id).Phase; phase == "submitted" {
			break
		} else if i == 5 {
			t.Fatalf("not submitted after %d passes: phase %s", i, phase)
		}
	}
	r.pass() // reads the submitted job's state ahead: it is still watched
	started, used, _ := r.engine.StatesAhead()
	if started == 0 || used != started {
		t.Fatalf("while the job is watched: %d passes started reading states ahead, %d used them; want some, all used", started, used)
	}
	r.clock.advance(2 * time.Minute)
	r.pass() // started for the job, which is no longer a candidate
	r.pass()
	r.pass()
	if now, _, _ := r.engine.StatesAhead(); now != started+1 {
		t.Errorf("after the job left: %d more passes read states ahead, want 1 (the first, which did not know yet)", now-started)
	}
}
