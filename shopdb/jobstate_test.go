package shopdb_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

func TestJobStatesSampleShop(t *testing.T) {
	db, _ := shopdbtest.New(t)
	ctx := testContext(t)
	n := trips(db)
	st, err := db.JobStates(ctx, []string{sampleshop.JobDraft, sampleshop.JobFinal, sampleshop.JobNoLines, "RO-NONE"})
	if err != nil {
		t.Fatal(err)
	}
	if got := n(); got != 1 {
		t.Errorf("JobStates cost %d round trips, want 1", got)
	}
	if st[sampleshop.JobDraft].Final || !st[sampleshop.JobFinal].Final || st[sampleshop.JobNoLines].Final {
		t.Errorf("final flags: %+v; want only %s final", st, sampleshop.JobFinal)
	}
	if _, ok := st["RO-NONE"]; ok || len(st) != 3 {
		t.Errorf("states = %+v, want the 3 existing jobs", st)
	}
	if st[sampleshop.JobDraft].Marker == "" || st[sampleshop.JobNoLines].Marker == "" {
		t.Errorf("markers missing: %+v", st)
	}
}

// TestMarkerChangesWithEveryEdit: the sample mapping's marker moves on
// every kind of change the shop makes, and only then.
func TestMarkerChangesWithEveryEdit(t *testing.T) {
	db, d := shopdbtest.New(t)
	ctx := testContext(t)
	shop := d.Shop()
	job := sampleshop.JobNoLines
	marker := func() string {
		t.Helper()
		st, err := db.JobStates(ctx, []string{job})
		if err != nil {
			t.Fatal(err)
		}
		return st[job].Marker
	}
	prev := marker()
	if again := marker(); again != prev {
		t.Fatalf("marker moved without a change: %q → %q", prev, again)
	}
	var line sampleshop.Line
	steps := []struct {
		name string
		do   func() error
	}{
		{"AddLine", func() (err error) {
			line, err = shop.AddLine(ctx, job, sampleshop.Line{Code: "PNT", Description: "Blend bonnet",
				Qty: decimal.RequireFromString("1.2"), UnitPrice: decimal.NewNullDecimal(decimal.RequireFromString("88"))})
			return err
		}},
		{"EditLine", func() error {
			line.Qty = decimal.RequireFromString("1.4")
			return shop.EditLine(ctx, line)
		}},
		{"AddSecondLine", func() error {
			_, err := shop.AddLine(ctx, job, sampleshop.Line{Code: "SUNDRY", Description: "Consumables",
				Qty: decimal.NewFromInt(1), UnitPrice: decimal.NewNullDecimal(decimal.NewFromInt(15))})
			return err
		}},
		{"DeleteLine", func() error { return shop.DeleteLine(ctx, line.LineID) }},
		{"SetFinal", func() error { return shop.SetFinal(ctx, job, true) }},
		{"Reopen", func() error { return shop.SetFinal(ctx, job, false) }},
	}
	for _, s := range steps {
		time.Sleep(2 * time.Millisecond) // distinct microsecond time stamps
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		m := marker()
		if m == prev {
			t.Errorf("%s did not change the marker (%q)", s.name, m)
		}
		prev = m
	}
	lines, err := shop.Lines(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || lines[0].Code != "SUNDRY" {
		t.Errorf("shop lines = %+v, want the one SUNDRY line left", lines)
	}
}

// TestTenThousandJobsOneStatementEach: JobStates and LineItems over 10,000
// jobs send one statement each (no chunking below 65,535 placeholders,
// none at all with client-side interpolation).
func TestTenThousandJobsOneStatementEach(t *testing.T) {
	db, d := shopdbtest.New(t)
	ctx := testContext(t)
	jobs, err := d.Shop().GenerateJobs(ctx, 10000, 2)
	if err != nil {
		t.Fatal(err)
	}
	n := trips(db)
	st, err := db.JobStates(ctx, jobs)
	if err != nil {
		t.Fatal(err)
	}
	if got := n(); got != 1 {
		t.Errorf("JobStates(10,000 jobs) cost %d round trips, want 1", got)
	}
	if len(st) != 10000 {
		t.Errorf("JobStates returned %d jobs, want 10000", len(st))
	}
	n = trips(db)
	lines, bad, err := db.LineItems(ctx, jobs)
	if err != nil {
		t.Fatal(err)
	}
	if got := n(); got != 1 {
		t.Errorf("LineItems(10,000 jobs) cost %d round trips, want 1", got)
	}
	if len(lines) != 10000 || len(bad) != 0 {
		t.Fatalf("LineItems: %d jobs with lines, %d bad; want 10000 and 0", len(lines), len(bad))
	}
	for _, j := range []string{jobs[0], jobs[9999]} {
		if got := len(lines[j]); got != 2 {
			t.Errorf("job %s has %d lines, want 2", j, got)
		}
	}
	// 70,000 job numbers: more than a prepared statement could take.
	many := make([]string, 0, 70000)
	many = append(many, jobs...)
	for i := len(many); i < 70000; i++ {
		many = append(many, fmt.Sprintf("RO-X%d", i))
	}
	n = trips(db)
	if st, err = db.JobStates(ctx, many); err != nil || len(st) != 10000 {
		t.Errorf("JobStates(70,000 jobs) = %d jobs, %v", len(st), err)
	}
	if got := n(); got != 1 {
		t.Errorf("JobStates(70,000 jobs) cost %d round trips, want 1", got)
	}
}

func TestCheckQueries(t *testing.T) {
	db, d := shopdbtest.New(t)
	ctx := testContext(t)
	before := snapshot(t, d)
	checks := db.CheckQueries(ctx)
	cfg := sampleshop.Mapping()
	if got, want := len(checks), 1+len(cfg.Queries.CreateJob)+3; got != want {
		t.Fatalf("CheckQueries returned %d results, want %d", got, want)
	}
	for _, c := range checks {
		if c.Err != nil {
			t.Errorf("%s: %v", c.Key, c.Err)
		}
	}
	if last := checks[len(checks)-2]; last.Key != "shop.queries.line_items" || len(last.Columns) != 9 {
		t.Errorf("line_items check = %+v, want its 9 columns", last)
	}
	if c := checks[1]; c.Columns != nil || c.Note != "prepared" {
		t.Errorf("create_job[0] check = %+v, want prepared only", c)
	}
	if got := snapshot(t, d); got != before {
		t.Errorf("CheckQueries wrote: %v, want %v", got, before)
	}

	broken := d.Config()
	broken.Queries.FindJob = "SELECT job_no AS job FROM jobz WHERE claim_number = :claim_number"
	broken.Queries.BookingDate = "SELECT booking_date, status FROM jobs WHERE job_no = :job"
	broken.Queries.CreateJob = append([]string{}, broken.Queries.CreateJob...)
	broken.Queries.CreateJob[0] = "UPDATE counterz SET next_val = next_val + 1"
	bdb := d.Open(t, broken)
	failed := map[string]bool{}
	for _, c := range bdb.CheckQueries(ctx) {
		if c.Err != nil {
			failed[c.Key] = true
		}
	}
	for _, key := range []string{"shop.queries.find_job", "shop.queries.booking_date", "shop.queries.create_job[0]"} {
		if !failed[key] {
			t.Errorf("%s passed the check, want a failure", key)
		}
	}
	if len(failed) != 3 {
		t.Errorf("failed checks = %v, want exactly the 3 broken queries", failed)
	}
}
