package shopdb_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/shopdb"
)

// TestLineTextsAgreeWithLineItems reads the same jobs both ways: every
// job LineItems reads valid comes back from LineTexts with the same lines
// in the same order (amounts as their canonical text), every job
// LineItems refuses is unsure, and a job without lines gets neither; in
// one round trip.
func TestLineTextsAgreeWithLineItems(t *testing.T) {
	db, d := fixtureDB(t, false)
	edits := []func(*fixtureRow){
		func(*fixtureRow) {},
		func(r *fixtureRow) { r.qty, r.price = s("0002.5000"), s("-0") },
		func(r *fixtureRow) { r.qty, r.price = s("3"), s("0.3333") },         // total 0.9999 → 1
		func(r *fixtureRow) { r.qty, r.price = s("0.001"), s("4.5") },        // total 0.0045 → 0
		func(r *fixtureRow) { r.qty, r.price = s("1e2"), s("1.5E-1") },       // through decimal
		func(r *fixtureRow) { r.qty, r.price = s("+2"), s(".5") },            // through decimal
		func(r *fixtureRow) { r.total = s("12.3400") },                       // the shop's total
		func(r *fixtureRow) { r.part, r.desc = s("  P-9 "), s(" Panel  ") },  // trimmed
		func(r *fixtureRow) { r.lineNo, r.lineID = s("007"), s(" 0012 ") },   // leading zeros
		func(r *fixtureRow) { r.lineNo = s("7.00") },                         // a whole number still
		func(r *fixtureRow) { r.qty = s("99999.9999") },                      // just inside the bounds
		func(r *fixtureRow) { r.price = s("1.5") },                           // same line_no as the second row
		func(r *fixtureRow) { r.price = s("TBC") },                           // invalid
		func(r *fixtureRow) { r.qty = s("-1") },                              // credit, not allowed
		func(r *fixtureRow) { r.code = s("BLAST") },                          // unmapped
		func(r *fixtureRow) { r.lineID = s("99") },                           // duplicate of the second row
		func(r *fixtureRow) { r.qty = s("1e30") },                            // out of bounds
		func(r *fixtureRow) { r.price = s("0.1234567890123456") },            // too many digits
		func(r *fixtureRow) { r.qty, r.price = s("99999"), s("9999999.99") }, // total within
	}
	var jobs []string
	for i, edit := range edits {
		job := fmt.Sprintf("J-%02d", i)
		jobs = append(jobs, job)
		row := good()
		edit(&row)
		second := good()
		second.lineID, second.lineNo = s("99"), s("7")
		insertFixture(t, d, job, second, row)
	}
	jobs = append(jobs, "J-EMPTY")
	want, bad, err := db.LineItems(testContext(t), jobs)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]shopdb.LineText{}
	n := trips(db)
	unsure, err := db.LineTexts(testContext(t), jobs, func(job string, lines []shopdb.LineText) {
		if _, dup := got[job]; dup {
			t.Errorf("job %s delivered twice", job)
		}
		got[job] = slices.Clone(lines)
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := n(); c != 1 {
		t.Errorf("LineTexts cost %d round trips, want 1", c)
	}
	for _, job := range jobs {
		if bad[job] != nil {
			if !slices.Contains(unsure, job) {
				t.Errorf("job %s: LineItems refuses it (%v), LineTexts does not say unsure", job, bad[job])
			}
			continue
		}
		if slices.Contains(unsure, job) {
			t.Errorf("job %s: valid (%d lines), but LineTexts is unsure of it", job, len(want[job]))
		}
		var texts []shopdb.LineText
		for _, l := range want[job] {
			texts = append(texts, shopdb.LineText{LineID: l.LineID, WorkType: l.WorkType, Description: l.Description,
				PartNumber: l.PartNumber, Order: l.Order, Quantity: l.Quantity.String(), Price: l.Price.String(), Total: l.Total.String()})
		}
		if diff := cmp.Diff(texts, got[job]); diff != "" {
			t.Errorf("job %s (-LineItems +LineTexts):\n%s", job, diff)
		}
	}
	if len(bad) != 6 {
		t.Errorf("LineItems refused %d jobs, want the 6 invalid ones: %v", len(bad), bad)
	}
}
