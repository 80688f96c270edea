package shopdb_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/shopdb"
)

// rv is a row of fixture_lines: job nil for a NULL job.
type rv struct {
	job *string // nil: NULL job
	row fixtureRow
}

// rowOf is a good line of job with the given line id and line_no.
func rowOf(job, id, no string) rv {
	r := good()
	r.lineID, r.lineNo = s(id), s(no)
	return rv{job: s(job), row: r}
}

// badOf is rowOf with a price that is not a number.
func badOf(job, id, no string) rv {
	x := rowOf(job, id, no)
	x.row.price = s("TBC")
	return x
}

// apartCase is an order of line_items' rows (ask: the jobs asked).
type apartCase struct {
	name string
	ask  []string
	rows []rv
}

// apartCases are the orders in which a shop's query may return rows:
// each job's together, or apart (ABA), with case variants of a job
// number, duplicate line ids split across runs, bad rows in either run,
// jobs not asked, asked with no rows, asked twice, and NULL jobs.
func apartCases() []apartCase {
	A, B, C := "RO-A", "RO-B", "RO-C"
	return []apartCase{
		{"ABA", []string{A, B}, []rv{rowOf(A, "1", "1"), rowOf(B, "1", "1"), rowOf(A, "2", "2")}},
		{"ABAB", []string{A, B}, []rv{rowOf(A, "1", "1"), rowOf(B, "1", "1"), rowOf(A, "2", "2"), rowOf(B, "2", "2")}},
		{"AABA", []string{A, B}, []rv{rowOf(A, "1", "1"), rowOf(A, "3", "3"), rowOf(B, "1", "1"), rowOf(A, "2", "2")}},
		{"ABCBA", []string{A, B, C}, []rv{rowOf(A, "1", "1"), rowOf(B, "1", "1"), rowOf(C, "1", "1"), rowOf(B, "2", "2"), rowOf(A, "2", "2")}},
		{"caseVariants", []string{A, B}, []rv{rowOf("ro-a", "1", "1"), rowOf(B, "1", "1"), rowOf(A, "2", "2"), rowOf("Ro-A", "3", "3")}},
		{"bothSpellingsAsked", []string{A, "ro-a", B}, []rv{rowOf("Ro-A", "1", "1"), rowOf(B, "1", "1"), rowOf(A, "2", "2"), rowOf("ro-a", "3", "3")}},
		{"dupIDsSplit", []string{A, B}, []rv{rowOf(A, "1", "1"), rowOf(B, "1", "1"), rowOf(A, "1", "2")}},
		{"badFirstRun", []string{A, B}, []rv{badOf(A, "1", "1"), rowOf(B, "1", "1"), rowOf(A, "2", "2")}},
		{"badSecondRun", []string{A, B}, []rv{rowOf(A, "1", "1"), rowOf(B, "1", "1"), badOf(A, "2", "2")}},
		{"onlyBad", []string{A, B}, []rv{badOf(A, "1", "1"), badOf(B, "1", "1"), badOf(A, "2", "2")}},
		{"unaskedBetween", []string{A, B}, []rv{rowOf(A, "1", "1"), rowOf("RO-X", "1", "1"), rowOf(A, "2", "2"), rowOf(B, "1", "1")}},
		{"askedNoRows", []string{A, B, C}, []rv{rowOf(A, "1", "1"), rowOf(B, "1", "1"), rowOf(A, "2", "2")}},
		{"dupAsk", []string{A, A, B, ""}, []rv{rowOf(A, "1", "1"), rowOf(B, "1", "1"), rowOf(A, "2", "2")}},
		{"nullJobAfterApart", []string{A, B}, []rv{rowOf(A, "1", "1"), rowOf(B, "1", "1"), {job: nil, row: good()}, rowOf(A, "2", "2")}},
		{"nullJobFirst", []string{A, B}, []rv{{job: nil, row: good()}, rowOf(A, "1", "1")}},
	}
}

// TestEachLinesInterleavings: for each interleaving, on a fresh pool
// (linesApart false), EachLines' last call per job is Lines' entry, every
// job with rows gets a call, and errors agree; then again with the flag set.
func TestEachLinesInterleavings(t *testing.T) {
	_, d := fixtureDB(t, false)
	cfg := d.Config()
	cfg.Queries.LineItems = `SELECT job, line_id, line_no, code, description, part_number, quantity, price, total
FROM fixture_lines WHERE job IN (:jobs) OR job IS NULL ORDER BY seq`
	for _, c := range apartCases() {
		t.Run(c.name, func(t *testing.T) {
			if _, err := d.SQL.Exec("DELETE FROM fixture_lines"); err != nil {
				t.Fatal(err)
			}
			for _, x := range c.rows {
				r := x.row
				if _, err := d.SQL.Exec("INSERT INTO fixture_lines (job, line_id, line_no, code, description, part_number, quantity, price, total) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
					x.job, r.lineID, r.lineNo, r.code, r.desc, r.part, r.qty, r.price, r.total); err != nil {
					t.Fatal(err)
				}
			}
			db := d.Open(t, cfg)
			want, werr := db.Lines(testContext(t), c.ask)
			for try := range 2 {
				got, calls := map[string]shopdb.JobLines{}, map[string]int{}
				gerr := db.EachLines(testContext(t), c.ask, func(job string, jl shopdb.JobLines) { got[job] = jl; calls[job]++ })
				if (gerr == nil) != (werr == nil) {
					t.Errorf("try %d: EachLines err %v, Lines err %v", try, gerr, werr)
				}
				if werr != nil {
					t.Logf("try %d: both fail: %v / %v; calls before the error %v", try, werr, gerr, calls)
					continue
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("try %d: last calls differ from Lines (-Lines +EachLines):\n%s", try, diff)
				}
				t.Logf("try %d: calls %v", try, calls)
			}
		})
	}
}

// TestEachLinesRowsGoneBeforeReRead: a job whose rows come apart, all its
// rows deleted (or soft-deleted) before the re-read: its last call should
// say what the re-read saw (no lines), not the first statement's part.
func TestEachLinesRowsGoneBeforeReRead(t *testing.T) {
	db, d := fixtureDB(t, false)
	A, B := "RO-A", "RO-B"
	for _, x := range []rv{rowOf(A, "1", "1"), rowOf(A, "2", "2"), rowOf(B, "1", "1"), rowOf(A, "3", "3")} {
		r := x.row
		if _, err := d.SQL.Exec("INSERT INTO fixture_lines (job, line_id, line_no, code, description, part_number, quantity, price, total) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
			x.job, r.lineID, r.lineNo, r.code, r.desc, r.part, r.qty, r.price, r.total); err != nil {
			t.Fatal(err)
		}
	}
	last := map[string]shopdb.JobLines{}
	var order []string
	err := db.EachLines(testContext(t), []string{A, B}, func(job string, jl shopdb.JobLines) {
		if job == A && len(order) == 0 {
			// The shop deletes the job's lines while the statement is read.
			if _, err := d.SQL.Exec("DELETE FROM fixture_lines WHERE job = ?", A); err != nil {
				t.Error(err)
			}
		}
		order = append(order, fmt.Sprintf("%s:%d", job, len(jl.Lines)))
		last[job] = jl
	})
	if err != nil {
		t.Fatal(err)
	}
	now, err := db.Lines(testContext(t), []string{A, B})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("calls %v; Lines now: %d lines for %s", order, len(now[A].Lines), A)
	if n := len(last[A].Lines); n != len(now[A].Lines) {
		t.Errorf("job %s: last call holds %d lines (a part of the first statement's 3), the re-read found %d: the job's last call is not complete", A, n, len(now[A].Lines))
	}
}
