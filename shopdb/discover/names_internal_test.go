package discover

import (
	"context"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// TestNumberExprPastItsPadding: a padded number that outgrows its width
// keeps its digits (MySQL's LPAD alone cuts it: RO-1000000 would become
// RO-100000, an existing job's number).
func TestNumberExprPastItsPadding(t *testing.T) {
	d := shopdbtest.NewDatabase(t)
	p := &Proposal{JobNumber: &Column{Name: "ro_number", DataType: "varchar"}, Numbering: Numbering{Prefix: "RO-", Width: 6}}
	for v, want := range map[string]string{"452": "RO-000452", "999999": "RO-999999", "1000000": "RO-1000000"} {
		var got string
		if err := d.SQL.QueryRowContext(context.Background(), "SELECT "+p.numberExpr(v)).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("number of %s = %q, want %q", v, got, want)
		}
	}
}

// TestMaxPlusOneCountsCharacters: a prefix of non-ASCII letters is cut and
// compared by characters, as the server counts them, not by bytes.
func TestMaxPlusOneCountsCharacters(t *testing.T) {
	d := shopdbtest.NewDatabase(t)
	ctx := context.Background()
	for _, stmt := range []string{
		"CREATE TABLE auftrag (id INT AUTO_INCREMENT PRIMARY KEY, nummer VARCHAR(20) NOT NULL UNIQUE, schaden_nr VARCHAR(20))",
		"INSERT INTO auftrag (nummer, schaden_nr) VALUES ('Ü-41', 'S1'), ('Ü-42', 'S2')",
	} {
		if _, err := d.SQL.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	job := &Table{Name: "auftrag"}
	p := &Proposal{Job: job, JobNumber: &Column{Name: "nummer", DataType: "varchar"}, Numbering: Numbering{Method: "max_plus_one", Prefix: "Ü-"},
		Defaults: map[*Table]map[string]string{}}
	q := Queries{Notes: map[string][]Note{}}
	stmts := p.createJob(&q)
	insert := stmts[0]
	if !strings.Contains(insert, "SUBSTRING(x.nummer, 3)") || !strings.Contains(insert, "LEFT(x.nummer, 2)") {
		t.Fatalf("the prefix is not counted in characters:\n%s", insert)
	}
	tx, err := d.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, insert); err != nil {
		t.Fatal(err)
	}
	var max string
	if err := tx.QueryRowContext(ctx, "SELECT nummer FROM auftrag ORDER BY id DESC LIMIT 1").Scan(&max); err != nil {
		t.Fatal(err)
	}
	if max != "Ü-43" {
		t.Errorf("the next number is %q, want Ü-43", max)
	}
}
