package emulator_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/quotesync/quotesync/remote/emulator"
)

// race runs n calls at once and counts the answers by status and code;
// call returns the method, API path and body of call i.
func race(t *testing.T, h *harness, n int, call func(i int) (method, path, body string)) map[string]int {
	t.Helper()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		count = make(map[string]int)
		start = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			<-start
			method, path, body := call(i)
			r, err := h.try(method, h.api+path, body, auth())
			if err != nil {
				t.Errorf("%s %s: %v", method, path, err)
				return
			}
			key := fmt.Sprint(r.status)
			if r.status >= 400 {
				var eb emulator.ErrorBody
				if err := json.Unmarshal(r.body, &eb); err != nil {
					t.Errorf("undecodable error body %q: %v", r.body, err)
				}
				key += " " + eb.Error.Code
			}
			mu.Lock()
			count[key]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return count
}

// TestConcurrentAcceptSameRequest: many clients accept one request with
// different referenceIds; exactly one wins.
func TestConcurrentAcceptSameRequest(t *testing.T) {
	h := newHarness(t)
	id := h.seed("CLM-RACE")
	const n = 40
	got := race(t, h, n, func(i int) (string, string, string) {
		return "POST", "/requests/" + id, fmt.Sprintf(`{"referenceId":"RO-%d"}`, i)
	})
	want := map[string]int{"201": 1, "409 " + emulator.CodeRequestAlreadyAccepted: n - 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("answers %v, want %v", got, want)
	}
	st := h.emu.State()
	if len(st.Jobs) != 1 || len(st.History) != 1 {
		t.Errorf("%d jobs and %d history entries, want 1 and 1", len(st.Jobs), len(st.History))
	}
	if r, _ := st.Request(id); r.ReferenceID != st.Jobs[0].ID {
		t.Errorf("request accepted as %q but the job is %q", r.ReferenceID, st.Jobs[0].ID)
	}
}

// TestConcurrentAcceptSameReference: many requests are accepted with one
// referenceId; exactly one wins.
func TestConcurrentAcceptSameReference(t *testing.T) {
	h := newHarness(t)
	const n = 40
	ids := make([]string, n)
	for i := range ids {
		ids[i] = h.seed(fmt.Sprintf("CLM-%d", i))
	}
	got := race(t, h, n, func(i int) (string, string, string) {
		return "POST", "/requests/" + ids[i], `{"referenceId":"RO-SHARED"}`
	})
	want := map[string]int{"201": 1, "409 " + emulator.CodeReferenceInUse: n - 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("answers %v, want %v", got, want)
	}
	st := h.emu.State()
	accepted := 0
	for _, r := range st.Requests {
		if r.ReferenceID != "" {
			accepted++
		}
	}
	if accepted != 1 || len(st.Jobs) != 1 {
		t.Errorf("%d requests accepted and %d jobs, want 1 and 1", accepted, len(st.Jobs))
	}
}

// TestConcurrentSubmit: Draft re-POSTs and submits race on one job; the
// quote is submitted exactly once and no write lands after it.
func TestConcurrentSubmit(t *testing.T) {
	h := newHarness(t)
	job := h.acceptedJob("RO-1")
	expectStatus(t, "draft", h.call("POST", "/jobs/"+job+"/quotes", `{"type":"Estimate","status":"Draft"}`), http.StatusCreated)
	const n = 40
	got := race(t, h, n, func(i int) (string, string, string) {
		if i%2 == 0 {
			return "POST", "/jobs/" + job + "/quotes/Estimate/status", `{"status":"Submitted"}`
		}
		return "POST", "/jobs/" + job + "/quotes", `{"type":"Estimate","status":"Draft"}`
	})
	if got["200"] < 1 || got["409 "+emulator.CodeQuoteAlreadySubmitted] != n/2-1 {
		t.Errorf("answers %v: want exactly one submit to win", got)
	}
	st := h.emu.State()
	j, _ := st.Job(job)
	q, _ := j.Quote("Estimate")
	if q.SubmitCount != 1 || q.Status != emulator.StatusSubmitted {
		t.Errorf("quote %s with SubmitCount %d, want Submitted once", q.Status, q.SubmitCount)
	}
	last := st.History[len(st.History)-1]
	if last.Kind != emulator.HistoryStatusChange {
		t.Errorf("last history entry is %s; nothing may change a quote after its submit", last.Kind)
	}
	for i := 1; i < len(st.History); i++ {
		if st.History[i].Seq != st.History[i-1].Seq+1 {
			t.Fatalf("history seq %d follows %d", st.History[i].Seq, st.History[i-1].Seq)
		}
	}
}

// BenchmarkAcceptAndDraft measures one accept plus one Draft over real
// HTTP, the emulator's share of the daemon's per-request work.
func BenchmarkAcceptAndDraft(b *testing.B) {
	h := newHarness(b, withoutValidation())
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = h.emu.AddRequests(emulator.SeedRequest{})[0]
	}
	b.ResetTimer()
	for i := range b.N {
		ref := fmt.Sprintf("RO-%d", i)
		if r := h.call("POST", "/requests/"+ids[i], `{"referenceId":"`+ref+`"}`); r.status != http.StatusCreated {
			b.Fatalf("accept: %d %s", r.status, r.body)
		}
		if r := h.call("POST", "/jobs/"+ref+"/quotes", fmt.Sprintf(draftQuote, ref)); r.status != http.StatusCreated {
			b.Fatalf("draft: %d %s", r.status, r.body)
		}
	}
}
