package emulator_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/remote/emulator"
)

// TestStatusForms submits a Draft through each of the four path forms with
// PUT and with POST, with and without the optional body, and checks the
// answer, the conflict on a second submit and the route in the history.
func TestStatusForms(t *testing.T) {
	h := newHarness(t)
	n := 0
	for _, form := range emulator.StatusPaths() {
		for _, method := range []string{"PUT", "POST"} {
			bodies := []string{`{"status":"Submitted"}`}
			if strings.Contains(form, "{status}") {
				bodies = append(bodies, "") // the body is optional where the path has the status
			}
			for _, body := range bodies {
				n++
				name := fmt.Sprintf("%s %s body=%t", method, form, body != "")
				t.Run(name, func(t *testing.T) {
					job := h.acceptedJob(fmt.Sprintf("RO-%d", n))
					expectStatus(t, "draft", h.call("POST", "/jobs/"+job+"/quotes",
						`{"type":"Estimate","status":"Draft","items":[{"id":"L1","type":"Parts","description":"d","quantity":1,"price":2,"total":2}]}`),
						http.StatusCreated)
					path := strings.NewReplacer("{jobId}", job, "{quoteId}", "Estimate", "{status}", "Submitted").Replace(form)
					r := h.call(method, path, body)
					expectStatus(t, "submit", r, http.StatusOK)
					want := `{"type":"Estimate","status":"Submitted","rates":[],"items":[{"id":"L1","type":"Parts","description":"d","quantity":1,"price":2,"total":2}]}`
					if got := strings.TrimSpace(string(r.body)); got != want {
						t.Errorf("answer %s, want %s", got, want)
					}
					expectError(t, "second submit", h.call(method, path, `{"status":"Submitted"}`),
						http.StatusConflict, emulator.CodeQuoteAlreadySubmitted)
					st := h.emu.State()
					last := st.History[len(st.History)-1]
					if last.Kind != emulator.HistoryStatusChange || last.Route != method+" "+form || last.JobID != job {
						t.Errorf("last history entry %+v, want a status_change on %s %s for %s", last, method, form, job)
					}
					j, _ := st.Job(job)
					if q, _ := j.Quote("Estimate"); q.SubmitCount != 1 {
						t.Errorf("SubmitCount %d, want 1", q.SubmitCount)
					}
				})
			}
		}
	}
	for _, route := range emulator.Routes() {
		if strings.HasSuffix(route, "/status") || strings.Contains(route, "/status/") {
			if h.emu.Calls()[route] < 2 {
				t.Errorf("route %s called %d times, want ≥ 2", route, h.emu.Calls()[route])
			}
		}
	}
}

// TestStatusFormPicksQuote checks which quote the {status} forms change:
// the Estimate when there is one, else the only quote, else none (404).
func TestStatusFormPicksQuote(t *testing.T) {
	h := newHarness(t)
	draft := func(job, typ string) {
		expectStatus(t, "draft "+typ, h.call("POST", "/jobs/"+job+"/quotes", `{"type":"`+typ+`","status":"Draft"}`), http.StatusCreated)
	}
	both := h.acceptedJob("RO-1")
	draft(both, "Supplement")
	draft(both, "Estimate")
	r := h.call("PUT", "/jobs/"+both+"/quotes/status/Submitted", "")
	expectStatus(t, "submit with two quotes", r, http.StatusOK)
	if !strings.Contains(string(r.body), `"type":"Estimate"`) {
		t.Errorf("submitted %s, want the Estimate", r.body)
	}
	only := h.acceptedJob("RO-2")
	draft(only, "Supplement")
	r = h.call("POST", "/jobs/"+only+"/quote/status/Submitted", `{"status":"Submitted"}`)
	expectStatus(t, "submit the only quote", r, http.StatusOK)
	if !strings.Contains(string(r.body), `"type":"Supplement"`) {
		t.Errorf("submitted %s, want the Supplement", r.body)
	}
	two := h.acceptedJob("RO-3")
	draft(two, "Supplement")
	draft(two, "Other")
	expectError(t, "two quotes, no Estimate", h.call("PUT", "/jobs/"+two+"/quotes/status/Submitted", ""),
		http.StatusNotFound, emulator.CodeQuoteNotFound)
}

// TestEscapedJobID accepts with a referenceId that needs escaping in a path
// and uses the Location the emulator gave.
func TestEscapedJobID(t *testing.T) {
	h := newHarness(t)
	id := h.seed("CLM-1")
	r := h.call("POST", "/requests/"+id, `{"referenceId":"RO 5/1"}`)
	expectStatus(t, "accept", r, http.StatusCreated)
	loc := r.header.Get("Location")
	if want := h.api + "/jobs/RO%205%2F1"; loc != want {
		t.Fatalf("Location %q, want %q", loc, want)
	}
	r = h.send("POST", loc+"/quotes", `{"type":"Estimate","status":"Draft"}`, auth())
	expectStatus(t, "create quote at Location", r, http.StatusCreated)
	if _, ok := h.emu.State().Job("RO 5/1"); !ok {
		t.Errorf("no job %q in the state", "RO 5/1")
	}
}

// TestEveryRouteValidated drives every route to a 2xx answer through the
// validating client and checks each exchange was checked against the
// contract, so no route escapes it.
func TestEveryRouteValidated(t *testing.T) {
	h := newHarness(t)
	v := h.client.Transport.(*validatingTransport)
	h.call("GET", "/requests", "")
	n := 0
	for _, route := range emulator.Routes() {
		method, tmpl, _ := strings.Cut(route, " ")
		n++
		job := fmt.Sprintf("RO-%d", n)
		id := h.seed("CLM-" + job)
		if route == emulator.RouteAccept {
			h.accept(id, job)
			continue
		}
		if route == emulator.RouteListRequests {
			continue
		}
		h.accept(id, job)
		if route != emulator.RouteCreateQuote {
			expectStatus(t, "draft", h.call("POST", "/jobs/"+job+"/quotes", fmt.Sprintf(draftQuote, job)), http.StatusCreated)
		}
		path := strings.NewReplacer("{id}", job, "{jobId}", job, "{quoteId}", "Estimate", "{type}", "Estimate", "{status}", "Submitted").Replace(tmpl)
		body := `{"status":"Submitted"}`
		if route == emulator.RouteCreateQuote || route == emulator.RouteUpdateQuote {
			body = fmt.Sprintf(draftQuote, job)
		}
		r := h.call(method, path, body)
		if r.status/100 != 2 {
			t.Fatalf("%s: status %d, body %s", route, r.status, r.body)
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, route := range emulator.Routes() {
		method, tmpl, _ := strings.Cut(route, " ")
		ok := false
		for k := range v.verified {
			if strings.HasPrefix(k, method+" "+tmpl+" 2") {
				ok = true
			}
		}
		if !ok {
			t.Errorf("route %s: no 2xx exchange validated against openapi.yaml (validated: %v)", route, v.verified)
		}
	}
}
