package shopdb_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// TestQuoteFields reads quote_fields from a real server: one map of fields
// per job, names as the query spells them, NULL and empty values left
// out, a job with two rows in bad (the others go on), and nothing at all
// (not even a round trip) without the query.
func TestQuoteFields(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	if _, err := d.SQL.Exec(`CREATE TABLE quote_notes (job VARCHAR(20), note VARCHAR(40), assessor VARCHAR(40))`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.SQL.Exec(`INSERT INTO quote_notes VALUES ('RO-1', ' rear impact ', 'J. Smith'), ('RO-2', NULL, ''),
('RO-3', 'a', NULL), ('RO-3', 'b', NULL), ('RO-4', 'x', 'y'), ('RO-9', 'not asked', 'z')`); err != nil {
		t.Fatal(err)
	}
	plain := d.Open(t, d.Config())
	n := trips(plain)
	if f, bad, err := plain.QuoteFields(testContext(t), []string{"RO-1"}); err != nil || len(f) != 0 || len(bad) != 0 || n() != 0 {
		t.Errorf("without quote_fields: %v, %v, %v after %d round trips; want nothing and none", f, bad, err, n())
	}
	cfg := d.Config()
	cfg.Queries.QuoteFields = `SELECT job, note AS claimNote, assessor AS Assessor FROM quote_notes WHERE job IN (:jobs)`
	db := d.Open(t, cfg)
	n = trips(db)
	fields, bad, err := db.QuoteFields(testContext(t), []string{"RO-1", "RO-2", "RO-3", "ro-4", "RO-5"})
	if err != nil {
		t.Fatal(err)
	}
	if c := n(); c != 1 {
		t.Errorf("QuoteFields cost %d round trips, want 1", c)
	}
	want := map[string]map[string]string{"RO-1": {"claimNote": "rear impact", "Assessor": "J. Smith"}, "ro-4": {"claimNote": "x", "Assessor": "y"}}
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	if err := bad["RO-3"]; err == nil || !strings.Contains(err.Error(), "job RO-3: shop.queries.quote_fields returns two rows for it") {
		t.Errorf("bad[RO-3] = %v, want the two rows named", err)
	}
	if len(bad) != 1 {
		t.Errorf("bad = %v, want RO-3 only", bad)
	}
}

// TestQuoteFieldsColumns: a field quotesync writes itself, a query
// without job, or a name twice is an error of the query that names it,
// from QuoteFields and from check.
func TestQuoteFieldsColumns(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	for _, c := range []struct{ query, want string }{
		{`SELECT job_no AS job, 'x' AS Status FROM jobs WHERE job_no IN (:jobs)`,
			`returns column "Status", a quote field quotesync writes itself (type, status, referenceId, rates, items)`},
		{`SELECT job_no AS job, 'x' AS items FROM jobs WHERE job_no IN (:jobs)`, `returns column "items", a quote field quotesync writes itself`},
		{`SELECT job_no AS ref, 'x' AS note FROM jobs WHERE job_no IN (:jobs)`, `returns no column "job"`},
		{`SELECT job_no AS job, 'x' AS note, 'y' AS NOTE FROM jobs WHERE job_no IN (:jobs)`, `returns column "NOTE" twice`},
	} {
		cfg := d.Config()
		cfg.Queries.QuoteFields = c.query
		db := d.Open(t, cfg)
		_, _, err := db.QuoteFields(testContext(t), []string{"RO-50001"})
		if err == nil || !strings.Contains(err.Error(), "shop.queries.quote_fields "+c.want) {
			t.Errorf("QuoteFields with %s: err = %v, want %q", c.query, err, c.want)
		}
		var checked bool
		for _, r := range db.CheckQueries(testContext(t), nil, "") {
			if r.Key == "shop.queries.quote_fields" {
				checked = true
				if r.Err == nil || !strings.Contains(r.Err.Error(), c.want) {
					t.Errorf("check of %s: %+v, want %q", c.query, r, c.want)
				}
			}
		}
		if !checked {
			t.Errorf("check does not run quote_fields")
		}
	}
	cfg := d.Config()
	cfg.Queries.QuoteFields = `SELECT job_no AS job, registration AS vehicle FROM jobs WHERE job_no IN (:jobs)`
	for _, r := range d.Open(t, cfg).CheckQueries(testContext(t), nil, "") {
		if r.Key == "shop.queries.quote_fields" && (r.Err != nil || !cmp.Equal(r.Columns, []string{"job", "vehicle"})) {
			t.Errorf("check of a good quote_fields: %+v", r)
		}
	}
	cfg.Queries.QuoteFields = `SELECT job_no AS job, registration AS vehicle FROM jobs`
	if _, err := shopdb.Open(testContext(t), cfg); err == nil || !strings.Contains(err.Error(), "shop.queries.quote_fields") {
		t.Errorf("quote_fields without :jobs: Open = %v, want the key named", err)
	}
}
