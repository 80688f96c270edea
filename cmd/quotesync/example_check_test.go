package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/remote/redact"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	qsync "github.com/quotesync/quotesync/sync"
)

// exampleToken is the emulator's token in the example check.
const exampleToken = "tok-SECRET-example-6d0f"

// checkLines indexes a checklist by name (the last line of each name).
func checkLines(cl *checklist) map[string]qsync.CheckItem {
	m := map[string]qsync.CheckItem{}
	for _, it := range cl.items {
		m[it.Name] = it
	}
	return m
}

// TestExampleConfigPassesCheck runs check's logic on config.example.yaml
// against a real MariaDB holding the sample shop and the emulator, with
// only the addresses, the database name and the credentials changed: first
// on a fresh database (quotesync's tables not created yet), then after the
// migration, when the work-type check reads the lines of the jobs of the
// pending requests.
func TestExampleConfigPassesCheck(t *testing.T) {
	db := shopdbtest.NewSampleShop(t)
	emu, srv := mustEmulator(t, emulator.Options{Token: exampleToken, Seed: 1})
	emu.AddRequests(
		emulator.SeedRequest{ClaimNumber: sampleshop.ClaimDraft},
		emulator.SeedRequest{ClaimNumber: sampleshop.ClaimFinal},
		emulator.SeedRequest{ClaimNumber: sampleshop.ClaimBadLine},
		emulator.SeedRequest{ClaimNumber: "CLM-NEW-1"}, // no job: create_job would make one
	)

	fc := loadExample(t)
	dbc := db.Config()
	fc.Remote.BaseURL = srv.URL
	fc.Shop.Addr, fc.Shop.User, fc.Shop.Database = dbc.Addr, dbc.User, dbc.Database
	env := cfgExampleEnv(t, exampleToken, dbc.Password)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	cl := &checklist{}
	checkConfig(ctx, cl, filepath.Join(t.TempDir(), "config.yaml"), fc, env, redact.New())
	lines := checkLines(cl)
	// On a fresh database (no state tables yet) the jobs of the pending
	// requests are looked up all the same, and their codes checked.
	if wt := lines["work types"]; wt.Status != qsync.CheckOK || !strings.Contains(wt.Detail, "found for pending requests") {
		t.Errorf("work types on a fresh database: %+v, want the pending requests' jobs checked", wt)
	}
	assertAllPass(t, cl)
	if got := cl.code(); got != exitOK {
		t.Errorf("exit code on a fresh database %d, want 0", got)
	}
	for _, name := range []string{"config file", "secrets", "database", "state schema", "remote", "work types",
		"shop.queries.find_job", "shop.queries.create_job[3]", "shop.queries.booking_date",
		"shop.queries.line_items", "shop.queries.estimate_state"} {
		if _, ok := lines[name]; !ok {
			t.Errorf("no %q line in the checklist", name)
		}
	}
	if got := lines["state schema"].Detail; !strings.Contains(got, "do not exist yet") {
		t.Errorf("state schema on a fresh database: %q, want it to say the tables will be created", got)
	}
	if got := lines["remote"].Detail; !strings.Contains(got, "4 pending requests") {
		t.Errorf("remote: %q, want 4 pending requests", got)
	}

	// After the first start (the migration), the jobs of the pending
	// requests are looked up and their lines' codes checked.
	db.Open(t, db.Config())
	cl = &checklist{}
	checkConfig(ctx, cl, filepath.Join(t.TempDir(), "config.yaml"), fc, env, redact.New())
	assertAllPass(t, cl)
	lines = checkLines(cl)
	if got := lines["state schema"].Detail; !strings.Contains(got, "(current)") {
		t.Errorf("state schema after migration: %q, want current", got)
	}
	wt := lines["work types"].Detail
	for _, want := range []string{"3 jobs", "MECH", "PART", "PNT", "R&R", "RPR", "SUNDRY"} {
		if !strings.Contains(wt, want) {
			t.Errorf("work types: %q does not mention %q", wt, want)
		}
	}
	// RO-50005 has a line without a price: a warning, not a failure.
	if w := lines["shop data"]; w.Status != qsync.CheckWarn || !strings.Contains(w.Detail, sampleshop.JobBadLine) || !strings.Contains(w.Detail, "price") {
		t.Errorf("shop data line = %+v, want a warning naming %s and its price", w, sampleshop.JobBadLine)
	}
	var out strings.Builder
	printChecklist(&out, exampleConfigPath, cl)
	if strings.Contains(out.String(), exampleToken) {
		t.Errorf("the checklist shows the token:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "verdict: OK") {
		t.Errorf("verdict not OK:\n%s", out.String())
	}
	if got := cl.code(); got != exitOK {
		t.Errorf("exit code %d, want 0", got)
	}
}

// assertAllPass fails the test for every FAIL or skip line.
func assertAllPass(t *testing.T, cl *checklist) {
	t.Helper()
	for _, it := range cl.items {
		if it.Status == qsync.CheckFail || it.Status == qsync.CheckSkip {
			t.Errorf("%s %s: %s", it.Status, it.Name, it.Detail)
		}
	}
}

// cfgExampleEnv resolves ${CREDENTIALS_DIRECTORY} to a directory holding a
// token and a database password.
func cfgExampleEnv(t *testing.T, token, password string) func(string) string {
	t.Helper()
	dir := t.TempDir()
	for name, v := range map[string]string{"token": token, "db-password": password} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return func(k string) string {
		if k == "CREDENTIALS_DIRECTORY" {
			return dir
		}
		return ""
	}
}
