package main

import (
	"strings"
	"testing"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// TestE2EOldStateTables: quotesync's tables as a quotesync of version 12
// left them (before requests were keyed by insurer), holding a request.
// status and history refuse them plainly, naming the version they are at,
// the one this quotesync needs and how to migrate, never a raw database
// error; check passes with a warning that says the same. With two
// insurers, whose the old request is cannot be checked yet (skip); with
// one, `once` migrates and status then shows the request.
func TestE2EOldStateTables(t *testing.T) {
	_, bbSrv := mustEmulator(t, emulator.Options{Token: bbToken, Seed: 7})
	for _, tc := range []struct {
		name string
		two  bool
	}{{"one insurer", false}, {"two insurers", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCLIEnv(t, nil)
			if tc.two {
				e.writeConfig(twoInsurers(bbSrv.URL))
				e.writeSecret("bb-token", bbToken)
			}
			e.DB.BuildSchema(t, 12)
			if _, err := e.DB.SQL.Exec(`INSERT INTO quotesync_requests (request_id, claim_number, job_number, phase, request_json, created_at, updated_at, version)
VALUES ('7301', ?, ?, 'accepted', '{}', NOW(6), NOW(6), 1)`, sampleshop.ClaimDraft, sampleshop.JobDraft); err != nil {
				t.Fatal(err)
			}
			const want = "are at version 12, this quotesync needs "
			raw := func(r cliResult) bool {
				return strings.Contains(r.Stdout+r.Stderr, "1054") || strings.Contains(r.Stdout+r.Stderr, "Unknown column")
			}
			for _, args := range [][]string{{"status"}, {"status", "--json"}, {"history", "7301"}} {
				r := e.run(append(args, "--config", e.Conf)...)
				if r.Code != exitFailure || raw(r) || !strings.Contains(r.Stderr, want) || !strings.Contains(r.Stderr, "run 'quotesync once' or start the daemon once to migrate them") {
					t.Errorf("%s over version 12 tables: want exit 1 saying the versions and how to migrate:\n%s", strings.Join(args, " "), r)
				}
			}
			r := e.run("check", "--config", e.Conf)
			if r.Code != exitOK || raw(r) || !strings.Contains(r.Stdout, "warn  state schema") || !strings.Contains(r.Stdout, want) ||
				!strings.Contains(r.Stdout, "run 'quotesync once' (or start the daemon) to migrate them") {
				t.Errorf("check over version 12 tables: want a warning saying the versions and how to migrate, and no failure:\n%s", r)
			}
			if tc.two {
				if !strings.Contains(r.Stdout, "skip  insurers") || !strings.Contains(r.Stdout, "quotesync insurers adopt NAME") {
					t.Errorf("check over version 12 tables with two insurers: want the insurers line skipped, naming adopt:\n%s", r)
				}
				return
			}
			if r := e.run("once", "--config", e.Conf); r.Code != exitOK {
				t.Fatalf("once over version 12 tables:\n%s", r)
			}
			if r := e.run("status", "--config", e.Conf); r.Code != exitOK || !strings.Contains(r.Stdout, "7301") {
				t.Errorf("status once migrated: want 7301 shown:\n%s", r)
			}
		})
	}
}
