package shopdb_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// noMarkerState is the sample mapping's estimate_state without a marker.
const noMarkerState = `SELECT j.job_no AS job, MAX(CASE WHEN e.status = 'FINAL' THEN 1 ELSE 0 END) AS final
FROM jobs j JOIN estimates e ON e.job_id = j.job_id WHERE j.job_no IN (:jobs) GROUP BY j.job_no`

// derivedShop is the sample shop with jobs generated (4 lines each, the
// last job's lines deleted) and the mapping's estimate_state without a
// marker.
func derivedShop(t *testing.T, edit func(*shopdb.Config)) (*shopdbtest.Database, *shopdb.DB, []string) {
	t.Helper()
	d := shopdbtest.NewSampleShop(t)
	jobs, err := d.Shop().GenerateJobs(testContext(t), 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	shopExec(t, d, "UPDATE estimate_lines l JOIN estimates e ON e.estimate_id = l.estimate_id JOIN jobs j ON j.job_id = e.job_id SET l.deleted = 1 WHERE j.job_no = ?", jobs[3])
	cfg := d.Config()
	cfg.Queries.EstimateState = noMarkerState
	if edit != nil {
		edit(&cfg)
	}
	return d, d.Open(t, cfg), jobs
}

func shopExec(t *testing.T, d *shopdbtest.Database, q string, args ...any) {
	t.Helper()
	if _, err := d.SQL.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func markers(t *testing.T, db *shopdb.DB, jobs []string) map[string]string {
	t.Helper()
	states, bad, err := db.JobStates(testContext(t), jobs)
	if err != nil || len(bad) != 0 {
		t.Fatalf("JobStates: bad %v, err %v", bad, err)
	}
	out := map[string]string{}
	for _, j := range jobs {
		out[j] = states[j].Marker
	}
	return out
}

// TestDerivedMarkersFollowTheLines reads estimate_state without a marker:
// every job gets a marker derived from its lines, the same while they
// stay the same (a touched updated_at included), "qs-lines:0" without
// lines, and a new one on every kind of change to what line_items returns,
// that job's only.
//
// Each call is one statement, estimate_state joined with the sums; run
// four ways: as it is, split in two statements at once (as over many
// jobs), the same with the job spelled otherwise by estimate_state, and
// with two explicit collations of the job, which the statement compares
// as bytes.
func TestDerivedMarkersFollowTheLines(t *testing.T) {
	for _, tc := range []struct {
		name       string
		split      int
		edit       func(*shopdb.Config)
		statements int64 // round trips of a call
	}{
		{"joined", 0, nil, 1},
		{"joined in two", 2, nil, 2},
		// estimate_state spells the jobs otherwise than line_items, in
		// bytes that compare case-sensitively: each job's sums still
		// reach its state (quotesync matches them, not the database).
		{"joined, jobs spelled apart", 2, func(c *shopdb.Config) {
			c.Queries.EstimateState = strings.Replace(noMarkerState, "j.job_no AS job", "CAST(LOWER(j.job_no) AS BINARY) AS job", 1)
		}, 2},
		{"two collations", 0, func(c *shopdb.Config) {
			c.Queries.EstimateState = strings.Replace(noMarkerState, "j.job_no AS job", "j.job_no COLLATE utf8mb4_bin AS job", 1)
			c.Queries.LineItems = strings.Replace(c.Queries.LineItems, "j.job_no AS job", "j.job_no COLLATE utf8mb4_unicode_ci AS job", 1)
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testDerivedMarkersFollowTheLines(t, tc.edit, tc.statements, tc.split)
		})
	}
}

func testDerivedMarkersFollowTheLines(t *testing.T, edit func(*shopdb.Config), statements int64, split int) {
	d, db, jobs := derivedShop(t, edit)
	if split > 0 {
		shopdb.SetDigestSplit(db, split)
	}
	m := markers(t, db, jobs)
	if form, why := db.DerivedMarkers(); form != "CRC32" {
		t.Fatalf("derived markers: form %q (%s), want CRC32 on MariaDB 10.11", form, why)
	}
	for _, j := range jobs[:3] {
		if !strings.HasPrefix(m[j], "qs-lines:4:") {
			t.Errorf("job %s: marker %q, want qs-lines:4:…", j, m[j])
		}
	}
	if m[jobs[3]] != "qs-lines:0" {
		t.Errorf("job %s without lines: marker %q, want qs-lines:0", jobs[3], m[jobs[3]])
	}
	if m[jobs[0]] == m[jobs[1]] {
		t.Errorf("two jobs with different lines have one marker %q", m[jobs[0]])
	}
	job := jobs[0]
	lines := "estimate_lines l JOIN estimates e ON e.estimate_id = l.estimate_id JOIN jobs j ON j.job_id = e.job_id"
	where := " WHERE j.job_no = '" + job + "'"
	changes := []struct {
		name string
		sql  []string
		same bool
	}{
		{"touched only", []string{"UPDATE " + lines + " SET l.updated_at = NOW(6) + INTERVAL 1 SECOND" + where}, true},
		{"price", []string{"UPDATE " + lines + " SET l.unit_price = l.unit_price + 0.0001" + where + " AND l.line_no = 1"}, false},
		{"empty part instead of NULL", []string{"UPDATE " + lines + " SET l.part_no = ''" + where + " AND l.line_no = 1"}, false},
		{"NULL part again", []string{"UPDATE " + lines + " SET l.part_no = NULL" + where + " AND l.line_no = 1"}, false},
		{"descriptions swapped", []string{
			"UPDATE " + lines + " SET l.description = CASE l.line_no WHEN 1 THEN 'Generated line 2' WHEN 2 THEN 'Generated line 1' ELSE l.description END" + where,
		}, false},
		{"descriptions swapped back", []string{
			"UPDATE " + lines + " SET l.description = CONCAT('Generated line ', l.line_no)" + where,
		}, false},
		// A value moved from one column to the next, NULL with it.
		{"supplier becomes the part", []string{"UPDATE " + lines + " SET l.part_no = l.supplier, l.supplier = NULL" + where + " AND l.line_no = 4"}, false},
		{"line deleted", []string{"UPDATE " + lines + " SET l.deleted = 1" + where + " AND l.line_no = 3"}, false},
		{"line added", []string{"INSERT INTO estimate_lines (estimate_id, line_no, op_code, description, qty, unit_price) " +
			"SELECT e.estimate_id, 9, 'RPR', 'Added', 1, 5 FROM estimates e JOIN jobs j ON j.job_id = e.job_id" + where}, false},
	}
	seen := map[string]string{m[job]: "the start"}
	for _, c := range changes {
		for _, q := range c.sql {
			shopExec(t, d, q)
		}
		warmPool(t, db, int(statements)) // a connection opened now would count its set-up
		n := trips(db)
		now := markers(t, db, jobs)
		if got := n(); got != statements {
			t.Errorf("%s: JobStates cost %d round trips, want %d", c.name, got, statements)
		}
		for _, other := range jobs[1:] {
			if now[other] != m[other] {
				t.Errorf("%s: job %s's marker moved (%q → %q), its lines did not", c.name, other, m[other], now[other])
			}
		}
		switch {
		case c.same && now[job] != m[job]:
			t.Errorf("%s: marker moved %q → %q, the lines are the same", c.name, m[job], now[job])
		case !c.same && now[job] == m[job]:
			t.Errorf("%s: marker stayed %q", c.name, now[job])
		case !c.same && seen[now[job]] != "" && c.name != "descriptions swapped back" && c.name != "NULL part again":
			t.Errorf("%s: marker %q is the one of %s", c.name, now[job], seen[now[job]])
		}
		seen[now[job]] = c.name
		m = now
	}
	// The same lines as at the start read the same marker again.
	if again := markers(t, db, jobs); again[job] != m[job] {
		t.Errorf("marker not stable: %q then %q", m[job], again[job])
	}
}

// TestDerivedMarkersOnlyWithoutMarker: a mapping's own marker is used as
// it is, and with quote_fields (which the sums do not cover) nothing is
// derived: the lines are then read every pass.
func TestDerivedMarkersOnlyWithoutMarker(t *testing.T) {
	_, own, jobs := derivedShop(t, func(c *shopdb.Config) {
		c.Queries.EstimateState = shopdbtest.NewSampleShop(t).Config().Queries.EstimateState
	})
	for j, m := range markers(t, own, jobs[:3]) {
		if m == "" || strings.HasPrefix(m, "qs-lines:") {
			t.Errorf("mapping with a marker: job %s marker %q, want the mapping's", j, m)
		}
	}
	_, fields, jobs := derivedShop(t, func(c *shopdb.Config) {
		c.Queries.QuoteFields = "SELECT j.job_no AS job, j.registration AS note FROM jobs j WHERE j.job_no IN (:jobs)"
	})
	for j, m := range markers(t, fields, jobs) {
		if m != "" {
			t.Errorf("with quote_fields: job %s marker %q, want none", j, m)
		}
	}
}

// TestDerivedMarkersFallBack runs against forms the server refuses: the
// next form is used, and when none is left nothing is derived (markers
// empty, the reason told) while JobStates goes on working.
func TestDerivedMarkersFallBack(t *testing.T) {
	for _, c := range []struct{ name, sums string }{{"NextForm", "NO_SUCH_FUNCTION(%[1]s)"}, {"NullSums", "NULL"}} {
		t.Run(c.name, func(t *testing.T) {
			d, db, jobs := derivedShop(t, nil)
			shopdb.ReplaceDigestForms(db, 1, c.sums)
			m := markers(t, db, jobs)
			if form, why := db.DerivedMarkers(); form != "MD5" {
				t.Fatalf("form %q (%s), want MD5 after the first is refused", form, why)
			}
			shopExec(t, d, "UPDATE estimate_lines l JOIN estimates e ON e.estimate_id = l.estimate_id JOIN jobs j ON j.job_id = e.job_id SET l.qty = l.qty + 1 WHERE j.job_no = ?", jobs[1])
			now := markers(t, db, jobs)
			if now[jobs[1]] == m[jobs[1]] || now[jobs[0]] != m[jobs[0]] || !strings.HasPrefix(m[jobs[0]], "qs-lines:4:") {
				t.Errorf("MD5 form: markers %v then %v; want job %s's alone to move", m, now, jobs[1])
			}
		})
	}
	t.Run("None", func(t *testing.T) {
		_, db, jobs := derivedShop(t, nil)
		shopdb.ReplaceDigestForms(db, 2, "NO_SUCH_FUNCTION(%[1]s)")
		for round := range 2 {
			for j, m := range markers(t, db, jobs) {
				if m != "" {
					t.Errorf("round %d: job %s marker %q, want none", round, j, m)
				}
			}
		}
		if form, why := db.DerivedMarkers(); form != "" || !strings.Contains(why, "refused every form") || !strings.Contains(why, "NO_SUCH_FUNCTION") {
			t.Errorf("form %q, why %q; want none, and why naming the refusal", form, why)
		}
	})
}

// TestDerivedMarkersCancelled: a cancelled pass is an error of the
// moment, not a reason to stop deriving.
func TestDerivedMarkersCancelled(t *testing.T) {
	_, db, jobs := derivedShop(t, nil)
	markers(t, db, jobs[:1]) // learns the columns
	ctx, cancel := context.WithCancel(testContext(t))
	cancel()
	if _, _, err := db.JobStates(ctx, jobs); err == nil {
		t.Fatal("JobStates with a cancelled context: no error")
	}
	m := markers(t, db, jobs)
	if form, why := db.DerivedMarkers(); form == "" || !strings.HasPrefix(m[jobs[0]], "qs-lines:") {
		t.Errorf("after a cancelled call: form %q (%s), marker %q; want still derived", form, why, m[jobs[0]])
	}
}

// TestCheckSaysHowChangesAreSeen: check tells, for an estimate_state
// without a marker, that markers are derived (and how), or warns that
// every pass reads every job's lines, and why.
func TestCheckSaysHowChangesAreSeen(t *testing.T) {
	find := func(t *testing.T, db *shopdb.DB) shopdb.QueryCheck {
		t.Helper()
		for _, c := range db.CheckQueries(testContext(t), nil, "") {
			if c.Key == "shop.queries.estimate_state" {
				if c.Err != nil {
					t.Fatalf("estimate_state check failed: %v", c.Err)
				}
				return c
			}
		}
		t.Fatal("no check of estimate_state")
		return shopdb.QueryCheck{}
	}
	t.Run("Derived", func(t *testing.T) {
		_, db, _ := derivedShop(t, nil)
		if c := find(t, db); !strings.Contains(c.Note, "derives one from line_items (CRC32") || c.Warn != "" {
			t.Errorf("note %q, warn %q; want the derived form named, no warning", c.Note, c.Warn)
		}
	})
	t.Run("QuoteFields", func(t *testing.T) {
		_, db, _ := derivedShop(t, func(c *shopdb.Config) {
			c.Queries.QuoteFields = "SELECT j.job_no AS job, j.registration AS note FROM jobs j WHERE j.job_no IN (:jobs)"
		})
		if c := find(t, db); !strings.Contains(c.Warn, "quote_fields is set") || !strings.Contains(c.Warn, "every pass reads every tracked job's lines") {
			t.Errorf("warn %q; want it to name quote_fields and the cost", c.Warn)
		}
	})
	t.Run("Refused", func(t *testing.T) {
		_, db, jobs := derivedShop(t, nil)
		shopdb.ReplaceDigestForms(db, 2, "NO_SUCH_FUNCTION(%[1]s)")
		markers(t, db, jobs) // a pass found it cannot derive
		if c := find(t, db); !strings.Contains(c.Warn, "cannot derive one") || !strings.Contains(c.Warn, "NO_SUCH_FUNCTION") {
			t.Errorf("warn %q; want the refusal named", c.Warn)
		}
	})
	t.Run("OwnMarker", func(t *testing.T) {
		d := shopdbtest.NewSampleShop(t)
		if c := find(t, d.Open(t, d.Config())); strings.Contains(c.Note, "derive") || c.Warn != "" {
			t.Errorf("mapping with a marker: note %q, warn %q; want neither about deriving", c.Note, c.Warn)
		}
	})
}
