package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// bbToken is the second insurer's token.
const bbToken = "tok-SECRET-bb-2c9d07"

// twoInsurers makes the world's remote: block the first of remotes:,
// named aa, and adds bb, served by its own emulator; keep lists the
// insurers to write (both when empty).
func twoInsurers(bbURL string, keep ...string) func(fc *config.File) {
	return func(fc *config.File) {
		aa := config.RemoteEntry{Name: "aa", RemoteSection: fc.Remote}
		bb := config.RemoteEntry{Name: "bb", RemoteSection: fc.Remote}
		bb.BaseURL = bbURL
		bb.Token = config.TokenSection{File: "${CREDENTIALS_DIRECTORY}/bb-token"}
		bb.StatusPath = "auto"
		fc.Remote = config.RemoteSection{}
		for _, e := range []config.RemoteEntry{aa, bb} {
			if len(keep) == 0 || strings.Contains(strings.Join(keep, ","), e.Name) {
				fc.Remotes = append(fc.Remotes, e)
			}
		}
	}
}

// TestE2EInsurers drives the real binary with two insurers, each an
// emulator over real HTTP: request 7301 at both is tracked twice, each
// with its own job; config, check and insurers name both; with bb left
// out of the file, once and check refuse its live request, naming it,
// until insurers end bb --force ends it.
func TestE2EInsurers(t *testing.T) {
	bbEmu, bbSrv := mustEmulator(t, emulator.Options{Token: bbToken, Seed: 7})
	e := newCLIEnv(t, twoInsurers(bbSrv.URL))
	e.writeSecret("bb-token", bbToken)
	e.Emu.AddRequests(emulator.SeedRequest{ID: "7301", ClaimNumber: sampleshop.ClaimDraft})
	bbEmu.AddRequests(emulator.SeedRequest{ID: "7301", ClaimNumber: "CLM-BB-1"})
	noToken := func(r cliResult) {
		t.Helper()
		if strings.Contains(r.Stdout+r.Stderr, bbToken) {
			t.Errorf("bb's token printed:\n%s", r)
		}
	}

	// The dry run names each insurer: its counts, and the insurer of each
	// action. One insurer's service down hides none of the other's plan.
	r := e.run("once", "--config", e.Conf, "--dry-run")
	aaAction := regexp.MustCompile(`(?m)^aa\s+7301\s+` + sampleshop.ClaimDraft + `\s`)
	bbAction := regexp.MustCompile(`(?m)^bb\s+7301\s+CLM-BB-1\s`)
	if r.Code != exitOK || !strings.Contains(r.Stdout, "insurer aa: pending requests on the remote: 1;") ||
		!strings.Contains(r.Stdout, "insurer bb: pending requests on the remote: 1;") ||
		!regexp.MustCompile(`(?m)^INSURER\s+REQUEST\s`).MatchString(r.Stdout) || !aaAction.MatchString(r.Stdout) || !bbAction.MatchString(r.Stdout) {
		t.Errorf("once --dry-run: want each insurer's counts and its action of 7301:\n%s", r)
	}
	down := bbEmu.AddFault(emulator.Fault{Route: emulator.RouteListRequests, Action: emulator.FaultStatus, Status: 503})
	r = e.run("once", "--config", e.Conf, "--dry-run")
	if r.Code != exitFailure || !aaAction.MatchString(r.Stdout) || bbAction.MatchString(r.Stdout) ||
		!strings.Contains(r.Stdout, "insurer bb: plan failed") || !strings.Contains(r.Stderr, "quotesync once --dry-run: insurer bb: ") ||
		!strings.Contains(r.Stderr, "503") || strings.Contains(r.Stderr, "insurer aa") {
		t.Errorf("once --dry-run with bb's service down: want aa's plan, bb named with its error, exit 1:\n%s", r)
	}
	r = e.run("once", "--config", e.Conf, "--dry-run", "--json")
	var downPlan struct {
		Actions  []struct{ Insurer, Request string } `json:"actions"`
		Insurers []struct{ Insurer, Error string }   `json:"insurers"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &downPlan); r.Code != exitFailure || err != nil || len(downPlan.Actions) != 1 ||
		downPlan.Actions[0].Insurer != "aa" || len(downPlan.Insurers) != 2 || downPlan.Insurers[0].Error != "" || downPlan.Insurers[1].Error == "" {
		t.Errorf("once --dry-run --json with bb's service down: %v; want aa's action and bb's error, exit 1:\n%s", err, r)
	}
	bbEmu.RemoveFault(down)

	r = e.run("once", "--config", e.Conf, "--log-format", "console")
	noToken(r)
	if r.Code != exitOK {
		t.Fatalf("once with two insurers:\n%s", r)
	}
	jobs := map[string]string{}
	rows, err := e.DB.SQL.Query("SELECT insurer, COALESCE(job_number, '') FROM quotesync_requests WHERE request_id = '7301'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var ins, job string
		if err := rows.Scan(&ins, &job); err != nil {
			t.Fatal(err)
		}
		jobs[ins] = job
	}
	rows.Close()
	if len(jobs) != 2 || jobs["aa"] != sampleshop.JobDraft || jobs["bb"] == "" || jobs["bb"] == jobs["aa"] {
		t.Fatalf("rows of 7301: %v; want aa's with %s and bb's with a job of its own", jobs, sampleshop.JobDraft)
	}
	if rs, _ := bbEmu.State().Request("7301"); rs.ReferenceID != jobs["bb"] {
		t.Errorf("bb's service has 7301 accepted with %q, want %s", rs.ReferenceID, jobs["bb"])
	}
	if !strings.Contains(r.Stderr, `"insurer": "aa"`) || !strings.Contains(r.Stderr, `"insurer": "bb"`) {
		t.Errorf("once's log lines do not name both insurers:\n%s", r.Stderr)
	}

	r = e.run("once", "--config", e.Conf, "--dry-run", "--json")
	var plan struct {
		Actions  []struct{ Insurer, Request string } `json:"actions"`
		Insurers []struct{ Insurer, Error string }   `json:"insurers"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &plan); r.Code != exitOK || err != nil {
		t.Fatalf("once --dry-run --json: %v\n%s", err, r)
	}
	if len(plan.Insurers) != 2 || plan.Insurers[0].Insurer != "aa" || plan.Insurers[1].Insurer != "bb" {
		t.Errorf("once --dry-run --json names insurers %+v, want aa and bb", plan.Insurers)
	}
	r = e.run("config", "--config", e.Conf)
	for _, want := range []string{"remotes[aa].base_url", "remotes[bb].status_path", "remotes[bb].token"} {
		if r.Code != exitOK || !strings.Contains(r.Stdout, want) {
			t.Errorf("config does not list %s:\n%s", want, r)
		}
	}
	noToken(r)
	r = e.run("check", "--config", e.Conf)
	noToken(r)
	for _, want := range []string{"remote (aa)", "remote (bb)", "status change (bb)", "tokens: aa from file", "info  :insurer", "verdict: OK"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("check does not say %q:\n%s", want, r)
		}
	}
	r = e.run("insurers", "--config", e.Conf)
	if r.Code != exitOK || !strings.Contains(r.Stdout, "aa ") || !strings.Contains(r.Stdout, "bb ") {
		t.Errorf("insurers:\n%s", r)
	}
	r = e.run("retry", "--config", e.Conf, "7301")
	if r.Code != exitFailure || !strings.Contains(r.Stderr, "aa, bb") || !strings.Contains(r.Stderr, "--insurer") {
		t.Errorf("retry of 7301 without --insurer: want a refusal naming aa and bb:\n%s", r)
	}

	// bb is taken out of the file: its live request stops the start.
	e.writeConfig(twoInsurers(bbSrv.URL, "aa"))
	r = e.run("once", "--config", e.Conf)
	if r.Code != exitFailure || !strings.Contains(r.Stderr, "insurer bb: 1 live request (7301)") ||
		!strings.Contains(r.Stderr, "quotesync insurers end OLD --force") {
		t.Errorf("once with bb's request live and bb left out: want a refusal naming it:\n%s", r)
	}
	r = e.run("check", "--config", e.Conf)
	if r.Code != exitFailure || !strings.Contains(r.Stdout, "FAIL  insurers") {
		t.Errorf("check with bb's request live and bb left out:\n%s", r)
	}
	r = e.run("insurers", "end", "--config", e.Conf, "bb")
	if r.Code != exitUsage || !strings.Contains(r.Stdout, "7301 (claim CLM-BB-1") || !strings.Contains(r.Stderr, "--force") {
		t.Errorf("insurers end bb without --force: want the list and no change:\n%s", r)
	}
	r = e.run("insurers", "end", "--config", e.Conf, "--force", "bb")
	if r.Code != exitOK || !strings.Contains(r.Stdout, "1 request of insurer bb ended") {
		t.Fatalf("insurers end bb --force:\n%s", r)
	}
	var phase, reason, job string
	if err := e.DB.SQL.QueryRow("SELECT phase, reason, COALESCE(job_number, '') FROM quotesync_requests WHERE insurer = 'bb' AND request_id = '7301'").Scan(&phase, &reason, &job); err != nil ||
		phase != "gone" || reason != "insurer_ended" || job != jobs["bb"] {
		t.Errorf("bb's 7301 after end: %s %s job %q %v; want gone, insurer_ended, still holding %s (bb's service accepted it with that job)", phase, reason, job, err, jobs["bb"])
	}
	if r = e.run("once", "--config", e.Conf); r.Code != exitOK {
		t.Errorf("once after bb's requests ended:\n%s", r)
	}
	// One insurer left, under remotes:: a request id names its request.
	if r = e.run("history", "--config", e.Conf, "7301"); r.Code != exitOK || !strings.Contains(r.Stdout, sampleshop.JobDraft) {
		t.Errorf("history 7301 with aa alone:\n%s", r)
	}
}

// TestE2EInsurersAdoptKept: insurers adopt over a row written with no
// insurer whose request id the insurer tracks already adopts the others,
// leaves that one, and says which and what to do (exit 1), not the
// server's duplicate key error.
func TestE2EInsurersAdoptKept(t *testing.T) {
	_, bbSrv := mustEmulator(t, emulator.Options{Token: bbToken, Seed: 7})
	e := newCLIEnv(t, twoInsurers(bbSrv.URL))
	e.writeSecret("bb-token", bbToken)
	if r := e.run("insurers", "--config", e.Conf); r.Code != exitOK { // migrates
		t.Fatalf("insurers:\n%s", r)
	}
	for _, q := range []string{
		"INSERT INTO quotesync_requests (insurer, request_id, phase, created_at, updated_at) VALUES ('aa', '7305', 'gone', NOW(6), NOW(6))",
		"INSERT INTO quotesync_requests (request_id, phase, created_at, updated_at) VALUES ('7305', 'gone', NOW(6), NOW(6))",
		"INSERT INTO quotesync_requests (request_id, phase, created_at, updated_at) VALUES ('7306', 'gone', NOW(6), NOW(6))",
	} {
		if _, err := e.DB.SQL.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	r := e.run("insurers", "adopt", "--config", e.Conf, "aa")
	if r.Code != exitFailure || !strings.Contains(r.Stdout, "insurer aa adopted 1 request") ||
		!strings.Contains(r.Stderr, "insurer aa tracks 1 request (7305) already") || !strings.Contains(r.Stderr, "quotesync history --insurer aa ID") ||
		strings.Contains(r.Stderr, "1062") {
		t.Errorf("insurers adopt aa over aa's 7305: want 7306 adopted, 7305 named with the fix, exit 1:\n%s", r)
	}
}
