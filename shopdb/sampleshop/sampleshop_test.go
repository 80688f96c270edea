package sampleshop_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

func TestStatements(t *testing.T) {
	script := "-- comment\nCREATE TABLE a (\n  x INT -- trailing\n);\n\n-- another\nINSERT INTO a VALUES (1);\nSELECT 'a;b' FROM a"
	got := sampleshop.Statements(script)
	want := []string{"CREATE TABLE a (\n  x INT -- trailing\n)", "INSERT INTO a VALUES (1)", "SELECT 'a;b' FROM a"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Statements (-want +got):\n%s", diff)
	}
}

func TestSampleData(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	shop := d.Shop()
	ctx := t.Context()
	for claim, want := range map[string]string{
		sampleshop.ClaimDraft: sampleshop.JobDraft, sampleshop.ClaimFinal: sampleshop.JobFinal,
		sampleshop.ClaimNoLines: sampleshop.JobNoLines, sampleshop.ClaimBadLine: sampleshop.JobBadLine, "CLM-NONE": "",
	} {
		if got, err := shop.FindJob(ctx, claim); err != nil || got != want {
			t.Errorf("FindJob(%s) = %q, %v; want %q", claim, got, err, want)
		}
	}
	lines, err := shop.Lines(ctx, sampleshop.JobDraft)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 4 || lines[0].UnitPrice.Decimal.String() != "95.5" || lines[0].UnitPrice.Decimal.Exponent() != -4 {
		t.Errorf("lines of %s = %+v, want 4 live lines, DECIMAL(12,4) prices", sampleshop.JobDraft, lines)
	}
	bad, err := shop.Lines(ctx, sampleshop.JobBadLine)
	if err != nil || len(bad) != 2 || bad[1].UnitPrice.Valid {
		t.Errorf("lines of %s = %+v, %v; want line 2 without a price", sampleshop.JobBadLine, bad, err)
	}
}

func TestShopPlaysTheShop(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	shop := d.Shop()
	ctx := t.Context()
	job, err := shop.CreateJob(ctx, "CLM-9", "ZZZ999")
	if err != nil {
		t.Fatal(err)
	}
	if job != "RO-50006" {
		t.Errorf("CreateJob = %s, want RO-50006 (the counter's next number)", job)
	}
	dec := decimal.RequireFromString
	l1, err := shop.AddLine(ctx, job, sampleshop.Line{Code: "R&R", Description: "Bonnet", Qty: dec("1.5"),
		UnitPrice: decimal.NewNullDecimal(dec("95.5"))})
	if err != nil {
		t.Fatal(err)
	}
	l2, err := shop.AddLine(ctx, job, sampleshop.Line{Code: "PART", Description: "Bonnet panel", PartNo: "P-1", Qty: dec("1"),
		UnitPrice: decimal.NewNullDecimal(dec("812.1234")), LineTotal: decimal.NewNullDecimal(dec("812.12"))})
	if err != nil {
		t.Fatal(err)
	}
	if l1.LineNo != 1 || l2.LineNo != 2 || l2.LineID <= l1.LineID {
		t.Errorf("line numbers %d, %d and ids %d, %d; want 1, 2 and increasing", l1.LineNo, l2.LineNo, l1.LineID, l2.LineID)
	}
	l1.Qty = dec("2")
	if err := shop.EditLine(ctx, l1); err != nil {
		t.Fatal(err)
	}
	if err := shop.DeleteLine(ctx, l2.LineID); err != nil {
		t.Fatal(err)
	}
	if err := shop.SetFinal(ctx, job, true); err != nil {
		t.Fatal(err)
	}
	if _, err := d.SQL.ExecContext(ctx, "UPDATE jobs SET booking_date = ? WHERE job_no = ?", "2030-03-04", job); err != nil {
		t.Fatal(err)
	}
	lines, err := shop.Lines(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || !lines[0].Qty.Equal(dec("2")) || lines[0].Description != "Bonnet" {
		t.Errorf("lines = %+v, want the edited bonnet line only", lines)
	}
	var status, booking, reg string
	if err := d.SQL.QueryRow(`SELECT e.status, j.booking_date, j.registration FROM estimates e JOIN jobs j ON j.job_id = e.job_id
WHERE j.job_no = ?`, job).Scan(&status, &booking, &reg); err != nil {
		t.Fatal(err)
	}
	if status != "FINAL" || booking[:10] != "2030-03-04" || reg != "ZZZ999" {
		t.Errorf("job %s: status %s booking %s registration %s", job, status, booking, reg)
	}
	if _, err := shop.AddLine(ctx, "RO-404", sampleshop.Line{}); !errors.Is(err, sampleshop.ErrNoSuchJob) {
		t.Errorf("AddLine to a missing job: %v, want ErrNoSuchJob", err)
	}
	if err := shop.DeleteLine(ctx, 999999); !errors.Is(err, sampleshop.ErrNoSuchJob) {
		t.Errorf("DeleteLine of a missing line: %v, want ErrNoSuchJob", err)
	}
}

func TestMappingFitsSchema(t *testing.T) {
	db, _ := shopdbtest.New(t)
	for _, c := range db.CheckQueries(t.Context(), nil, "") {
		if c.Err != nil {
			t.Errorf("%s: %v", c.Key, c.Err)
		}
	}
}

func TestGenerateJobs(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	jobs, err := d.Shop().GenerateJobs(t.Context(), 1500, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1500 || jobs[0] != "RO-50006" || jobs[1499] != "RO-51505" {
		t.Fatalf("jobs %d from %s to %s", len(jobs), jobs[0], jobs[len(jobs)-1])
	}
	var lines, next int
	if err := d.SQL.Get(&lines, "SELECT COUNT(*) FROM estimate_lines l JOIN estimates e ON e.estimate_id = l.estimate_id JOIN jobs j ON j.job_id = e.job_id WHERE j.claim_number LIKE 'GEN-%'"); err != nil {
		t.Fatal(err)
	}
	if err := d.SQL.Get(&next, "SELECT next_val FROM counters WHERE name = 'job'"); err != nil {
		t.Fatal(err)
	}
	if lines != 4500 || next != 51505 {
		t.Errorf("generated %d lines, counter %d; want 4500 and 51505", lines, next)
	}
	if job, err := d.Shop().CreateJob(t.Context(), "CLM-AFTER", ""); err != nil || job != "RO-51506" {
		t.Errorf("CreateJob after GenerateJobs = %s, %v; want RO-51506", job, err)
	}
}
