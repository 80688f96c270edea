package sync_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/shopdb/sampleshop"
	qsync "github.com/quotesync/quotesync/sync"
)

// findJobByInsurer is a find_job that finds only the jobs of the insurer
// whose request it runs for.
const findJobByInsurer = `SELECT j.job_no AS job FROM jobs j
WHERE j.claim_number = :claim_number AND j.status <> 'CANCELLED' AND j.insurer = :insurer`

// checkItems returns the items named name.
func checkItems(items []qsync.CheckItem, name string) []qsync.CheckItem {
	var out []qsync.CheckItem
	for _, it := range items {
		if it.Name == name {
			out = append(out, it)
		}
	}
	return out
}

// TestCheckRealRowsPerInsurer: check proves find_job and line_items on
// the shop's rows as each insurer's passes run them: find_job with
// :insurer bound to the insurer's name (the sample shop's jobs are aa's,
// one new job is bb's), the lines with the insurer's own work types (a
// GLASS line is unmapped for aa, mapped for bb). Each line names its
// insurer; estimate_state, the same for all, is read once. With one
// insurer the lines keep their plain names, and :insurer is its name.
func TestCheckRealRowsPerInsurer(t *testing.T) {
	p := newPair(t, func(s *qsync.Settings) {
		s.Shop.Queries.FindJob = findJobByInsurer
		wt := maps.Clone(s.Shop.WorkTypes)
		wt["GLASS"] = "Miscellaneous"
		s.Insurers[1].WorkTypes = wt
	})
	if _, err := p.d.SQL.ExecContext(p.ctx, "UPDATE jobs SET insurer = 'aa'"); err != nil {
		t.Fatal(err)
	}
	job, err := p.shop.CreateJob(p.ctx, "CLM-GLASS-BB", "GL 1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.shop.AddLine(p.ctx, job, sampleshop.Line{Code: "GLASS", Description: "Windscreen", Qty: d("1"), UnitPrice: price("310")}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.d.SQL.ExecContext(p.ctx, "UPDATE jobs SET insurer = 'bb' WHERE job_no = ?", job); err != nil {
		t.Fatal(err)
	}

	items := qsync.Check(p.ctx, p.set)
	one := func(name string) qsync.CheckItem {
		t.Helper()
		got := checkItems(items, name)
		if len(got) != 1 {
			t.Fatalf("check has %d lines %q, want 1:\n%+v", len(got), name, items)
		}
		return got[0]
	}
	aa, bb := one("real rows: find_job (aa)"), one("real rows: find_job (bb)")
	if aa.Status != qsync.CheckWarn || !strings.HasPrefix(aa.Detail, "4 of 5 sampled jobs found") || !strings.Contains(aa.Detail, "not found: "+job+" (claim CLM-GLASS-BB)") {
		t.Errorf("find_job as aa: %+v; want aa's 4 jobs found, bb's %s not", aa, job)
	}
	if bb.Status != qsync.CheckWarn || !strings.HasPrefix(bb.Detail, "1 of 5 sampled jobs found") || strings.Contains(bb.Detail, job) {
		t.Errorf("find_job as bb: %+v; want bb's job %s found, aa's not", bb, job)
	}
	var aaGlass, bbGlass bool
	for _, it := range checkItems(items, "real rows: line_items (aa)") {
		aaGlass = aaGlass || it.Status == qsync.CheckWarn && strings.Contains(it.Detail, "codes not under shop.work_types, on 1 job: GLASS ×1")
	}
	for _, it := range checkItems(items, "real rows: line_items (bb)") {
		bbGlass = bbGlass || strings.Contains(it.Detail, "GLASS")
	}
	if !aaGlass || bbGlass {
		t.Errorf("line_items: GLASS unmapped for aa %v (want true), for bb %v (want false):\n%+v", aaGlass, bbGlass, items)
	}
	if one("real rows: estimate_state").Status != qsync.CheckOK {
		t.Errorf("estimate_state: %+v", items)
	}
	for _, it := range items {
		if it.Name == "real rows: find_job" || it.Name == "real rows: line_items" {
			t.Errorf("with two insurers, a real rows line without its insurer: %+v", it)
		}
	}

	// One insurer (aa, under remotes:): plain names, :insurer is aa.
	p.set.Insurers = p.set.Insurers[:1]
	items = qsync.Check(p.ctx, p.set)
	if it := one("real rows: find_job"); !strings.HasPrefix(it.Detail, "4 of 5 sampled jobs found") {
		t.Errorf("find_job with aa alone: %+v; want its 4 jobs found", it)
	}
	if len(checkItems(items, "real rows: find_job (aa)")) > 0 {
		t.Errorf("with one insurer a real rows line names it:\n%+v", items)
	}
}
