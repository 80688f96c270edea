package sync_test

import (
	"strings"
	"testing"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
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
