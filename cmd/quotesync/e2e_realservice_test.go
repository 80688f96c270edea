package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// The real binary against the emulator in the documented mode (and, where
// the situation exists there too, the spec mode): what a shop meets on a
// service that follows the public documentation. Each test is one
// situation and its right outcome.

// Log messages these tests look for (sync's log observer writes them).
const (
	e2eMsgAcceptUnknown  = "accept outcome unknown: probably ours; the first Draft push confirms it"
	e2eMsgTakenElsewhere = "request taken elsewhere: someone else accepted it"
	e2eMsgGone           = "request gone"
	e2eMsgDrafted        = "draft pushed"
	e2eMsgStatusForm     = "status path found"
	e2eMsgHeld           = "job held"
)

// verb runs `quotesync ARGS --config FILE` to its end (60s at most).
func (e *e2eEnv) verb(args ...string) e2eResult {
	e.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bin, append(args, "--config", e.Conf)...)
	cmd.Env = e.environ()
	out, err := cmd.CombinedOutput()
	res := e2eResult{Output: string(out)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	case err != nil:
		e.tb.Fatalf("run quotesync %v: %v", args, err)
	}
	if strings.Contains(res.Output, e.opts.Token) {
		e.tb.Errorf("quotesync %v printed the secret:\n%s", args, res.Output)
	}
	return res
}

// e2eLogLines returns the JSON log lines of out whose msg is msg.
func e2eLogLines(out, msg string) []map[string]any {
	var found []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == msg {
			found = append(found, m)
		}
	}
	return found
}

// mustLog fails unless out has exactly one log line msg at level, and
// returns it.
func mustLog(t *testing.T, what, out, msg, level string) map[string]any {
	t.Helper()
	lines := e2eLogLines(out, msg)
	if len(lines) != 1 || lines[0]["level"] != level {
		t.Fatalf("%s: log lines %q: %v; want one at %s\n%s", what, msg, lines, level, e2eTail(out, 15))
	}
	return lines[0]
}

// row reads quotesync's row of one request.
func (e *e2eEnv) row(t *testing.T, id string) e2eRow {
	t.Helper()
	rows, err := e.stateRows(e.sql)
	if err != nil {
		t.Fatal(err)
	}
	return rows[id]
}

// mustStatus runs `status ARGS` and fails unless it says every one of want.
func (e *e2eEnv) mustStatus(t *testing.T, what string, want []string, args ...string) string {
	t.Helper()
	r := e.verb(append([]string{"status"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("%s: status: exit %d\n%s", what, r.Code, r.Output)
	}
	for _, w := range want {
		if !strings.Contains(r.Output, w) {
			t.Errorf("%s: status does not say %q:\n%s", what, w, r.Output)
		}
	}
	return r.Output
}

// TestE2EAcceptLandedThenRefused: the service took our accept, the answer
// was lost, and the re-sent accept was refused "400 request already
// accepted". The request is probably ours (accept_unknown), said so in
// the log and by `status`; `retry` puts it back into the flow; the first
// Draft push to our job confirms it. Before the fix it ended rejected for
// good.
func TestE2EAcceptLandedThenRefused(t *testing.T) {
	t.Parallel()
	e := newE2E(t, e2eOptions{Mode: emulator.ModeDocumented})
	job := e.createJob("CLM-LOST-1") // no lines yet: nothing confirms it at once
	id := e.seed("CLM-LOST-1", "")
	e.Emu.AddFault(emulator.Fault{Route: e2eRouteAccept, Action: emulator.FaultLandThenDrop, Count: 1})
	// Pass 1: the accept lands, its answer is lost, the client re-sends it
	// within the call and gets 400; the list the pass read is older, so it
	// concludes nothing yet.
	e.mustOnce()
	if r, _ := e.Emu.State().Request(id); r.ReferenceID != job {
		t.Fatalf("the accept did not land: %+v", r)
	}
	res := e.once()
	if row := e.row(t, id); row.Phase != "accept_unknown" || row.Job != job {
		t.Fatalf("after the 400 to the re-sent accept: row %+v, want accept_unknown with job %s\n%s", row, job, e2eTail(res.Output, 10))
	}
	if !strings.Contains(res.Output, "accept outcome unknown 1") {
		t.Errorf("once does not say a request needs a person:\n%s", e2eTail(res.Output, 3))
	}
	l := mustLog(t, "pass 2", res.Output, e2eMsgAcceptUnknown, "warn")
	if d, _ := l["detail"].(string); !strings.Contains(d, "400") || !strings.Contains(d, "request already accepted") || !strings.Contains(d, job) {
		t.Errorf("the log's detail %q does not say what was inferred and why", d)
	}
	e.mustStatus(t, "accept_unknown", []string{id, "accept_unknown", "probably", "request already accepted", "retry"})

	// retry puts it back: the accept is sent again, refused again, and the
	// request is probably ours again (not rejected).
	if r := e.verb("retry", id); r.Code != 0 {
		t.Fatalf("retry %s: exit %d\n%s", id, r.Code, r.Output)
	}
	if row := e.row(t, id); row.Phase != "reserved" {
		t.Errorf("after retry: %s, want reserved", row.Phase)
	}
	calls := e.mustOnce()
	if calls[e2eRouteAccept] != 1 || e.row(t, id).Phase != "accept_unknown" {
		t.Errorf("the pass after retry: calls %s, phase %s; want the accept sent again and accept_unknown", e2eFmtCalls(calls), e.row(t, id).Phase)
	}

	// The shop writes lines: the first Draft push to our job confirms it.
	e.addLine(job, 1)
	res = e.once()
	if res.Code != 0 {
		t.Fatalf("once: exit %d\n%s", res.Code, res.Output)
	}
	if row := e.row(t, id); row.Phase != "drafted" || row.LastError != "" {
		t.Errorf("after the confirming push: %+v, want drafted", row)
	}
	if l := mustLog(t, "the confirming push", res.Output, e2eMsgDrafted, "info"); l["inferred"] != true {
		t.Errorf("the push's log line %v does not say it confirmed an inferred accept", l)
	}
	st := e.Emu.State()
	if rj, _ := st.Job(job); len(rj.Quotes) != 1 {
		t.Errorf("job %s holds %d quotes, want the Draft", job, len(rj.Quotes))
	}
	e.checkInvariants(true, "after the confirmation")
}

// TestE2ETakenElsewhere: another party (the insurer's portal) accepted the
// request with its own referenceId while our accept failed. The 409 to
// our next accept names it: taken_elsewhere, logged at warning level,
// shown by `status`, never drafted or submitted under our job; the job
// create_job made is released (the sample's release_job cancels it), a
// job of the front desk with lines is kept by the same query. In both modes (the spec mode's 409 names it too). Before the
// fix, the request was taken for ours, its Draft push failed with 404,
// and it ended gone with the wrong reason and its job number kept.
func TestE2ETakenElsewhere(t *testing.T) {
	for _, mode := range e2eModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t, e2eOptions{Mode: mode, MaxAttempts: 1, ReleaseJob: true})
			desk := e.createJob("CLM-ELSE-DESK") // the front desk's job, with lines, final
			e.addLine(desk, 1)
			if err := e.Shop.SetFinal(e.ctx(), desk, true); err != nil {
				t.Fatal(err)
			}
			idDesk := e.seed("CLM-ELSE-DESK", "")
			idNew := e.seed("CLM-ELSE-NEW", "ELSE01") // create_job makes its job
			e.Emu.AddFault(emulator.Fault{Route: e2eRouteAccept, Action: emulator.FaultStatus, Status: 503, Count: 2})
			e.once()
			created := e.row(t, idNew).Job
			if created == "" || e.row(t, idDesk).Job != desk {
				t.Fatalf("after the failed accepts: rows %+v %+v, want both reserved", e.row(t, idNew), e.row(t, idDesk))
			}
			for _, id := range []string{idDesk, idNew} {
				if err := e.Emu.TakeElsewhere(id, "PORTAL-"+id); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(400 * time.Millisecond) // the retry backoff (at most 200ms + 20%)
			res := e.once()
			if !strings.Contains(res.Output, "taken elsewhere 2") {
				t.Errorf("once does not say the requests need a person:\n%s", e2eTail(res.Output, 3))
			}
			lines := e2eLogLines(res.Output, e2eMsgTakenElsewhere)
			if len(lines) != 2 {
				t.Fatalf("taken elsewhere logged %d times, want 2:\n%s", len(lines), e2eTail(res.Output, 15))
			}
			for _, l := range lines {
				if d, _ := l["detail"].(string); l["level"] != "warn" || !strings.Contains(d, "PORTAL-") {
					t.Errorf("log line %v: want warn naming the other party's referenceId", l)
				}
			}
			for id, job := range map[string]string{idDesk: desk, idNew: created} {
				row := e.row(t, id)
				if row.Phase != "taken_elsewhere" || row.Job != "" || !strings.Contains(row.LastError, "PORTAL-"+id) {
					t.Errorf("request %s: %+v, want taken_elsewhere naming PORTAL-%s, its job number given up", id, row, id)
				}
				if _, ok := e.Emu.State().Job(job); ok {
					t.Errorf("our job %s exists on the remote", job)
				}
			}
			var status string
			if err := e.sql.Get(&status, "SELECT status FROM jobs WHERE job_no = ?", created); err != nil || status != "CANCELLED" {
				t.Errorf("the job create_job made for %s is %q (%v), want released (CANCELLED)", idNew, status, err)
			}
			if err := e.sql.Get(&status, "SELECT status FROM jobs WHERE job_no = ?", desk); err != nil || status != "OPEN" {
				t.Errorf("the front desk's job %s is %q (%v), want kept OPEN", desk, status, err)
			}
			for _, id := range []string{idDesk, idNew} {
				if row := e.row(t, id); !strings.Contains(row.LastError, "release_job") {
					t.Errorf("the report %q does not say what became of the job number", row.LastError)
				}
			}
			e.mustStatus(t, "taken elsewhere", []string{idDesk, idNew, "taken_elsewhere", "PORTAL-" + idDesk})
			// Never worked on again: no Draft, no submit.
			calls := e.mustOnce()
			if w := e2eWrites(calls); w != 0 {
				t.Errorf("a pass after worked on requests taken elsewhere: %s", e2eFmtCalls(calls))
			}
		})
	}
}

// TestE2EExpiredReported: a request whose accept failed and that expired
// meanwhile (the service declines it) is reported gone as expired, in the
// log and by `status --all`, never silently forgotten. In both modes.
func TestE2EExpiredReported(t *testing.T) {
	for _, mode := range e2eModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t, e2eOptions{Mode: mode, MaxAttempts: 1})
			e.createJob("CLM-EXP-1")
			id := e.Emu.AddRequests(emulator.SeedRequest{ClaimNumber: "CLM-EXP-1", Expiry: time.Now().Add(5 * time.Second)})[0]
			e.Emu.AddFault(emulator.Fault{Route: e2eRouteAccept, Action: emulator.FaultStatus, Status: 503, Count: 1})
			e.once()
			if row := e.row(t, id); row.Phase != "reserved" {
				t.Fatalf("after the failed accept: %+v", row)
			}
			time.Sleep(time.Until(e.Emu.State().Requests[0].Expiry) + 100*time.Millisecond)
			res := e.once()
			l := mustLog(t, "after expiry", res.Output, e2eMsgGone, "warn")
			if l["reason"] != "expired" {
				t.Errorf("gone for %v, want expired", l["reason"])
			}
			if row := e.row(t, id); row.Phase != "gone" || row.Job != "" {
				t.Errorf("row %+v, want gone with the job number given up", row)
			}
			e.mustStatus(t, "expired", []string{id, "gone", "expired"}, "--all")
		})
	}
}

// TestE2EStatusPathNotServed: a status change answered 404 (the default
// form refused, as by a service that serves another; or a configured
// form the documented service does not serve) rejects the job with the
// fix `remote.status_path: auto`; following it (the config changed, then
// `retry`) submits it.
func TestE2EStatusPathNotServed(t *testing.T) {
	cases := []struct {
		name         string
		path, method string
		fault        bool
	}{
		{"DefaultFormRefused", "", "", true},
		{"UndocumentedForm", "/jobs/{jobId}/quotes/{quoteId}/status", "PUT", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t, e2eOptions{Mode: emulator.ModeDocumented, StatusPath: tc.path, StatusMethod: tc.method})
			if tc.fault {
				e.Emu.AddFault(emulator.Fault{Route: e2eRouteStatus, Action: emulator.FaultStatus, Status: 404})
			}
			id := e.seed(sampleshop.ClaimFinal, "")
			e.once()
			row := e.row(t, id)
			if row.Phase != "rejected" || !strings.Contains(row.LastError, "remote.status_path: auto") {
				t.Fatalf("after a 404 to the status change: %+v, want rejected naming remote.status_path: auto", row)
			}
			e.mustStatus(t, "status path", []string{id, "rejected", "status_path: auto"})
			e.opts.StatusPath, e.opts.StatusMethod = "auto", ""
			e.writeConfig()
			if r := e.verb("retry", id); r.Code != 0 {
				t.Fatalf("retry: exit %d\n%s", r.Code, r.Output)
			}
			e.mustOnce()
			if row := e.row(t, id); row.Phase != "submitted" {
				t.Errorf("after status_path: auto and retry: %+v, want submitted", row)
			}
			e.checkInvariants(true, "after the fix")
		})
	}
}

// TestE2EStatusPathAutoKept: with `status_path: auto` against a service
// that does not serve the documented example (404), the documented prose's
// form is found, kept in quotesync's state, logged once at info level and
// shown by `status` and `check`; a restart does not probe again (the
// emulator's calls are counted).
func TestE2EStatusPathAutoKept(t *testing.T) {
	t.Parallel()
	e := newE2E(t, e2eOptions{Mode: emulator.ModeDocumented, StatusPath: "auto"})
	e.Emu.AddFault(emulator.Fault{Route: e2eRouteStatus, Action: emulator.FaultStatus, Status: 404})
	const found = "PUT /jobs/{jobId}/quote/status/{status}"
	e.mustOnce() // quotesync's tables created, nothing to submit
	e.mustStatus(t, "before the first submit", []string{"auto; not found yet"})
	id := e.seed(sampleshop.ClaimFinal, "")
	before := e.Emu.Calls()
	res := e.once()
	calls := e2eCallsDiff(before, e.Emu.Calls())
	if row := e.row(t, id); row.Phase != "submitted" || calls[found] != 1 || calls[e2eRouteStatus] != 1 {
		t.Fatalf("first submit with auto: row %+v, calls %s; want the documented prose's form found", row, e2eFmtCalls(calls))
	}
	if l := mustLog(t, "the probe", res.Output, e2eMsgStatusForm, "info"); l["route"] != found {
		t.Errorf("status path found: %v, want route %s", l, found)
	}
	e.mustStatus(t, "after the probe", []string{"auto; found and used: " + found})
	if r := e.verb("check"); !strings.Contains(r.Output, "auto; found earlier and used: "+found) {
		t.Errorf("check does not show the form found:\n%s", r.Output)
	}

	// A restart (each `once` is a new process) with another final estimate:
	// the kept form is used at once, and not logged again.
	e.addLine(sampleshop.JobDraft, 1)
	if err := e.Shop.SetFinal(e.ctx(), sampleshop.JobDraft, true); err != nil {
		t.Fatal(err)
	}
	id2 := e.seed(sampleshop.ClaimDraft, "")
	before = e.Emu.Calls()
	res = e.once()
	calls = e2eCallsDiff(before, e.Emu.Calls())
	if calls[e2eRouteStatus] != 0 || calls[found] != 1 || e.row(t, id2).Phase != "submitted" {
		t.Errorf("after a restart: calls %s, phase %s; want only %s", e2eFmtCalls(calls), e.row(t, id2).Phase, found)
	}
	if n := len(e2eLogLines(res.Output, e2eMsgStatusForm)); n != 0 {
		t.Errorf("the restarted daemon logged the form again (%d lines)", n)
	}
}

// TestE2EHeldReleasedAfterReload: a job held because its lines use a code
// the mapping does not know is pushed after the mapping is fixed and the
// daemon reloaded (SIGHUP), without its lines changing; after a restart
// with a fixed mapping, a job still held shows the reason of now.
func TestE2EHeldReleasedAfterReload(t *testing.T) {
	t.Parallel()
	e := newE2E(t, e2eOptions{Mode: emulator.ModeDocumented})
	job := sampleshop.JobNoLines
	id := e.seed(sampleshop.ClaimNoLines, "")
	e.mustOnce()
	glass := sampleshop.Line{Code: "GLASS", Description: "Windscreen", Qty: e2eDec("1"), UnitPrice: e2eNullDec("310.0000")}
	if _, err := e.Shop.AddLine(e.ctx(), job, glass); err != nil {
		t.Fatal(err)
	}
	p := e.start("run")
	e2eWaitFor(t, p, "the job held", func() bool { return len(e2eLogLines(p.out.String(), e2eMsgHeld)) > 0 })
	e.mustStatus(t, "held", []string{id, "unmapped", "GLASS"})

	e.opts.WorkTypes = map[string]string{"GLASS": "Parts"}
	e.writeConfig()
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	// Wait for quotesync's own record of the push, not only the remote's
	// copy: a SIGTERM between the answer and that write leaves the push
	// for the next pass to settle, which this test does not run.
	e2eWaitFor(t, p, "the Draft after the reload", func() bool {
		rj, _ := e.Emu.State().Job(job)
		q, ok := rj.Quote("Estimate")
		return ok && strings.Contains(string(q.Body), "Windscreen") && e.row(t, id).Phase == "drafted"
	})
	if code := p.stop(30 * time.Second); code != 0 {
		t.Errorf("run after SIGTERM: exit %d", code)
	}
	if row := e.row(t, id); row.Phase != "drafted" || row.LastError != "" {
		t.Errorf("after the reload: %+v, want drafted without a hold", row)
	}
	if out := e.mustStatus(t, "released", []string{id, "drafted"}); strings.Contains(out, "GLASS") {
		t.Errorf("status still shows the old hold:\n%s", out)
	}

	// A credit line with another unmapped code: held for the code; the code
	// mapped and the daemon restarted: held for the credit now.
	tow := sampleshop.Line{Code: "TOW", Description: "Towing refund", Qty: e2eDec("-1"), UnitPrice: e2eNullDec("80.0000")}
	if _, err := e.Shop.AddLine(e.ctx(), job, tow); err != nil {
		t.Fatal(err)
	}
	e.mustOnce()
	e.mustStatus(t, "held for TOW", []string{id, "TOW"})
	e.opts.WorkTypes["TOW"] = "Miscellaneous"
	e.writeConfig()
	e.mustOnce()
	if out := e.mustStatus(t, "held for the credit", []string{id, "allow_credits"}); strings.Contains(out, `"TOW"`) {
		t.Errorf("status shows the reason of then:\n%s", out)
	}
}
