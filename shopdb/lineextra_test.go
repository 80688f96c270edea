package shopdb_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// extraRow is one line's optional item fields as the shop stores them
// (nil is NULL).
type extraRow struct {
	markup, onReport, colour, supplier *string
	flag                               *int // is_on_report as TINYINT(1)
}

// extraDB is a database whose line_items returns markup, is_on_report and
// two metadata columns from the table extra_lines; typed reads
// is_on_report from a TINYINT(1) column and markup from a DECIMAL one.
func extraDB(t *testing.T, d *shopdbtest.Database, credits, typed bool) *shopdb.DB {
	t.Helper()
	cfg := d.Config()
	cfg.AllowCredits = credits
	markup, onReport := "markup", "on_report"
	if typed {
		markup, onReport = "CAST(markup AS DECIMAL(20,6))", "flag"
	}
	cfg.Queries.LineItems = `SELECT job, '1' AS line_id, 1 AS line_no, 'R&R' AS code, 'Bumper' AS description,
1 AS quantity, 2 AS price, ` + markup + ` AS markup, ` + onReport + ` AS is_on_report,
colour AS meta_Colour, supplier AS META_supplier FROM extra_lines WHERE job IN (:jobs)`
	return d.Open(t, cfg)
}

// TestLineExtras reads markup, is_on_report and meta_ columns from a real
// server: NULL leaves a field out, values arrive as written (trimmed,
// amounts in any form), an invalid one holds its job with the line and
// column named.
func TestLineExtras(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	if _, err := d.SQL.Exec(`CREATE TABLE extra_lines (job VARCHAR(20) PRIMARY KEY, markup VARCHAR(40),
on_report VARCHAR(10), flag TINYINT(1), colour VARCHAR(20), supplier VARCHAR(20))`); err != nil {
		t.Fatal(err)
	}
	on, off := true, false
	dec := decimal.RequireFromString
	type want struct {
		markup   string // "" none
		onReport *bool
		meta     map[string]string
		err      string // the RowError; "" valid
		kind     string
	}
	cases := []struct {
		name    string
		row     extraRow
		credits bool
		want    want
	}{
		{name: "AllNull"},
		{name: "All", row: extraRow{markup: s("12.5000"), onReport: s("1"), colour: s(" blue "), supplier: s("OEM"), flag: ptr(1)},
			want: want{markup: "12.5", onReport: &on, meta: map[string]string{"Colour": "blue", "supplier": "OEM"}}},
		{name: "FalseAndEmptyMeta", row: extraRow{onReport: s("FALSE"), colour: s("  "), supplier: s("Aftermarket"), flag: ptr(0)},
			want: want{onReport: &off, meta: map[string]string{"supplier": "Aftermarket"}}},
		{name: "TrueWord", row: extraRow{markup: s("0"), onReport: s(" true "), flag: ptr(1)}, want: want{markup: "0", onReport: &on}},
		{name: "NotANumber", row: extraRow{markup: s("ten")},
			want: want{err: `column markup is "ten", which is not a number; return a number or NULL (no markup)`}},
		{name: "NotABoolean", row: extraRow{onReport: s("yes"), flag: ptr(2)},
			want: want{err: `column is_on_report is "yes"; return 1 or 0 (true or false), or NULL to leave it out`}},
		{name: "NegativeMarkup", row: extraRow{markup: s("-5")},
			want: want{err: "column markup is -5: negative, and shop.allow_credits is false", kind: shopdb.RowCredit}},
		{name: "NegativeMarkupCredits", row: extraRow{markup: s("-5.50")}, credits: true, want: want{markup: "-5.5"}},
		{name: "MarkupBeyondBound", row: extraRow{markup: s("20000000")},
			want: want{err: "column markup is 20000000, beyond the plausible bound 10000000 (shop.limits.max_price)", kind: shopdb.RowBounds}},
		{name: "MarkupTooPrecise", row: extraRow{markup: s("1.234567890123456")},
			want: want{err: "column markup is 1.234567890123456, 16 significant digits", kind: shopdb.RowBounds}},
	}
	var jobs []string
	for i, c := range cases {
		job := fmt.Sprintf("X-%02d", i)
		jobs = append(jobs, job)
		r := c.row
		if _, err := d.SQL.Exec("INSERT INTO extra_lines VALUES (?, ?, ?, ?, ?, ?)", job, r.markup, r.onReport, r.flag, r.colour, r.supplier); err != nil {
			t.Fatal(err)
		}
	}
	for _, typed := range []bool{false, true} {
		for _, credits := range []bool{false, true} {
			db := extraDB(t, d, credits, typed)
			lines, bad, err := shopdbtest.LineItems(testContext(t), db, jobs)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range cases {
				if c.credits != credits && !(credits && c.want.err == "" && !c.credits) {
					continue // a credit case only with credits; valid ones both ways
				}
				if typed && (c.name == "NotANumber" || c.name == "MarkupTooPrecise") {
					continue // CAST makes "ten" 0 and rounds to 6 places: nothing to refuse
				}
				job := jobs[i]
				t.Run(fmt.Sprintf("%s/typed=%v/credits=%v", c.name, typed, credits), func(t *testing.T) {
					w := c.want
					if typed {
						switch c.name { // the server writes the value of the typed column
						case "NotABoolean":
							w.err = `column is_on_report is "2"; return 1 or 0 (true or false), or NULL to leave it out`
						case "NegativeMarkup":
							w.err = strings.Replace(w.err, "-5", "-5.000000", 1)
						case "MarkupBeyondBound":
							w.err = strings.Replace(w.err, "20000000", "20000000.000000", 1)
						}
					}
					if w.err != "" {
						var re *shopdb.RowError
						if !errors.As(bad[job], &re) {
							t.Fatalf("job %s: bad = %v, want a RowError %q", job, bad[job], w.err)
						}
						prefix := "job " + job + " line 1 (line_id 1): "
						if got := re.Error(); !strings.HasPrefix(got, prefix+w.err) {
							t.Errorf("error = %q, want it to start %q", got, prefix+w.err)
						}
						if re.Kind != w.kind {
							t.Errorf("kind = %q, want %q", re.Kind, w.kind)
						}
						return
					}
					if bad[job] != nil || len(lines[job]) != 1 {
						t.Fatalf("job %s: bad %v, lines %+v; want one valid line", job, bad[job], lines[job])
					}
					l := lines[job][0]
					if got := fmt.Sprint(l.Markup); (l.Markup == nil) != (w.markup == "") || l.Markup != nil && !l.Markup.Equal(dec(w.markup)) {
						t.Errorf("Markup = %s, want %q", got, w.markup)
					}
					if !cmp.Equal(l.OnReport, w.onReport) {
						t.Errorf("OnReport = %v, want %v", l.OnReport, w.onReport)
					}
					if !cmp.Equal(l.Metadata, w.meta) {
						t.Errorf("Metadata = %v, want %v", l.Metadata, w.meta)
					}
				})
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestLineExtraColumns: a meta_ column without a key, or one key twice,
// is an error of the query that names the column; estimate_state takes no
// meta_ columns.
func TestLineExtraColumns(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	for _, c := range []struct{ query, want string }{
		{`SELECT 'RO-1' AS job, '1' AS line_id, 1 AS line_no, 'R&R' AS code, 'd' AS description, 1 AS quantity, 1 AS price, 'x' AS meta_ FROM DUAL WHERE 'RO-1' IN (:jobs)`,
			`returns column "meta_", which names no metadata key; alias it as meta_<key>`},
		{`SELECT 'RO-1' AS job, '1' AS line_id, 1 AS line_no, 'R&R' AS code, 'd' AS description, 1 AS quantity, 1 AS price, 'x' AS meta_a, 'y' AS META_A FROM DUAL WHERE 'RO-1' IN (:jobs)`,
			`returns column "META_A" twice`},
		{`SELECT 'RO-1' AS job, '1' AS line_id, 1 AS line_no, 'R&R' AS code, 'd' AS description, 1 AS quantity, 1 AS price, 'x' AS onreport FROM DUAL WHERE 'RO-1' IN (:jobs)`,
			`returns column "onreport", which quotesync does not know; it returns job, line_id, line_no, code, description, quantity, price and optionally part_number, total, markup, is_on_report, meta_<key>`},
	} {
		cfg := d.Config()
		cfg.Queries.LineItems = c.query
		_, err := d.Open(t, cfg).Lines(testContext(t), []string{"RO-1"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Lines with %s: err = %v, want it to contain %q", c.query, err, c.want)
		}
	}
	cfg := d.Config()
	cfg.Queries.EstimateState = `SELECT 'RO-1' AS job, 0 AS final, 'x' AS meta_a FROM DUAL WHERE 'RO-1' IN (:jobs)`
	if _, _, err := d.Open(t, cfg).JobStates(testContext(t), []string{"RO-1"}); err == nil || !strings.Contains(err.Error(), `"meta_a", which quotesync does not know`) {
		t.Errorf("estimate_state with a meta_ column: err = %v, want it refused", err)
	}
}
