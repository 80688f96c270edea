package shopdb_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// fixtureRow is one row line_items returns; nil is NULL. Columns are text
// so that any value a real schema could return (and some it should not)
// can be tried.
type fixtureRow struct {
	lineID, lineNo, code, desc, part, qty, price, total *string
}

func s(v string) *string { return &v }

// good is a valid row; cases change one field.
func good() fixtureRow {
	return fixtureRow{lineID: s("1234"), lineNo: s("7"), code: s("R&R"), desc: s("Remove bumper"),
		part: nil, qty: s("1.500"), price: s("95.5000"), total: nil}
}

// fixtureDB is a database whose line_items reads the table fixture_lines.
func fixtureDB(t *testing.T, allowCredits bool) (*shopdb.DB, *shopdbtest.Database) {
	t.Helper()
	d := shopdbtest.NewSampleShop(t)
	_, err := d.SQL.Exec(`CREATE TABLE fixture_lines (seq INT AUTO_INCREMENT PRIMARY KEY, job VARCHAR(20),
line_id VARCHAR(20), line_no VARCHAR(20), code VARCHAR(20), description VARCHAR(100), part_number VARCHAR(20),
quantity VARCHAR(20), price VARCHAR(20), total VARCHAR(20))`)
	if err != nil {
		t.Fatal(err)
	}
	cfg := d.Config()
	cfg.AllowCredits = allowCredits
	cfg.Queries.LineItems = `SELECT job, line_id, line_no, code, description, part_number, quantity, price, total
FROM fixture_lines WHERE job IN (:jobs) ORDER BY seq`
	return d.Open(t, cfg), d
}

func insertFixture(t *testing.T, d *shopdbtest.Database, job string, rows ...fixtureRow) {
	t.Helper()
	for _, r := range rows {
		_, err := d.SQL.Exec("INSERT INTO fixture_lines (job, line_id, line_no, code, description, part_number, quantity, price, total) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
			job, r.lineID, r.lineNo, r.code, r.desc, r.part, r.qty, r.price, r.total)
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestLineItemsValidation puts each case in a job of its own and reads all
// of them in one LineItems call: a bad row marks its own job only.
func TestLineItemsValidation(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(*fixtureRow)
		credits bool
		wantErr string // full error text; "" = valid
	}{
		{name: "Valid"},
		{name: "NullPrice", edit: func(r *fixtureRow) { r.price = nil },
			wantErr: "job %s line 7 (line_id 1234): column price is NULL; every line needs a unit price"},
		{name: "NonNumericPrice", edit: func(r *fixtureRow) { r.price = s("TBC") },
			wantErr: `job %s line 7 (line_id 1234): column price is "TBC", which is not a number; every line needs a unit price`},
		{name: "NullQuantity", edit: func(r *fixtureRow) { r.qty = nil },
			wantErr: "job %s line 7 (line_id 1234): column quantity is NULL; every line needs a numeric quantity"},
		{name: "NonNumericQuantity", edit: func(r *fixtureRow) { r.qty = s("1,5") },
			wantErr: `job %s line 7 (line_id 1234): column quantity is "1,5", which is not a number; every line needs a numeric quantity`},
		{name: "NegativeQuantity", edit: func(r *fixtureRow) { r.qty = s("-1.000") },
			wantErr: "job %s line 7 (line_id 1234): column quantity is -1.000: negative, and shop.allow_credits is false; set it to true to accept credit lines"},
		{name: "NegativeQuantityCredit", edit: func(r *fixtureRow) { r.qty = s("-1.000") }, credits: true},
		{name: "NegativePrice", edit: func(r *fixtureRow) { r.price = s("-10") },
			wantErr: "job %s line 7 (line_id 1234): column price is -10: negative, and shop.allow_credits is false; set it to true to accept credit lines"},
		{name: "UnknownCode", edit: func(r *fixtureRow) { r.code = s("BLAST") },
			wantErr: `job %s line 7 (line_id 1234): column code is "BLAST", which is not under shop.work_types; add it there or leave such lines out in line_items`},
		{name: "NullCode", edit: func(r *fixtureRow) { r.code = nil },
			wantErr: "job %s line 7 (line_id 1234): column code is NULL or empty; every line needs an operation code listed under shop.work_types"},
		{name: "EmptyDescription", edit: func(r *fixtureRow) { r.desc = s("  ") },
			wantErr: "job %s line 7 (line_id 1234): column description is NULL or empty; every line needs a description"},
		{name: "NullDescription", edit: func(r *fixtureRow) { r.desc = nil },
			wantErr: "job %s line 7 (line_id 1234): column description is NULL or empty; every line needs a description"},
		{name: "NullLineID", edit: func(r *fixtureRow) { r.lineID = nil },
			wantErr: "job %s line 7 (line_id NULL): column line_id is NULL or empty; every line needs a stable id (it becomes the remote item id)"},
		{name: "NullLineNo", edit: func(r *fixtureRow) { r.lineNo = nil },
			wantErr: "job %s line NULL (line_id 1234): column line_no is NULL; every line needs a line number (the item's order)"},
		{name: "FractionalLineNo", edit: func(r *fixtureRow) { r.lineNo = s("7.5") },
			wantErr: `job %s line 7.5 (line_id 1234): column line_no is "7.5"; a line number is a whole number`},
		{name: "NonNumericTotal", edit: func(r *fixtureRow) { r.total = s("n/a") },
			wantErr: `job %s line 7 (line_id 1234): column total is "n/a", which is not a number; return a number or NULL (quotesync then computes quantity × price)`},
	}
	dbs := map[bool]*shopdb.DB{}
	var d *shopdbtest.Database
	dbs[false], d = fixtureDB(t, false)
	cfg := d.Config()
	cfg.AllowCredits = true
	cfg.Queries.LineItems = `SELECT job, line_id, line_no, code, description, part_number, quantity, price, total
FROM fixture_lines WHERE job IN (:jobs) ORDER BY seq`
	dbs[true] = d.Open(t, cfg)

	var jobs []string
	for i, c := range cases {
		job := fmt.Sprintf("J-%02d", i)
		jobs = append(jobs, job)
		row := good()
		if c.edit != nil {
			c.edit(&row)
		}
		second := good()
		second.lineID, second.lineNo = s("99"), s("1")
		insertFixture(t, d, job, row, second)
	}
	results := map[bool][2]any{}
	for credits, db := range dbs {
		lines, bad, err := shopdbtest.LineItems(testContext(t), db, jobs)
		if err != nil {
			t.Fatalf("LineItems: %v", err)
		}
		results[credits] = [2]any{lines, bad}
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			job := jobs[i]
			r := results[c.credits]
			lines, bad := r[0].(map[string][]shopdb.Line), r[1].(map[string]error)
			if c.wantErr == "" {
				if bad[job] != nil {
					t.Fatalf("job %s is bad: %v", job, bad[job])
				}
				if got := len(lines[job]); got != 2 {
					t.Fatalf("job %s has %d lines, want 2", job, got)
				}
				return
			}
			if _, ok := lines[job]; ok {
				t.Errorf("job %s with a bad row is in lines", job)
			}
			err := bad[job]
			if err == nil {
				t.Fatalf("job %s is not bad, want %q", job, fmt.Sprintf(c.wantErr, job))
			}
			if got, want := err.Error(), fmt.Sprintf(c.wantErr, job); got != want {
				t.Errorf("error\n got %s\nwant %s", got, want)
			}
			var re *shopdb.RowError
			if !errors.As(err, &re) || re.Job != job {
				t.Errorf("error is not a *RowError for job %s: %#v", job, err)
			}
		})
	}
}

func TestLineItemsValues(t *testing.T) {
	db, d := fixtureDB(t, false)
	r1 := good() // 1.500 × 95.5000 = 143.25
	r2 := good()
	r2.lineID, r2.lineNo, r2.code, r2.part, r2.qty, r2.price, r2.total = s("55"), s("2"), s("PART"), s(" 52119-0K923 "), s("1"), s("412.3750"), s("412.38")
	r3 := good()
	r3.lineID, r3.lineNo, r3.qty, r3.price = s("56"), s("-3"), s("0.750"), s("95.5000") // 71.625 → 71.63
	insertFixture(t, d, "RO-1", r1, r2, r3)
	dup := good()
	insertFixture(t, d, "RO-2", good(), dup)    // duplicate line_id
	insertFixture(t, d, "RO-3", good())         // same line_id as RO-1: fine in another job
	insertFixture(t, d, "RO-NOT-ASKED", good()) // ignored

	n := trips(db)
	lines, bad, err := shopdbtest.LineItems(testContext(t), db, []string{"RO-1", "RO-2", "RO-3", "RO-1", "", "ro-3x"})
	if err != nil {
		t.Fatal(err)
	}
	if got := n(); got != 1 {
		t.Errorf("LineItems cost %d round trips, want 1", got)
	}
	dec := decimal.RequireFromString
	want := []shopdb.Line{
		{Job: "RO-1", LineID: "56", Order: -3, Code: "R&R", WorkType: "RemoveReplaceLabour", Description: "Remove bumper",
			Quantity: dec("0.750"), Price: dec("95.5000"), Total: dec("71.63")},
		{Job: "RO-1", LineID: "1234", Order: 7, Code: "R&R", WorkType: "RemoveReplaceLabour", Description: "Remove bumper",
			Quantity: dec("1.500"), Price: dec("95.5000"), Total: dec("143.25")},
		{Job: "RO-1", LineID: "55", Order: 2, Code: "PART", WorkType: "Parts", Description: "Remove bumper", PartNumber: "52119-0K923",
			Quantity: dec("1"), Price: dec("412.3750"), Total: dec("412.38")},
	}
	want[1], want[2] = want[2], want[1] // ordered by line_no: -3, 2, 7
	if diff := cmp.Diff(want, lines["RO-1"]); diff != "" {
		t.Errorf("RO-1 lines (-want +got):\n%s", diff)
	}
	if got := lines["RO-1"][0].Price.Exponent(); got != -4 {
		t.Errorf("unit price exponent = %d, want -4 (the shop's precision kept)", got)
	}
	if err := bad["RO-2"]; err == nil || !strings.Contains(err.Error(), "line_id 1234 appears twice") && !strings.Contains(err.Error(), "appears twice") {
		t.Errorf("RO-2 error = %v, want a duplicate line_id", err)
	}
	if len(lines["RO-3"]) != 1 || bad["RO-3"] != nil {
		t.Errorf("RO-3 = %v, %v; want one valid line", lines["RO-3"], bad["RO-3"])
	}
	if _, ok := lines["RO-NOT-ASKED"]; ok {
		t.Error("a job that was not asked for is in lines")
	}
	if len(lines) != 2 || len(bad) != 1 {
		t.Errorf("lines for %d jobs, bad %d; want 2 and 1", len(lines), len(bad))
	}
	// No jobs: no round trip.
	n = trips(db)
	if l, b, err := shopdbtest.LineItems(testContext(t), db, nil); err != nil || len(l) != 0 || len(b) != 0 || n() != 0 {
		t.Errorf("LineItems(nil) = %v, %v, %v after %d round trips; want empty, 0", l, b, err, n())
	}
}

func TestLineItemsSampleShop(t *testing.T) {
	db, _ := shopdbtest.New(t)
	lines, bad, err := shopdbtest.LineItems(testContext(t), db, []string{sampleshop.JobDraft, sampleshop.JobFinal, sampleshop.JobNoLines, sampleshop.JobBadLine})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(lines[sampleshop.JobDraft]); got != 4 {
		t.Errorf("%s has %d lines, want 4 (the soft-deleted one left out)", sampleshop.JobDraft, got)
	}
	if got := len(lines[sampleshop.JobFinal]); got != 4 {
		t.Errorf("%s has %d lines, want 4", sampleshop.JobFinal, got)
	}
	if _, ok := lines[sampleshop.JobNoLines]; ok {
		t.Errorf("%s has no lines but is in the map", sampleshop.JobNoLines)
	}
	want := "job RO-50005 line 2 (line_id 11): column price is NULL; every line needs a unit price"
	if err := bad[sampleshop.JobBadLine]; err == nil || err.Error() != want {
		t.Errorf("bad[%s] = %v, want %q", sampleshop.JobBadLine, err, want)
	}
	l := lines[sampleshop.JobDraft][3]
	if l.Code != "RPR" || l.WorkType != "RepairLabour" || !l.Total.Equal(decimal.RequireFromString("71.63")) || l.Quantity.String() != "0.75" {
		t.Errorf("line 4 of %s = %+v, want RPR, 0.750 × 95.5000 = 71.63", sampleshop.JobDraft, l)
	}
}

func TestMappingColumnsMustFit(t *testing.T) {
	cases := map[string]struct {
		lineItems, estimateState string
		want                     string
	}{
		"MissingColumn": {lineItems: `SELECT job_no AS job, 1 AS line_id, 1 AS line_no, 'R&R' AS code, 'x' AS description, 1 AS quantity FROM jobs WHERE job_no IN (:jobs)`,
			want: `returns no column "price"`},
		"UnknownColumn": {lineItems: `SELECT job_no AS job, 1 AS line_id, 1 AS line_no, 'R&R' AS code, 'x' AS description, 1 AS quantity, 1 AS price, 2 AS totl FROM jobs WHERE job_no IN (:jobs)`,
			want: `returns column "totl", which quotesync does not know`},
		"StateWithoutJob": {estimateState: `SELECT 0 AS final FROM jobs WHERE job_no IN (:jobs)`,
			want: `returns no column "job"`},
		"StateUnknownColumn": {estimateState: `SELECT job_no AS job, 0 AS final, 1 AS finl FROM jobs WHERE job_no IN (:jobs)`,
			want: `returns column "finl", which quotesync does not know`},
	}
	d := shopdbtest.NewSampleShop(t)
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := d.Config()
			if c.lineItems != "" {
				cfg.Queries.LineItems = c.lineItems
			}
			if c.estimateState != "" {
				cfg.Queries.EstimateState = c.estimateState
			}
			db := d.Open(t, cfg)
			var err error
			if c.lineItems != "" {
				_, _, err = shopdbtest.LineItems(testContext(t), db, []string{sampleshop.JobDraft})
			} else {
				_, _, err = db.JobStates(testContext(t), []string{sampleshop.JobDraft})
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want it to contain %q", err, c.want)
			}
			checks := db.CheckQueries(testContext(t), nil, "")
			failed := 0
			for _, qc := range checks {
				if qc.Err != nil {
					failed++
				}
			}
			if failed != 1 {
				t.Errorf("CheckQueries found %d failing queries, want 1: %+v", failed, checks)
			}
		})
	}
}

// TestLineItemsOrderSameLineNo: lines sharing a line_no come in the same
// order whatever order the query returns them in: by line_id, numerically
// when both ids are integers, integers before the rest.
func TestLineItemsOrderSameLineNo(t *testing.T) {
	db, d := fixtureDB(t, false)
	cfg := d.Config()
	cfg.Queries.LineItems = `SELECT job, line_id, line_no, code, description, part_number, quantity, price, total
FROM fixture_lines WHERE job IN (:jobs) ORDER BY seq DESC`
	reversed := d.Open(t, cfg)
	row := func(id, no string) fixtureRow {
		r := good()
		r.lineID, r.lineNo = s(id), s(no)
		return r
	}
	// Two jobs with the same lines, inserted in different orders.
	ids := []string{"10", "b", "9", "0010", "a", "2", "100"}
	var forward, backward []fixtureRow
	for i := range ids {
		forward = append(forward, row(ids[i], "1"))
		backward = append(backward, row(ids[len(ids)-1-i], "1"))
	}
	insertFixture(t, d, "RO-A", append(forward, row("99", "0"))...)
	insertFixture(t, d, "RO-B", append([]fixtureRow{row("99", "0")}, backward...)...)

	want := []string{"99", "2", "9", "0010", "10", "100", "a", "b"}
	for name, db := range map[string]*shopdb.DB{"Forward": db, "Reversed": reversed} {
		lines, bad, err := shopdbtest.LineItems(testContext(t), db, []string{"RO-A", "RO-B"})
		if err != nil || len(bad) != 0 {
			t.Fatalf("%s: LineItems: %v, bad %v", name, err, bad)
		}
		for _, job := range []string{"RO-A", "RO-B"} {
			var got []string
			for _, l := range lines[job] {
				got = append(got, l.LineID)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: line ids of %s (-want +got):\n%s", name, job, diff)
			}
		}
	}
}

// TestEachLinesIsLines: EachLines gives every job what Lines does, its
// last call for a job holding all its rows, whether the query returns a
// job's rows together (the sample mapping) or apart (ordered by line_no:
// the first call reads each job again in a second statement, the next
// hands every job over at the statement's end).
func TestEachLinesIsLines(t *testing.T) {
	for _, order := range []string{"", " ORDER BY l.line_no, j.job_no"} {
		t.Run(fmt.Sprintf("order %q", order), func(t *testing.T) {
			d := shopdbtest.NewSampleShop(t)
			cfg := d.Config()
			cfg.Queries.LineItems += order
			db := d.Open(t, cfg)
			jobs, err := d.Shop().GenerateJobs(testContext(t), 20, 6)
			if err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, sampleshop.JobDraft, sampleshop.JobFinal, sampleshop.JobNoLines, sampleshop.JobBadLine)
			want, err := db.Lines(testContext(t), jobs)
			if err != nil {
				t.Fatal(err)
			}
			for try := range 2 {
				got, calls := map[string]shopdb.JobLines{}, 0
				err = db.EachLines(testContext(t), jobs, func(job string, jl shopdb.JobLines) { got[job], calls = jl, calls+1 })
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("call %d: EachLines differs from Lines (-Lines +EachLines):\n%s", try, diff)
				}
				if order == "" {
					continue // the database's plan decides whether the rows come together
				}
				if again := calls > len(got); again != (try == 0) {
					t.Errorf("call %d: %d calls for %d jobs whose rows come apart: want them read again the first time only", try, calls, len(got))
				}
			}
		})
	}
}
