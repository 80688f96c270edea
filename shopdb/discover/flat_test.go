package discover_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/discover"
	"github.com/quotesync/quotesync/shopdb/discover/testshops"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

// TestFlatEstimateTable: one table of lines that repeat the job number,
// the claim and the status is mapped without a job table: find_job finds
// the job of the claim's newest line, line_items reads the same table,
// estimate_state says final when every live line is final (a line added
// later, still open, makes it a Draft again; soft-deleted lines do not
// count; a job without live lines is not final), and no create_job is
// written (the note says a request waits). The statements are run on the
// shop's rows through shopdb, as the daemon runs them.
func TestFlatEstimateTable(t *testing.T) {
	shop := testshops.Flat
	p, q, d := propose(t, shop, shop.Final, nil)
	if !p.Flat || p.Job != p.Lines || len(q.CreateJob) != 0 || p.Numbering.Method != "" {
		t.Fatalf("flat %v, job %s, lines %s, create_job %q, numbering %q: want the one table, no create_job", p.Flat, p.Job.Name, p.Lines.Name, q.CreateJob, p.Numbering.Method)
	}
	waits := false
	for _, n := range q.Notes["create_job"] {
		waits = waits || n.Check && strings.Contains(n.Text, "no create_job") && strings.Contains(n.Text, "waits")
	}
	if !waits {
		t.Errorf("no CHECK note saying there is no create_job and that a request waits: %+v", q.Notes["create_job"])
	}
	mixed := false
	for _, n := range q.Notes["estimate_state"] {
		mixed = mixed || n.Check && strings.Contains(n.Text, "1 of 4 jobs have lines of more than one quote_status")
	}
	if !mixed {
		t.Errorf("no CHECK note on the job whose lines have two statuses: %+v", q.Notes["estimate_state"])
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := d.Config()
	cfg.Queries = shopdb.Queries{FindJob: q.FindJob, LineItems: q.LineItems, EstimateState: q.EstimateState, ShopChanged: q.ShopChanged, SampleJobs: q.SampleJobs}
	cfg.Params = map[string]string{"registration": "vehicle.registration"}
	cfg.WorkTypes = shop.WorkTypes
	db, err := shopdb.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range db.CheckQueries(ctx, nil, "") {
		if c.Err != nil {
			t.Errorf("%s: %v", c.Key, c.Err)
		}
	}
	find := func(claim string) string {
		t.Helper()
		var job string
		nr := shopdb.NewRequest{RequestID: "r-" + claim, ClaimNumber: claim, RequestJSON: []byte(`{}`)}
		err := store.New(db).ReadTx(ctx, nr.RequestID, func(ctx context.Context, tx *store.Tx) error {
			job, err = db.Jobs(tx.SQL(), nr).Find(ctx)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return job
	}
	for claim, want := range map[string]string{"INS-3301": "Q-2001", "INS-3302": "Q-2002", "INS-9999": ""} {
		if got := find(claim); got != want {
			t.Errorf("find_job(%s) = %q, want %q", claim, got, want)
		}
	}
	lines, bad, err := shopdbtest.LineItems(ctx, db, []string{"Q-2001"})
	if err != nil || len(bad) > 0 || len(lines["Q-2001"]) != shop.Lines {
		t.Errorf("line_items of Q-2001: %d lines, bad %v, %v; want its %d live lines", len(lines["Q-2001"]), bad, err, shop.Lines)
	}
	final := func(job string) bool {
		t.Helper()
		states, bad, err := db.JobStates(ctx, []string{job})
		if err != nil || len(bad) > 0 {
			t.Fatalf("estimate_state of %s: %v %v", job, bad, err)
		}
		return states[job].Final
	}
	exec := func(stmt string) {
		t.Helper()
		if _, err := d.SQL.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	for job, want := range map[string]bool{"Q-2001": false, "Q-2002": true, "Q-2004": false} {
		if got := final(job); got != want {
			t.Errorf("%s final = %v, want %v", job, got, want)
		}
	}
	exec("UPDATE quote_lines SET deleted = 'Y' WHERE job_no = 'Q-2004' AND quote_status = 'OPEN'")
	if !final("Q-2004") {
		t.Errorf("Q-2004 with its open line deleted: not final, want final (every live line is)")
	}
	exec("INSERT INTO quote_lines (job_no, claim_no, rego, quote_status, line_no, op, description, qty, rate) VALUES ('Q-2002', 'INS-3302', 'WPL900', 'OPEN', 3, 'PRT', 'Door handle', 1, 45)")
	if final("Q-2002") {
		t.Errorf("Q-2002 with a line added after it was final, still open: final, want a Draft again")
	}
	exec("UPDATE quote_lines SET deleted = 'Y' WHERE job_no = 'Q-2002'")
	if final("Q-2002") {
		t.Errorf("Q-2002 with every line deleted: final, want not")
	}
}

// TestFlatOnlyWithoutJobTable: the flat table is the answer only when no
// table of jobs is reached by lines (or when --choose names one table as
// both); a lines table that repeats the job number beside a job table is
// mapped through the job table; and a flat table without a claim column
// is no mapping (find_job would have nothing to find by).
func TestFlatOnlyWithoutJobTable(t *testing.T) {
	shop := testshops.Flat
	both := map[string]string{discover.RoleJobTable: "quote_lines", discover.RoleLineTable: "quote_lines"}
	if p, _, _ := propose(t, shop, shop.Final, both); !p.Flat {
		t.Errorf("--choose job_table=quote_lines line_table=quote_lines: not flat")
	}
	for _, s := range append([]testshops.Shop{testshops.Sample}, testshops.Shops...) {
		if s.Name == "flat" {
			continue
		}
		if p, _, _ := propose(t, s, s.Final, nil); p.Flat {
			t.Errorf("%s: mapped as a flat table (%s), but it has a job table", s.Name, p.Lines.Name)
		}
	}
	noClaim := testshops.Shop{Name: "flat-no-claim", Script: "CREATE TABLE quote_lines (line_id INT AUTO_INCREMENT PRIMARY KEY, job_no VARCHAR(10) NOT NULL, " +
		"rego VARCHAR(10), quote_status VARCHAR(8), line_no INT, op VARCHAR(6), description VARCHAR(120), qty DECIMAL(9,2), rate DECIMAL(11,2), KEY (job_no));\n" +
		"INSERT INTO quote_lines (job_no, rego, quote_status, line_no, op, description, qty, rate) VALUES " +
		"('Q-1', 'AB1', 'OPEN', 1, 'RPR', 'Dent', 1, 90), ('Q-1', 'AB1', 'OPEN', 2, 'PNT', 'Paint', 2, 80);\n"}
	ctx := context.Background()
	d := shopdbtest.NewDatabase(t)
	if err := noClaim.Apply(ctx, d.SQL); err != nil {
		t.Fatal(err)
	}
	s, err := discover.Read(ctx, d.SQL.DB, discover.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = discover.Propose(ctx, s, nil, nil, nil)
	var nj *discover.NoJobsError
	if !errors.As(err, &nj) || !strings.Contains(err.Error(), "repeats the job number and the claim number on every line") {
		t.Errorf("a flat table without a claim column: %v; want nothing job-like, saying what is looked for", err)
	}
}
