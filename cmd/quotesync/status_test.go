package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// statusRowRE matches one row of the status table: request, claim, job,
// phase.
var statusRowRE = regexp.MustCompile(`(?m)^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s`)

// statusPhasesByClaim reads claim → phase from the status table.
func statusPhasesByClaim(out string) map[string]string {
	m := map[string]string{}
	table, _, _ := strings.Cut(out, "\n\n") // the counts follow a blank line
	for _, g := range statusRowRE.FindAllStringSubmatch(table, -1) {
		if g[1] != "REQUEST" {
			m[g[2]] = g[4]
		}
	}
	return m
}

// TestStatusAndRetryBinary runs a real `once` against the emulator and the
// sample shop, then reads the state with `status` (table, --all, --json),
// and puts a request the remote rejected back into the flow with `retry`.
func TestStatusAndRetryBinary(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// Before the first start: nothing tracked, said plainly.
	r := e.run("status", "--config", e.Conf)
	if r.Code != exitOK || !strings.Contains(r.Stdout, "do not exist yet") {
		t.Fatalf("status before the first start: %s", r)
	}

	// The remote refuses the accept of CLM-REJ-1 for good (422).
	e.Emu.AddRequests(emulator.SeedRequest{ClaimNumber: "CLM-REJ-1"})
	e.Emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultStatus, Status: 422, Count: 1})
	if r := e.run("once", "--config", e.Conf); r.Code != exitOK {
		t.Fatalf("once: %s", r)
	}
	e.Emu.AddRequests(
		emulator.SeedRequest{ClaimNumber: sampleshop.ClaimDraft},
		emulator.SeedRequest{ClaimNumber: sampleshop.ClaimFinal},
		emulator.SeedRequest{ClaimNumber: sampleshop.ClaimBadLine},
	)
	if r := e.run("once", "--config", e.Conf); r.Code != exitOK {
		t.Fatalf("once: %s", r)
	}
	db := e.DB.Open(t, e.DB.Config())
	st := store.New(db)
	rows, err := st.ListRequests(ctx, store.ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var rejected store.Request
	for _, row := range rows {
		if row.Phase == qsync.PhaseRejected {
			rejected = row
		}
	}
	if rejected.ClaimNumber != "CLM-REJ-1" {
		t.Fatalf("CLM-REJ-1 not rejected after the 422; rows: %+v", rows)
	}

	t.Run("Table", func(t *testing.T) {
		r := e.run("status", "--config", e.Conf)
		if r.Code != exitOK {
			t.Fatalf("status: %s", r)
		}
		got := statusPhasesByClaim(r.Stdout)
		if _, ok := got[sampleshop.ClaimFinal]; ok {
			t.Errorf("the submitted request is listed without --all:\n%s", r.Stdout)
		}
		if got[rejected.ClaimNumber] != "rejected" {
			t.Errorf("claim %s: phase %q, want rejected:\n%s", rejected.ClaimNumber, got[rejected.ClaimNumber], r.Stdout)
		}
		for _, h := range []string{"REQUEST", "CLAIM", "JOB", "PHASE", "REASON", "LAST PUSH", "AGE"} {
			if !strings.Contains(r.Stdout, h) {
				t.Errorf("no %s column:\n%s", h, r.Stdout)
			}
		}
		if !strings.Contains(r.Stdout, "422") || !strings.Contains(r.Stdout, "requests in progress or needing attention:") || !strings.Contains(r.Stdout, "1 rejected") {
			t.Errorf("no error details or counts:\n%s", r.Stdout)
		}
		// What needs a person is said whole, with what to do.
		for _, want := range []string{"needs a person:", "details: accept request " + rejected.RequestID, "what to do: fix what the error says, then `quotesync retry " + rejected.RequestID + "`"} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("status lacks %q:\n%s", want, r.Stdout)
			}
		}
		if !strings.Contains(r.Stdout, "status change: POST /jobs/{jobId}/quotes/status/{status}") {
			t.Errorf("status does not say which status change is sent:\n%s", r.Stdout)
		}
	})

	t.Run("All", func(t *testing.T) {
		r := e.run("status", "--config", e.Conf, "--all")
		got := statusPhasesByClaim(r.Stdout)
		if r.Code != exitOK || got[sampleshop.ClaimFinal] != "submitted" || len(got) != 4 {
			t.Errorf("status --all: phases %v\n%s", got, r)
		}
		if !strings.Contains(r.Stdout, "4 requests:") || !strings.Contains(r.Stdout, "1 submitted") {
			t.Errorf("counts:\n%s", r.Stdout)
		}
	})

	t.Run("JSON", func(t *testing.T) {
		r := e.run("status", "--config", e.Conf, "--all", "--json")
		var doc statusDoc
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != exitOK {
			t.Fatalf("status --json: %v\n%s", err, r)
		}
		if doc.Total != 4 || len(doc.Requests) != 4 || doc.Counts["submitted"] != 1 || doc.Counts["rejected"] != 1 {
			t.Errorf("status --json: total %d, %d rows, counts %v", doc.Total, len(doc.Requests), doc.Counts)
		}
		for _, row := range doc.Requests {
			switch row.Claim {
			case sampleshop.ClaimDraft:
				if row.Phase != "drafted" || row.Job != sampleshop.JobDraft || row.PushedAt.IsZero() {
					t.Errorf("draft row: %+v", row)
				}
			case sampleshop.ClaimBadLine:
				if !strings.Contains(row.LastError, "price") {
					t.Errorf("held row without its whole error: %+v", row)
				}
			case rejected.ClaimNumber:
				if row.Phase != "rejected" || row.ResumePhase == "" {
					t.Errorf("rejected row: %+v", row)
				}
			}
		}
	})

	t.Run("Retry", func(t *testing.T) {
		r := e.run("retry", "--config", e.Conf, "no-such-request")
		if r.Code != exitFailure || !strings.Contains(r.Stderr, "not tracked") {
			t.Errorf("retry of an unknown id: %s", r)
		}
		var drafted string
		for _, row := range rows {
			if row.ClaimNumber == sampleshop.ClaimDraft {
				drafted = row.RequestID
			}
		}
		r = e.run("retry", "--config", e.Conf, drafted)
		if r.Code != exitFailure || !strings.Contains(r.Stderr, "is drafted and not stuck") {
			t.Errorf("retry of a drafted request: %s", r)
		}
		r = e.run("retry", rejected.RequestID, "--config", e.Conf, "--note", "fixed on the insurer's side")
		if r.Code != exitOK || !strings.Contains(r.Stdout, "rejected -> "+string(rejected.ResumePhase)) {
			t.Fatalf("retry: %s", r)
		}
		// The change went through the daemon's executor: logged as the
		// daemon logs its own changes.
		if !strings.Contains(r.Stderr, `"msg":"request put back into the flow"`) || !strings.Contains(r.Stderr, `"request":"`+rejected.RequestID+`"`) ||
			!strings.Contains(r.Stderr, `"from":"rejected"`) {
			t.Errorf("retry logged no line of its change on standard error:\n%s", r)
		}
		evs, err := st.Events(ctx, rejected.RequestID, 0)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, ev := range evs {
			if ev.Kind == string(qsync.EventRetry) && ev.Message == "fixed on the insurer's side" {
				found = true
			}
		}
		if !found {
			t.Errorf("no retry event with the note in %+v", evs)
		}
		// retry delivers what its event queued before it exits: a daemon
		// would not be woken by it.
		if ds, err := st.DeliveryStats(ctx); err != nil || ds.Pending != 0 {
			t.Errorf("after retry: %d deliveries not made (%v), want 0; last error %q", ds.Pending, err, ds.Last.LastError)
		}
		if st, _, err := e.DB.Shop().InsurerStatus(ctx, jobOf(rejected)); err != nil || st != "RETRYING" {
			t.Errorf("after retry: job %s's insurer status %q (%v), want the retried write-back's RETRYING", jobOf(rejected), st, err)
		}
		// The next pass takes it up: the fault is used up, the accept lands.
		if r := e.run("once", "--config", e.Conf); r.Code != exitOK {
			t.Fatalf("once after retry: %s", r)
		}
		after, err := st.Request(ctx, rejected.RequestID)
		if err != nil {
			t.Fatal(err)
		}
		if after.Phase == qsync.PhaseRejected || after.Phase == qsync.PhaseReserved {
			t.Errorf("after retry and a pass: phase %s (%s)", after.Phase, after.LastError)
		}
		r = e.run("retry", "--config", e.Conf, rejected.RequestID)
		if r.Code != exitFailure || !strings.Contains(r.Stderr, "not stuck") {
			t.Errorf("second retry: %s", r)
		}
	})
}
