package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/discover/testshops"
)

// TestE2EFlatEstimateTable: the flat estimate table with the real binary,
// against the emulator in both its modes. init --yes proposes no
// create_job and says why on a CHECK line; a request whose claim has no
// line yet waits, pass after pass, without an error, and status says so;
// once the shop writes the job's first line, the next pass accepts the
// request with that job and pushes its Draft; when every live line is
// FINAL the quote is submitted once; a line added after that is flagged,
// never pushed.
func TestE2EFlatEstimateTable(t *testing.T) {
	t.Parallel()
	for _, mode := range e2eModes {
		t.Run(mode, func(t *testing.T) {
			w := newInitWorld(t, nil, testshops.Flat)
			text := w.initYes()
			if regexp.MustCompile(`(?m)^\s*create_job:`).MatchString(text) || !strings.Contains(text, "# CHECK: no create_job: quote_lines has no table of jobs") {
				t.Errorf("init on the flat table: want no create_job and a CHECK line saying why:\n%s", text)
			}
			emu, srv := mustEmulator(t, emulator.Options{Token: cliToken, Seed: 3, Mode: mode})
			w.pointAt(text, srv, mode)
			if r := w.run("check", "--config", w.conf); r.Code != exitOK || !strings.Contains(r.Stdout, "info  shop.queries.create_job") {
				t.Errorf("check: want OK, with a line on the missing create_job:\n%s", r)
			}
			id := emu.AddRequests(emulator.SeedRequest{ClaimNumber: "INS-3310", Expiry: time.Now().Add(48 * time.Hour),
				Vehicle: json.RawMessage(`{"registration": "HJK445"}`)})[0]
			for pass := 1; pass <= 2; pass++ {
				if r := w.run("once", "--config", w.conf); r.Code != exitOK {
					t.Fatalf("pass %d with no line for the claim: %s", pass, r)
				}
			}
			if rq, _ := emu.State().Request(id); rq.Status != emulator.RequestPending {
				t.Fatalf("request %s is %s before the shop has a line for its claim, want pending", id, rq.Status)
			}
			r := w.run("status", "--config", w.conf)
			if r.Code != exitOK || !statusSays(r.Stdout, id, "INS-3310", "waiting", "no_job") {
				t.Errorf("status does not show %s waiting for its job:\n%s", id, r)
			}
			r = w.run("history", "--config", w.conf, id)
			if r.Code != exitOK || !strings.Contains(r.Stdout, "the shop has no job for this claim yet") {
				t.Errorf("history of %s does not say why it waits:\n%s", id, r)
			}

			// The front desk opens the job: its first line carries the claim.
			w.exec("INSERT INTO quote_lines (job_no, claim_no, rego, quote_status, line_no, op, description, qty, rate, amount) VALUES " +
				"('Q-2010', 'INS-3310', 'HJK445', 'OPEN', 1, 'RPR', 'Repair tailgate', 2.5, 92, 230)")
			if r := w.run("once", "--config", w.conf); r.Code != exitOK {
				t.Fatalf("pass after the first line: %s", r)
			}
			st := emu.State()
			if rq, _ := st.Request(id); rq.ReferenceID != "Q-2010" {
				t.Fatalf("request %s accepted with %q, want the shop's new job Q-2010", id, rq.ReferenceID)
			}
			if q, _ := estimateOf(st, "Q-2010"); q.Status != emulator.StatusDraft {
				t.Fatalf("job Q-2010's quote is %q, want a Draft", q.Status)
			}

			w.exec("UPDATE quote_lines SET quote_status = 'FINAL' WHERE job_no = 'Q-2010'")
			for pass := 1; pass <= 2; pass++ {
				if r := w.run("once", "--config", w.conf); r.Code != exitOK {
					t.Fatalf("pass %d after FINAL: %s", pass, r)
				}
			}
			if q, _ := estimateOf(emu.State(), "Q-2010"); q.Status != emulator.StatusSubmitted || q.SubmitCount != 1 {
				t.Errorf("job Q-2010's quote after every line is FINAL: %s, submitted %d times; want Submitted once", q.Status, q.SubmitCount)
			}
			w.exec("INSERT INTO quote_lines (job_no, claim_no, rego, quote_status, line_no, op, description, qty, rate, amount) VALUES " +
				"('Q-2010', 'INS-3310', 'HJK445', 'OPEN', 2, 'PRT', 'Tailgate badge', 1, 38, 38)")
			if r := w.run("once", "--config", w.conf); r.Code != exitOK {
				t.Fatalf("pass after a line added to the submitted job: %s", r)
			}
			if q, items := estimateOf(emu.State(), "Q-2010"); q.Status != emulator.StatusSubmitted || items != 1 {
				t.Errorf("job Q-2010's quote after a line added to it: %s with %d items; want Submitted with its 1 item", q.Status, items)
			}
			if r := w.run("status", "--config", w.conf, "--all"); !statusSays(r.Stdout, id, "submitted") || !strings.Contains(r.Stdout, "supplement") {
				t.Errorf("status after a line added to the submitted job: want it submitted, a supplement flagged:\n%s", r)
			}
		})
	}
}

// estimateOf is the Estimate quote the service holds for job, and how
// many items it has.
func estimateOf(st emulator.State, job string) (emulator.QuoteState, int) {
	j, _ := st.Job(job)
	q, _ := j.Quote("Estimate")
	var body struct {
		Items []json.RawMessage `json:"items"`
	}
	_ = json.Unmarshal(q.Body, &body)
	return q, len(body.Items)
}

// exec runs a statement of the shop's.
func (w *initWorld) exec(stmt string) {
	w.t.Helper()
	if _, err := w.db.SQL.ExecContext(context.Background(), stmt); err != nil {
		w.t.Fatal(err)
	}
}

// statusSays reports whether status's text has a line of request id
// holding every one of words.
func statusSays(out, id string, words ...string) bool {
	for _, l := range strings.Split(out, "\n") {
		if !strings.Contains(l, id) {
			continue
		}
		all := true
		for _, w := range words {
			all = all && strings.Contains(l, w)
		}
		if all {
			return true
		}
	}
	return false
}
