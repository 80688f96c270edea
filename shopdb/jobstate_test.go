package shopdb_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

func TestJobStatesSampleShop(t *testing.T) {
	db, _ := shopdbtest.New(t)
	ctx := testContext(t)
	n := trips(db)
	st, bad, err := db.JobStates(ctx, []string{sampleshop.JobDraft, sampleshop.JobFinal, sampleshop.JobNoLines, "RO-NONE"})
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 0 {
		t.Errorf("bad = %v, want none", bad)
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
		st, bad, err := db.JobStates(ctx, []string{job})
		if err != nil || len(bad) != 0 {
			t.Fatalf("JobStates = %v, %v; want no error", bad, err)
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
	st, bad, err := db.JobStates(ctx, jobs)
	if err != nil {
		t.Fatal(err)
	}
	if got := n(); got != 1 {
		t.Errorf("JobStates(10,000 jobs) cost %d round trips, want 1", got)
	}
	if len(st) != 10000 || len(bad) != 0 {
		t.Errorf("JobStates returned %d jobs, %d bad; want 10000 and 0", len(st), len(bad))
	}
	n = trips(db)
	lines, bad, err := shopdbtest.LineItems(ctx, db, jobs)
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
	if st, bad, err = db.JobStates(ctx, many); err != nil || len(st) != 10000 || len(bad) != 0 {
		t.Errorf("JobStates(70,000 jobs) = %d jobs, %d bad, %v; want 10000, 0, nil", len(st), len(bad), err)
	}
	if got := n(); got != 1 {
		t.Errorf("JobStates(70,000 jobs) cost %d round trips, want 1", got)
	}
}

func TestCheckQueries(t *testing.T) {
	db, d := shopdbtest.New(t)
	ctx := testContext(t)
	before := d.Snapshot(t)
	checks := db.CheckQueries(ctx, nil, "")
	cfg := sampleshop.Mapping()
	// find_job, create_job, release_job, booking_date, line_items,
	// estimate_state, sample_jobs and shop_changed.
	if got, want := len(checks), 1+len(cfg.Queries.CreateJob)+len(cfg.Queries.ReleaseJob)+5; got != want {
		t.Fatalf("CheckQueries returned %d results, want %d", got, want)
	}
	for _, c := range checks {
		if c.Err != nil {
			t.Errorf("%s: %v", c.Key, c.Err)
		}
		if c.Warn != "" {
			t.Errorf("%s: warning %q on the sample mapping, which is indexed", c.Key, c.Warn)
		}
	}
	if c := checks[len(checks)-1]; c.Key != "shop.queries.shop_changed" || c.Err != nil {
		t.Errorf("last check = %+v, want shop_changed passing", c)
	}
	// With a state subquery, shop_changed is run as Fingerprint runs it.
	withState := db.CheckQueries(ctx, nil, "SELECT COUNT(*) FROM quotesync_requests")
	if c := withState[len(withState)-1]; c.Key != "shop.queries.shop_changed" || c.Err != nil {
		t.Errorf("last check with a state subquery = %+v, want shop_changed passing", c)
	}
	if c := db.CheckQueries(ctx, nil, "SELECT no_such_column FROM quotesync_requests"); c[len(c)-1].Err == nil {
		t.Errorf("shop_changed passed with a state subquery the server refuses")
	}
	byKey := map[string]shopdb.QueryCheck{}
	for _, c := range checks {
		byKey[c.Key] = c
	}
	if c := byKey["shop.queries.line_items"]; len(c.Columns) != 12 {
		t.Errorf("line_items check = %+v, want its 12 columns (markup, is_on_report and meta_supplier among them)", c)
	}
	if c := byKey["shop.queries.sample_jobs"]; len(c.Columns) != 3 || c.Err != nil {
		t.Errorf("sample_jobs check = %+v, want it run read-only with its 3 columns", c)
	}
	if c := checks[1]; c.Columns != nil || c.Note != "prepared" {
		t.Errorf("create_job[0] check = %+v, want prepared only", c)
	}
	if got := d.Snapshot(t); got != before {
		t.Errorf("CheckQueries wrote: %v, want %v", got, before)
	}

	broken := d.Config()
	broken.Queries.FindJob = "SELECT job_no AS job FROM jobz WHERE claim_number = :claim_number"
	broken.Queries.BookingDate = "SELECT booking_date, status FROM jobs WHERE job_no = :job"
	broken.Queries.CreateJob = append([]string{}, broken.Queries.CreateJob...)
	broken.Queries.CreateJob[0] = "UPDATE counterz SET next_val = next_val + 1"
	bdb := d.Open(t, broken)
	failed := map[string]bool{}
	for _, c := range bdb.CheckQueries(ctx, nil, "") {
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

// TestCheckQueriesWarnsOfFullScan: an estimate_state that reads a whole
// table of thousands of rows on every pass is passed, with a warning that
// names the table; once the table is indexed the warning goes.
func TestCheckQueriesWarnsOfFullScan(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	ctx := testContext(t)
	mustExec := func(q string) {
		t.Helper()
		if _, err := d.SQL.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	mustExec("CREATE TABLE scan_states (id INT AUTO_INCREMENT PRIMARY KEY, job VARCHAR(20), final INT)")
	mustExec(`INSERT INTO scan_states (job, final)
SELECT CONCAT('J-', a.seq * 100 + b.seq), 0 FROM seq_0_to_49 a, seq_0_to_99 b`)
	mustExec("ANALYZE TABLE scan_states")
	cfg := d.Config()
	cfg.Queries.EstimateState = "SELECT job, final FROM scan_states WHERE job IN (:jobs)"
	warn := func() string {
		for _, c := range d.Open(t, cfg).CheckQueries(ctx, nil, "") {
			if c.Key == "shop.queries.estimate_state" {
				if c.Err != nil {
					t.Fatalf("estimate_state failed the check: %v", c.Err)
				}
				return c.Warn
			}
		}
		t.Fatal("no estimate_state check")
		return ""
	}
	if w := warn(); !strings.Contains(w, "scan_states") || !strings.Contains(w, "index") {
		t.Errorf("warning = %q, want one naming scan_states and an index", w)
	}
	mustExec("CREATE INDEX scan_states_job ON scan_states (job)")
	if w := warn(); w != "" {
		t.Errorf("warning after the index = %q, want none", w)
	}
}

// TestJobStatesBadJobs: a job whose estimate_state row is invalid, or that
// comes back twice, is reported in bad with the job, the column and the
// fix; the other jobs of the same statement are unaffected.
func TestJobStatesBadJobs(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	ctx := testContext(t)
	_, err := d.SQL.Exec(`CREATE TABLE fixture_states (seq INT AUTO_INCREMENT PRIMARY KEY, job VARCHAR(20),
final VARCHAR(20), marker VARCHAR(20))`)
	if err != nil {
		t.Fatal(err)
	}
	rows := [][3]any{
		{"J-OK", "1", "m1"},
		{"J-TWICE", "0", "m2"},
		{"J-MAYBE", "maybe", "m3"},
		{"J-BAD-TWICE", "maybe", "m4"},
		{"J-NULL", nil, nil},
		{"J-BAD-TWICE", "1", "m5"},
		{"J-NOT-ASKED", "maybe", "m6"},
		{"J-TWICE", "1", "m7"},
		{"J-DRAFT", "no", "m8"},
	}
	for _, r := range rows {
		if _, err := d.SQL.Exec("INSERT INTO fixture_states (job, final, marker) VALUES (?, ?, ?)", r[0], r[1], r[2]); err != nil {
			t.Fatal(err)
		}
	}
	cfg := d.Config()
	cfg.Queries.EstimateState = "SELECT job, final, marker FROM fixture_states WHERE job IN (:jobs) ORDER BY seq"
	db := d.Open(t, cfg)

	n := trips(db)
	states, bad, err := db.JobStates(ctx, []string{"J-OK", "J-TWICE", "J-MAYBE", "J-BAD-TWICE", "J-NULL", "J-DRAFT", "J-NONE"})
	if err != nil {
		t.Fatalf("JobStates: %v", err)
	}
	if got := n(); got != 1 {
		t.Errorf("JobStates cost %d round trips, want 1", got)
	}
	wantStates := map[string]shopdb.JobState{
		"J-OK":    {Job: "J-OK", Final: true, Marker: "m1"},
		"J-NULL":  {Job: "J-NULL"},
		"J-DRAFT": {Job: "J-DRAFT", Marker: "m8"},
	}
	if diff := cmp.Diff(wantStates, states); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	wantBad := map[string]struct{ column, text string }{
		"J-TWICE":     {"job", "job J-TWICE: shop.queries.estimate_state column job appears in two rows; return one row per job (GROUP BY the job)"},
		"J-MAYBE":     {"final", `job J-MAYBE: shop.queries.estimate_state column final is "maybe"; return 1/0 or true/false`},
		"J-BAD-TWICE": {"final", `job J-BAD-TWICE: shop.queries.estimate_state column final is "maybe"; return 1/0 or true/false`},
	}
	if len(bad) != len(wantBad) {
		t.Errorf("bad = %v, want exactly %d jobs", bad, len(wantBad))
	}
	for job, want := range wantBad {
		err := bad[job]
		if err == nil {
			t.Errorf("job %s is not bad", job)
			continue
		}
		if got := err.Error(); got != want.text {
			t.Errorf("bad[%s]\n got %s\nwant %s", job, got, want.text)
		}
		var se *shopdb.StateError
		if !errors.As(err, &se) || se.Job != job || se.Column != want.column {
			t.Errorf("bad[%s] = %#v, want a *StateError for job %s column %s", job, err, job, want.column)
		}
	}
}

// TestJobStatesWithoutFinal: an estimate_state without a final column
// is valid; no estimate is then final (nothing is ever submitted), and
// check says so.
func TestJobStatesWithoutFinal(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	ctx := testContext(t)
	cfg := d.Config()
	cfg.Queries.EstimateState = "SELECT job_no AS job, job_id AS marker FROM jobs WHERE job_no IN (:jobs)"
	db := d.Open(t, cfg)
	if _, known := db.FinalColumn(); known {
		t.Errorf("FinalColumn known before any call")
	}
	states, bad, err := db.JobStates(ctx, []string{sampleshop.JobDraft, sampleshop.JobFinal})
	if err != nil || len(bad) != 0 {
		t.Fatalf("JobStates: %v, %v", bad, err)
	}
	if len(states) != 2 || states[sampleshop.JobFinal].Final || states[sampleshop.JobDraft].Final {
		t.Errorf("states = %v, want both jobs, neither final", states)
	}
	if present, known := db.FinalColumn(); present || !known {
		t.Errorf("FinalColumn = %v, %v; want false, true", present, known)
	}
	warned := false
	for _, c := range db.CheckQueries(ctx, nil, "") {
		if c.Key == "shop.queries.estimate_state" {
			warned = c.Err == nil && strings.Contains(c.Warn, "no final column")
		}
	}
	if !warned {
		t.Errorf("CheckQueries does not warn of estimate_state without final")
	}
}

// TestJobStatesQueryErrors: failures of the statement as a whole are err,
// with neither map.
func TestJobStatesQueryErrors(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	ctx := testContext(t)
	for name, q := range map[string]string{
		"MissingTable": "SELECT job_no AS job, 0 AS final FROM no_such_table WHERE job_no IN (:jobs)",
		"NullJob":      "SELECT NULL AS job, 0 AS final FROM jobs WHERE job_no IN (:jobs)",
	} {
		t.Run(name, func(t *testing.T) {
			cfg := d.Config()
			cfg.Queries.EstimateState = q
			states, bad, err := d.Open(t, cfg).JobStates(ctx, []string{sampleshop.JobDraft})
			if err == nil || states != nil || bad != nil {
				t.Errorf("JobStates = %v, %v, %v; want nil, nil and an error", states, bad, err)
			}
		})
	}
}
