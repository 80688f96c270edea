package shopdb_test

import (
	"strings"
	"testing"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// TestCheckNonTransactionalWrites: check warns of each statement of
// create_job, release_job and write_back that writes a table ignoring
// transactions (MyISAM), naming it and saying what a crash before the
// commit leaves; statements that write InnoDB tables get no warning.
func TestCheckNonTransactionalWrites(t *testing.T) {
	ctx := testContext(t)
	d := shopdbtest.NewSampleShop(t)
	for _, stmt := range []string{
		"ALTER TABLE estimates DROP FOREIGN KEY estimates_job_fk",
		"ALTER TABLE jobs DROP FOREIGN KEY jobs_customer, DROP FOREIGN KEY jobs_vehicle",
		"ALTER TABLE counters ENGINE=MyISAM",
		"ALTER TABLE jobs ENGINE=MyISAM",
	} {
		if _, err := d.SQL.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	cfg := d.Config()
	cfg.WriteBack = map[string]string{
		shopdb.WriteBackSubmitted: "UPDATE jobs SET status = 'QUOTED' WHERE job_no = :job",
		shopdb.WriteBackRejected:  "UPDATE estimates SET status = 'REJECTED' WHERE job_id = (SELECT job_id FROM jobs WHERE job_no = :job)",
	}
	db := d.Open(t, cfg)
	checks := append(db.CheckQueries(ctx, nil, ""), db.CheckWriteBack(ctx)...)
	want := map[string]string{
		"shop.queries.create_job[0]":      "writes counters (MyISAM), which ignores transactions: a crash (or a lost connection) after this statement and before the reservation commits",
		"shop.queries.create_job[1]":      "writes jobs (MyISAM), which ignores transactions:",
		"shop.queries.release_job[0]":     "writes jobs (MyISAM), which ignores transactions: a crash after this statement and before quotesync records the release",
		"shop.write_back.submitted":       "writes jobs (MyISAM), which ignores transactions: a crash after this statement and before quotesync marks it made",
		"shop.queries.create_job[2]":      "", // estimates: InnoDB
		"shop.queries.create_job[3]":      "", // a SELECT
		"shop.write_back.rejected":        "",
		"shop.queries.find_job":           "",
		"shop.queries.line_items":         "",
		"shop.queries.estimate_state":     "",
		"shop.queries.sample_jobs":        "",
		"shop.queries.shop_changed":       "",
		"shop.queries.booking_date":       "",
		"shop.queries.quote_fields":       "",
		"shop.write_back.draft_pushed":    "",
		"shop.write_back.taken_elsewhere": "",
	}
	seen := 0
	for _, c := range checks {
		w, ok := want[c.Key]
		if !ok {
			continue
		}
		seen++
		if c.Err != nil {
			t.Errorf("%s: %v", c.Key, c.Err)
		}
		mine := strings.Contains(c.Warn, "ignores transactions")
		if w == "" && mine || w != "" && !strings.Contains(c.Warn, w) {
			t.Errorf("%s warns %q; want %q", c.Key, c.Warn, w)
		}
	}
	if seen < 9 {
		t.Errorf("only %d of the statements checked: %+v", seen, checks)
	}
}
