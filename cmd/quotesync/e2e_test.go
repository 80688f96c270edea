package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// Route names the daemon uses with its default configuration.
const (
	e2eRouteList   = emulator.RouteListRequests
	e2eRouteAccept = emulator.RouteAccept
	e2eRouteQuote  = emulator.RouteCreateQuote
	e2eRoutePut    = emulator.RouteUpdateQuote
	e2eRouteStatus = "POST /jobs/{jobId}/quotes/status/{status}" // the default form
)

// e2eWantCalls fails when a pass's remote calls differ from want.
func e2eWantCalls(t *testing.T, step string, got, want map[string]int) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: remote calls (-want +got):\n%s", step, diff)
	}
}

// TestE2ELifecycle drives the real binary through a request's whole life
// with `once`: accepted with the shop's job numbers (found, and created by
// create_job), Draft pushed when lines appear, re-pushed exactly once per
// change, Submitted exactly once when final, and idle passes that only list.
// It runs against both emulator modes: in the documented one, the default
// status form is one the service serves.
func TestE2ELifecycle(t *testing.T) {
	for _, mode := range e2eModes {
		t.Run(mode, func(t *testing.T) { testE2ELifecycle(t, e2eOptions{Mode: mode}) })
	}
}

func testE2ELifecycle(t *testing.T, opts e2eOptions) {
	e := newE2E(t, opts)
	jobB := e.createJob("CLM-E2E-B") // the front desk made a job, no lines yet
	reqA := e.seed(sampleshop.ClaimDraft, "KLM123")
	reqB := e.seed("CLM-E2E-B", "")
	reqC := e.seed("CLM-E2E-C", "E2E777") // no job: create_job makes one

	calls := e.mustOnce()
	e2eWantCalls(t, "pass 1", calls, map[string]int{e2eRouteList: 1, e2eRouteAccept: 3, e2eRouteQuote: 1})
	st := e.Emu.State()
	jobC, err := e.Shop.FindJob(e.ctx(), "CLM-E2E-C")
	if err != nil || jobC == "" {
		t.Fatalf("create_job made no job for CLM-E2E-C: %q, %v", jobC, err)
	}
	for req, want := range map[string]string{reqA: sampleshop.JobDraft, reqB: jobB, reqC: jobC} {
		if r, _ := st.Request(req); r.ReferenceID != want {
			t.Errorf("request %s accepted with %q, want the shop's job %s", req, r.ReferenceID, want)
		}
	}
	if r, _ := st.Request(reqA); r.BookingDate != "2025-07-14" {
		t.Errorf("request %s accepted with bookingDate %q, want the shop's 2025-07-14", reqA, r.BookingDate)
	}
	var reg string
	if err := e.sql.Get(&reg, "SELECT registration FROM jobs WHERE job_no = ?", jobC); err != nil || reg != "E2E777" {
		t.Errorf("job %s created with registration %q (%v), want E2E777 from the request's vehicle", jobC, reg, err)
	}
	e.checkInvariants(true, "after pass 1")

	e2eWantCalls(t, "idle pass", e.mustOnce(), map[string]int{e2eRouteList: 1})

	lineB := e.addLine(jobB, 1)
	e.addLine(jobB, 2)
	lineC := e.addLine(jobC, 3)
	e.addLine(jobC, 4)
	e.addLine(jobC, 5)
	e2eWantCalls(t, "lines added", e.mustOnce(), map[string]int{e2eRouteList: 1, e2eRouteQuote: 2})
	e.checkInvariants(true, "after the first drafts")

	lineB.Qty = e2eDec("2.250")
	if err := e.Shop.EditLine(e.ctx(), lineB); err != nil {
		t.Fatal(err)
	}
	e2eWantCalls(t, "line of B changed", e.mustOnce(), map[string]int{e2eRouteList: 1, e2eRouteQuote: 1})
	e2eWantCalls(t, "idle pass after the change", e.mustOnce(), map[string]int{e2eRouteList: 1})
	e.checkInvariants(true, "after the re-push")

	if err := e.Shop.SetFinal(e.ctx(), jobB, true); err != nil {
		t.Fatal(err)
	}
	e2eWantCalls(t, "B final", e.mustOnce(), map[string]int{e2eRouteList: 1, e2eRouteStatus: 1})

	if err := e.Shop.DeleteLine(e.ctx(), lineC.LineID); err != nil {
		t.Fatal(err)
	}
	e.addLine(jobC, 6)
	if err := e.Shop.SetFinal(e.ctx(), jobC, true); err != nil {
		t.Fatal(err)
	}
	e2eWantCalls(t, "C changed and final", e.mustOnce(), map[string]int{e2eRouteList: 1, e2eRouteQuote: 1, e2eRouteStatus: 1})
	for i := range 2 {
		e2eWantCalls(t, fmt.Sprintf("idle pass %d after submission", i+1), e.mustOnce(), map[string]int{e2eRouteList: 1})
	}
	e.checkInvariants(true, "after submission")

	st = e.Emu.State()
	for _, job := range []string{jobB, jobC} {
		rj, _ := st.Job(job)
		q, _ := rj.Quote("Estimate")
		if q.Status != emulator.StatusSubmitted || q.SubmitCount != 1 {
			t.Errorf("job %s: quote %s, submitted %d times; want Submitted once", job, q.Status, q.SubmitCount)
		}
	}
	var kinds []string
	for _, h := range st.History {
		if h.JobID == jobB {
			kinds = append(kinds, h.Kind)
		}
	}
	if want := []string{emulator.HistoryAccept, emulator.HistoryQuoteCreate, emulator.HistoryQuoteReplace, emulator.HistoryStatusChange}; !cmp.Equal(kinds, want) {
		t.Errorf("history of job %s = %v, want %v", jobB, kinds, want)
	}

	// A change after submission is flagged once and never pushed.
	lineB.Description = "changed after submission"
	if err := e.Shop.EditLine(e.ctx(), lineB); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		e2eWantCalls(t, fmt.Sprintf("pass %d after a change to a submitted job", i+1), e.mustOnce(), map[string]int{e2eRouteList: 1})
	}
	rows, err := e.stateRows(e.sql)
	if err != nil {
		t.Fatal(err)
	}
	if r := rows[reqB]; r.Phase != "submitted" || !r.Supplement {
		t.Errorf("row of %s after a change to its submitted quote: %+v, want submitted with a supplement flagged", reqB, r)
	}
	e.checkInvariants(false, "after a change to a submitted job")
}

// TestE2ERunDaemon runs `quotesync run` on a one-second schedule while the
// shop works: the request is accepted, its Draft pushed, submitted once
// when final; later ticks only list; SIGTERM stops it with exit 0.
func TestE2ERunDaemon(t *testing.T) {
	e := newE2E(t, e2eOptions{Schedule: "@every 1s"})
	job := e.createJob("CLM-RUN-1")
	e.addLine(job, 1)
	req := e.seed("CLM-RUN-1", "")
	p := e.start("run")
	e2eWaitFor(t, p, "the first Draft", func() bool {
		rj, ok := e.Emu.State().Job(job)
		_, drafted := rj.Quote("Estimate")
		return ok && drafted
	})
	e.addLine(job, 2)
	if err := e.Shop.SetFinal(e.ctx(), job, true); err != nil {
		t.Fatal(err)
	}
	e2eWaitFor(t, p, "submission", func() bool {
		rj, _ := e.Emu.State().Job(job)
		q, _ := rj.Quote("Estimate")
		return q.Status == emulator.StatusSubmitted
	})
	before := e.Emu.Calls()
	e2eWaitFor(t, p, "two more ticks", func() bool { return e2eCallsDiff(before, e.Emu.Calls())[e2eRouteList] >= 2 })
	if w := e2eWrites(e2eCallsDiff(before, e.Emu.Calls())); w != 0 {
		t.Errorf("ticks after submission made %d remote writes: %s", w, e2eFmtCalls(e2eCallsDiff(before, e.Emu.Calls())))
	}
	if code := p.stop(30 * time.Second); code != 0 {
		t.Errorf("run after SIGTERM: exit %d, want 0\n%s", code, e2eTail(p.out.String(), 20))
	}
	if r, _ := e.Emu.State().Request(req); r.ReferenceID != job {
		t.Errorf("request %s accepted with %q, want %s", req, r.ReferenceID, job)
	}
	e.checkInvariants(true, "after run")
	if strings.Contains(p.out.String(), e2eToken) {
		t.Errorf("run printed the token")
	}
}

// e2eWaitFor polls cond until it holds; it fails when the process exits or
// a generous deadline passes.
func e2eWaitFor(t testing.TB, p *e2eProc, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if p.exited() {
			t.Fatalf("waiting for %s: quotesync exited %d:\n%s", what, p.code, e2eTail(p.out.String(), 20))
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: not after 60s:\n%s", what, e2eTail(p.out.String(), 20))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// dbFingerprint is every table of the test database: its CHECKSUM TABLE
// (content) and row count.
func (e *e2eEnv) dbFingerprint() map[string]string {
	e.tb.Helper()
	var tables []string
	if err := e.sql.Select(&tables, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name"); err != nil {
		e.tb.Fatal(err)
	}
	out := make(map[string]string, len(tables))
	for _, tb := range tables {
		var name string
		var sum *int64
		if err := e.sql.QueryRow("CHECKSUM TABLE `"+tb+"`").Scan(&name, &sum); err != nil || sum == nil {
			e.tb.Fatalf("checksum table %s: %v", tb, err)
		}
		var n int
		if err := e.sql.Get(&n, "SELECT COUNT(*) FROM `"+tb+"`"); err != nil {
			e.tb.Fatal(err)
		}
		out[tb] = fmt.Sprintf("checksum %d, %d rows", *sum, n)
	}
	return out
}

// emuFingerprint is the emulator's whole state as JSON (its clock left out).
func (e *e2eEnv) emuFingerprint() string {
	st := e.Emu.State()
	st.Now = time.Time{}
	b, err := json.Marshal(st)
	if err != nil {
		e.tb.Fatal(err)
	}
	return string(b)
}

// TestE2EDryRun checks that `once --dry-run` writes nothing anywhere (the
// emulator's state, every shop table and quotesync's state tables compared
// byte for byte, by CHECKSUM TABLE and row counts) while its plan names
// the accept, the push and the submit a pass would do.
func TestE2EDryRun(t *testing.T) {
	e := newE2E(t, e2eOptions{})
	jobB := e.createJob("CLM-DRY-B")
	e.addLine(jobB, 1)
	reqA := e.seed(sampleshop.ClaimDraft, "")
	reqB := e.seed("CLM-DRY-B", "")
	e.mustOnce()
	// What a pass would now do: accept two new requests (one whose job
	// create_job would make), push A's changed lines, submit B.
	reqN := e.seed("CLM-DRY-NEW", "DRY001")
	reqF := e.seed(sampleshop.ClaimNoLines, "")
	e.addLine(sampleshop.JobDraft, 7)
	if err := e.Shop.SetFinal(e.ctx(), jobB, true); err != nil {
		t.Fatal(err)
	}
	db0, emu0, calls0 := e.dbFingerprint(), e.emuFingerprint(), e.Emu.Calls()

	res := e.once("--dry-run", "--json")
	if res.Code != 0 {
		t.Fatalf("once --dry-run --json: exit %d\n%s", res.Code, res.Output)
	}
	text := e.once("--dry-run")
	if text.Code != 0 {
		t.Fatalf("once --dry-run: exit %d\n%s", text.Code, text.Output)
	}
	if diff := cmp.Diff(db0, e.dbFingerprint()); diff != "" {
		t.Errorf("dry run changed the database (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(emu0, e.emuFingerprint()); diff != "" {
		t.Errorf("dry run changed the emulator's state (-before +after):\n%s", diff)
	}
	e2eWantCalls(t, "two dry runs", e2eCallsDiff(calls0, e.Emu.Calls()), map[string]int{e2eRouteList: 2})

	var plan struct {
		Pending, Tracked int
		Actions          []struct{ Request, Job, Do, Why string }
	}
	start := strings.Index(res.Output, "{")
	if start < 0 || json.NewDecoder(bytes.NewReader([]byte(res.Output[start:]))).Decode(&plan) != nil {
		t.Fatalf("dry run printed no JSON plan:\n%s", res.Output)
	}
	got := map[string]string{}
	for _, a := range plan.Actions {
		got[a.Request] = a.Do + " " + a.Job
	}
	want := map[string]string{
		reqN: "create job and accept ",
		reqF: "reserve job and accept " + sampleshop.JobNoLines,
		reqA: "push draft " + sampleshop.JobDraft,
		reqB: "submit " + jobB,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plan actions (-want +got):\n%s\nplan: %+v", diff, plan)
	}
	if plan.Pending != 2 || plan.Tracked != 2 {
		t.Errorf("plan counts %d pending, %d tracked; want 2 and 2", plan.Pending, plan.Tracked)
	}
	for _, s := range []string{reqN, "create job and accept", "push draft", "submit", jobB} {
		if !strings.Contains(text.Output, s) {
			t.Errorf("the dry run's table does not mention %q:\n%s", s, text.Output)
		}
	}

	// The plan was right: the real pass does exactly that.
	e2eWantCalls(t, "the real pass", e.mustOnce(), map[string]int{e2eRouteList: 1, e2eRouteAccept: 2, e2eRouteQuote: 1, e2eRouteStatus: 1})
	e.checkInvariants(true, "after the real pass")
}
