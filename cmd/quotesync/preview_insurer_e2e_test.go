package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// TestE2EPreviewInsurer: preview builds a job's quote as the pass of the
// insurer whose request holds it builds it. With two insurers, aa and bb
// (bb mapping GLASS itself), and quote_fields naming :insurer, each
// held job's preview carries its holder's name, its holder's work types
// and the hash the holder's pass pushed, and names the insurer; --json
// is the body the holder's service stored. A job no request holds needs
// --insurer; --insurer builds it as that insurer's, and may not name
// another insurer than a held job's.
func TestE2EPreviewInsurer(t *testing.T) {
	bbEmu, bbSrv := mustEmulator(t, emulator.Options{Token: bbToken, Seed: 7})
	e := newCLIEnv(t, func(fc *config.File) {
		twoInsurers(bbSrv.URL)(fc)
		fc.Shop.Queries.QuoteFields = `SELECT j.job_no AS job, :insurer AS payer FROM jobs j WHERE j.job_no IN (:jobs)`
		fc.Remotes[1].WorkTypes = map[string]string{"GLASS": "Miscellaneous"}
	})
	e.writeSecret("bb-token", bbToken)
	shop := e.DB.Shop()
	bbJob, err := shop.CreateJob(t.Context(), "CLM-BB-GLASS", "GL 1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := shop.AddLine(t.Context(), bbJob, sampleshop.Line{Code: "GLASS", Description: "Windscreen",
		Qty: decimal.RequireFromString("1"), UnitPrice: decimal.NewNullDecimal(decimal.RequireFromString("310"))}); err != nil {
		t.Fatal(err)
	}
	e.Emu.AddRequests(emulator.SeedRequest{ID: "7301", ClaimNumber: sampleshop.ClaimDraft})
	bbEmu.AddRequests(emulator.SeedRequest{ID: "7302", ClaimNumber: "CLM-BB-GLASS"})
	if r := e.run("once", "--config", e.Conf); r.Code != exitOK {
		t.Fatalf("once with two insurers:\n%s", r)
	}

	payer := func(body string) string {
		t.Helper()
		var q struct{ Payer string }
		if err := json.Unmarshal([]byte(body), &q); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		return q.Payer
	}
	for _, c := range []struct {
		insurer, job, request string
		emu                   *emulator.Emulator
	}{{"aa", sampleshop.JobDraft, "7301", e.Emu}, {"bb", bbJob, "7302", bbEmu}} {
		j, _ := c.emu.State().Job(c.job)
		stored, ok := j.Quote("Estimate")
		if !ok || payer(string(stored.Body)) != c.insurer {
			t.Fatalf("%s's service holds no Draft of %s with payer %s: %s", c.insurer, c.job, c.insurer, stored.Body)
		}
		r := e.run("preview", "--config", e.Conf, "--json", c.job)
		if r.Code != exitOK || payer(r.Stdout) != c.insurer {
			t.Errorf("preview --json of %s's job %s: want payer %s:\n%s", c.insurer, c.job, c.insurer, r)
		}
		var pushed string
		if err := e.DB.SQL.QueryRow("SELECT pushed_hash FROM quotesync_requests WHERE insurer = ? AND request_id = ?", c.insurer, c.request).Scan(&pushed); err != nil {
			t.Fatal(err)
		}
		r = e.run("preview", "--config", e.Conf, c.job)
		for _, want := range []string{"job " + c.job + " (insurer " + c.insurer + "):", "hash:         " + pushed,
			"a pass would: nothing (request " + c.request + ", drafted): the insurer holds this content"} {
			if r.Code != exitOK || !strings.Contains(r.Stdout, want) {
				t.Errorf("preview of %s's job %s does not say %q:\n%s", c.insurer, c.job, want, r)
			}
		}
	}

	// A job no request holds: whose quote it is must be said.
	free := sampleshop.JobNoLines
	if _, err := shop.AddLine(t.Context(), free, sampleshop.Line{Code: "GLASS", Description: "Windscreen",
		Qty: decimal.RequireFromString("1"), UnitPrice: decimal.NewNullDecimal(decimal.RequireFromString("310"))}); err != nil {
		t.Fatal(err)
	}
	r := e.run("preview", "--config", e.Conf, free)
	if r.Code != exitFailure || !strings.Contains(r.Stderr, "configured: aa, bb") || !strings.Contains(r.Stderr, "--insurer NAME") {
		t.Errorf("preview of a job no request holds, two insurers, no --insurer: want a refusal listing them:\n%s", r)
	}
	r = e.run("preview", "--config", e.Conf, "--insurer", "bb", "--json", free)
	if r.Code != exitOK || payer(r.Stdout) != "bb" || !strings.Contains(r.Stdout, `"Miscellaneous"`) {
		t.Errorf("preview --insurer bb --json of a free job: want bb's payer and work types:\n%s", r)
	}
	r = e.run("preview", "--config", e.Conf, "--insurer", "aa", free)
	if r.Code != exitOK || !strings.Contains(r.Stdout, "(insurer aa)") || !strings.Contains(r.Stdout, `"GLASS", which is not under shop.work_types`) {
		t.Errorf("preview --insurer aa of a free job: want aa's work types (GLASS unmapped):\n%s", r)
	}
	for _, args := range [][]string{{"--insurer", "zz", free}, {"--insurer", "bb", sampleshop.JobDraft}} {
		if r := e.run(append([]string{"preview", "--config", e.Conf}, args...)...); r.Code != exitFailure {
			t.Errorf("preview %s: want exit 1:\n%s", strings.Join(args, " "), r)
		}
	}
	if r := e.run("preview", "--help"); !strings.Contains(r.Stdout, "--insurer NAME") {
		t.Errorf("preview --help does not name --insurer:\n%s", r)
	}
}
