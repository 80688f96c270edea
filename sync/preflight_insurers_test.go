package sync_test

import (
	"context"
	"fmt"
	"maps"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
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

// TestCheckOldStateTables: quotesync's tables as an older quotesync left
// them (version 12, before the insurer columns), holding a request, are
// not a raw database error anywhere in check: the state schema line says
// which version they are at, which this quotesync needs and how to
// migrate (a warning: the next start does it), and the checks that read
// quotesync's rows leave them out and say why; with one insurer or two.
func TestCheckOldStateTables(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := shopdbtest.NewSampleShop(t)
	d.BuildSchema(t, 12)
	if _, err := d.SQL.ExecContext(ctx, `INSERT INTO quotesync_requests (request_id, claim_number, job_number, phase, request_json, created_at, updated_at, version)
VALUES ('7301', ?, ?, 'accepted', '{}', NOW(6), NOW(6), 1)`, sampleshop.ClaimDraft, sampleshop.JobDraft); err != nil {
		t.Fatal(err)
	}
	set := qsync.Settings{Shop: d.Config(), Sync: qsync.DefaultConfig()}
	for _, name := range pairNames {
		emu, err := emulator.New(emulator.Options{Token: pairToken(name), Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		emu.AddRequests(emulator.SeedRequest{ID: "8" + name, ClaimNumber: sampleshop.ClaimFinal})
		srv := httptest.NewServer(emu)
		t.Cleanup(srv.Close)
		set.Insurers = append(set.Insurers, qsync.Insurer{Name: name, Key: "remotes[" + name + "]",
			Remote: remote.Config{BaseURL: srv.URL, RateLimit: -1, MaxAttempts: 1, Timeout: 5 * time.Second}, Tokens: remote.StaticToken(pairToken(name))})
	}
	db, err := shopdb.Open(ctx, d.Config()) // not migrated
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, latest, err := store.New(db).SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2} {
		one := set
		one.Insurers = set.Insurers[:n]
		items := qsync.Check(ctx, one)
		for _, it := range items {
			if it.Status == qsync.CheckFail || strings.Contains(it.Detail, "1054") || strings.Contains(it.Detail, "Unknown column") {
				t.Errorf("%d insurers: check over version 12 tables: %+v", n, it)
			}
		}
		st := checkItems(items, "state schema")
		want := fmt.Sprintf("are at version 12, this quotesync needs %d: run 'quotesync once' (or start the daemon) to migrate them", latest)
		if len(st) != 1 || st[0].Status != qsync.CheckWarn || !strings.Contains(st[0].Detail, want) {
			t.Errorf("%d insurers: the state schema line %+v does not say %q", n, st, want)
		}
		wt := checkItems(items, "work types")
		if n == 2 {
			wt = checkItems(items, "work types (bb)")
		}
		if len(wt) != 1 || wt[0].Status != qsync.CheckOK || !strings.Contains(wt[0].Detail, "1 job (found for pending requests") ||
			!strings.Contains(wt[0].Detail, "tracks are left out until its tables are migrated") {
			t.Errorf("%d insurers: the work types line %+v; want the pending request's job checked, the tracked ones left out", n, wt)
		}
	}
}
