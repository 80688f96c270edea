package emulator_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
)

// newFaultHarness is a harness whose client does not validate (fault
// answers are broken on purpose) and opens a fresh connection per call, so
// that net/http never retries a dropped call on its own.
func newFaultHarness(t *testing.T) *harness {
	h := newHarness(t, withoutValidation())
	h.client.Transport = &http.Transport{DisableKeepAlives: true}
	return h
}

// accepted is the referenceId request id was accepted with ("" if none).
func accepted(h *harness, id string) string {
	r, _ := h.emu.State().Request(id)
	return r.ReferenceID
}

// TestFaultStatus: a "status" fault answers its status with the error body
// and Retry-After, Count times, and applies nothing.
func TestFaultStatus(t *testing.T) {
	h := newFaultHarness(t)
	id := h.seed("CLM-1")
	fid := h.emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultStatus, Status: 503,
		RetryAfter: 1500 * time.Millisecond, Count: 2})
	for i := range 2 {
		r := h.call("POST", "/requests/"+id, `{"referenceId":"RO-1"}`)
		expectError(t, "faulted accept", r, http.StatusServiceUnavailable, emulator.CodeInjectedFault)
		if got, want := r.header.Get("Retry-After"), "2"; got != want {
			t.Errorf("call %d: Retry-After %q, want %q", i, got, want)
		}
		if ref := accepted(h, id); ref != "" {
			t.Fatalf("call %d: the faulted accept was applied (%s)", i, ref)
		}
	}
	expectStatus(t, "list is not faulted", h.call("GET", "/requests", ""), http.StatusOK)
	expectStatus(t, "third accept", h.call("POST", "/requests/"+id, `{"referenceId":"RO-1"}`), http.StatusCreated)
	fi := h.emu.Faults()
	if len(fi) != 1 || fi[0].ID != fid || fi[0].Fired != 2 || fi[0].Active {
		t.Errorf("faults %+v, want %s fired twice and used up", fi, fid)
	}
	if got, want := h.emu.Calls()[emulator.RouteAccept], 3; got != want {
		t.Errorf("accept calls %d, want %d (faulted calls count)", got, want)
	}
}

// TestFaultWildcard429: "*" faults every API route but not the admin API.
func TestFaultWildcard429(t *testing.T) {
	h := newFaultHarness(t)
	h.emu.AddFault(emulator.Fault{Route: "*", Action: emulator.FaultStatus, Status: 429, RetryAfter: time.Second})
	r := h.call("GET", "/requests", "")
	expectError(t, "list", r, http.StatusTooManyRequests, emulator.CodeInjectedFault)
	if got := r.header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
	expectError(t, "quote", h.call("POST", "/jobs/RO-1/quotes", `{}`), http.StatusTooManyRequests, emulator.CodeInjectedFault)
	expectStatus(t, "admin state", h.send("GET", h.srv.URL+"/_emulator/state", "", nil), http.StatusOK)
	expectError(t, "a bad token still gets 401 first", h.send("GET", h.api+"/requests", "", nil), 401, emulator.CodeUnauthorized)
	h.emu.ClearFaults()
	expectStatus(t, "after ClearFaults", h.call("GET", "/requests", ""), http.StatusOK)
}

// TestFaultLatency: the call is served after the delay, and the delay holds
// no lock (other calls go through meanwhile).
func TestFaultLatency(t *testing.T) {
	h := newFaultHarness(t)
	h.emu.AddFault(emulator.Fault{Route: emulator.RouteListRequests, Action: emulator.FaultLatency, Latency: 400 * time.Millisecond, Count: 1})
	done := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		r, err := h.try("GET", h.api+"/requests", "", auth())
		if err != nil || r.status != http.StatusOK {
			t.Errorf("slow list: %v, %d", err, r.status)
		}
		done <- time.Since(start)
	}()
	time.Sleep(50 * time.Millisecond)
	job := h.acceptedJob("RO-1") // served while the list waits
	expectStatus(t, "quote during the delay", h.call("POST", "/jobs/"+job+"/quotes", `{"type":"Estimate","status":"Draft"}`), http.StatusCreated)
	select {
	case <-done:
		t.Fatalf("the slow call finished before the fast ones: the delay did not happen")
	default:
	}
	if took := <-done; took < 400*time.Millisecond {
		t.Errorf("slow list took %v, want ≥ 400ms", took)
	}
}

// TestFaultDrop: the connection closes without an answer, nothing applied.
func TestFaultDrop(t *testing.T) {
	h := newFaultHarness(t)
	id := h.seed("CLM-1")
	h.emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultDrop, Count: 1})
	if _, err := h.try("POST", h.api+"/requests/"+id, `{"referenceId":"RO-1"}`, auth()); err == nil {
		t.Fatalf("dropped call returned an answer")
	}
	if ref := accepted(h, id); ref != "" {
		t.Errorf("dropped accept was applied as %s", ref)
	}
	expectStatus(t, "retry", h.call("POST", "/requests/"+id, `{"referenceId":"RO-1"}`), http.StatusCreated)
}

// TestFaultGarbage: 200 with a body that is not JSON, nothing applied.
func TestFaultGarbage(t *testing.T) {
	h := newFaultHarness(t)
	id := h.seed("CLM-1")
	h.emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultGarbage, Count: 1})
	r := h.call("POST", "/requests/"+id, `{"referenceId":"RO-1"}`)
	expectStatus(t, "garbage", r, http.StatusOK)
	if json.Valid(r.body) {
		t.Errorf("garbage body %q is valid JSON", r.body)
	}
	if ref := accepted(h, id); ref != "" {
		t.Errorf("garbage accept was applied as %s", ref)
	}
}

// TestFaultLandThenDrop is the "timed out but landed" accept: the change is
// applied, the client gets no answer, and its retry with the same
// referenceId learns that the request was accepted with it.
func TestFaultLandThenDrop(t *testing.T) {
	h := newFaultHarness(t)
	id := h.seed("CLM-1")
	h.emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultLandThenDrop, Count: 1})
	if _, err := h.try("POST", h.api+"/requests/"+id, `{"referenceId":"RO-1"}`, auth()); err == nil {
		t.Fatalf("dropped call returned an answer")
	}
	if ref := accepted(h, id); ref != "RO-1" {
		t.Fatalf("landed accept: request accepted as %q, want RO-1", ref)
	}
	e := expectError(t, "retry", h.call("POST", "/requests/"+id, `{"referenceId":"RO-1"}`),
		http.StatusConflict, emulator.CodeRequestAlreadyAccepted)
	if e.ReferenceID != "RO-1" {
		t.Errorf("409 names referenceId %q, want RO-1", e.ReferenceID)
	}
	if got := len(h.emu.State().History); got != 1 {
		t.Errorf("%d history entries, want the one accept", got)
	}
}

// TestFaultLandThenHang: the change is applied, then the connection hangs
// until the client gives up (Latency 0) or Latency passes.
func TestFaultLandThenHang(t *testing.T) {
	h := newFaultHarness(t)
	job := h.acceptedJob("RO-1")
	h.emu.AddFault(emulator.Fault{Route: emulator.RouteCreateQuote, Action: emulator.FaultLandThenHang, Count: 1})
	h.client.Timeout = 300 * time.Millisecond
	start := time.Now()
	_, err := h.try("POST", h.api+"/jobs/"+job+"/quotes", `{"type":"Estimate","status":"Draft"}`, auth())
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("hung call: error %v, want a client timeout", err)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("hung call returned after %v", took)
	}
	j, _ := h.emu.State().Job(job)
	if _, ok := j.Quote("Estimate"); !ok {
		t.Errorf("the hung create did not land")
	}

	h.client.Timeout = 5 * time.Second
	h.emu.AddFault(emulator.Fault{Route: "PUT /jobs/{jobId}/quotes/{quoteId}/status", Action: emulator.FaultLandThenHang,
		Latency: 200 * time.Millisecond, Count: 1})
	start = time.Now()
	if _, err := h.try("PUT", h.api+"/jobs/"+job+"/quotes/Estimate/status", `{"status":"Submitted"}`, auth()); err == nil {
		t.Errorf("hung submit returned an answer")
	}
	if took := time.Since(start); took < 200*time.Millisecond || took > 3*time.Second {
		t.Errorf("hung submit returned after %v, want about 200ms", took)
	}
	expectError(t, "retried submit", h.call("PUT", "/jobs/"+job+"/quotes/Estimate/status", `{"status":"Submitted"}`),
		http.StatusConflict, emulator.CodeQuoteAlreadySubmitted)
}

// TestFaultProbability: draws come from the seeded source, so the same
// seed fires the same calls, and about the given share of them.
func TestFaultProbability(t *testing.T) {
	pattern := func(seed uint64) string {
		emu, err := emulator.New(emulator.Options{Token: testToken, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		emu.AddFault(emulator.Fault{Route: emulator.RouteListRequests, Action: emulator.FaultStatus, Probability: 0.3})
		var b strings.Builder
		for range 200 {
			req, _ := http.NewRequest("GET", emulator.APIPrefix+"/requests", nil)
			req.Header.Set("Authorization", "Bearer "+testToken)
			rec := httptest.NewRecorder()
			emu.ServeHTTP(rec, req)
			if rec.Code == http.StatusServiceUnavailable {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	a, b, c := pattern(7), pattern(7), pattern(8)
	if a != b {
		t.Errorf("same seed, different faults:\n%s\n%s", a, b)
	}
	if a == c {
		t.Errorf("different seeds, same faults: %s", a)
	}
	if n := strings.Count(a, "x"); n < 35 || n > 85 {
		t.Errorf("fault fired %d times in 200 at probability 0.3", n)
	}
}

// TestFaultValidation: invalid faults are refused (AddFault panics).
func TestFaultValidation(t *testing.T) {
	for _, f := range []emulator.Fault{
		{Route: "POST /request/{id}", Action: emulator.FaultStatus},
		{Route: "*", Action: "explode"},
		{Route: "*", Action: emulator.FaultStatus, Status: 200},
		{Route: "*", Action: emulator.FaultLatency},
		{Route: "*", Action: emulator.FaultDrop, Probability: 1.5},
		{Route: "*", Action: emulator.FaultDrop, Count: -1},
	} {
		if err := f.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", f)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("AddFault(%+v) did not panic", f)
				}
			}()
			emu, _ := emulator.New(emulator.Options{Token: testToken})
			emu.AddFault(f)
		}()
	}
	emu, _ := emulator.New(emulator.Options{Token: testToken})
	id := emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultStatus})
	if fi := emu.Faults(); len(fi) != 1 || fi[0].Fault.Status != emulator.DefaultFaultStatus {
		t.Errorf("faults %+v, want one with the default status", fi)
	}
	if !emu.RemoveFault(id) || emu.RemoveFault(id) || len(emu.Faults()) != 0 {
		t.Errorf("RemoveFault did not remove exactly once")
	}
}

// TestFaultWaitNoticesDepartedClient: a client that gives up during a
// "latency" or "land_then_hang" wait on a call with a body must not leave
// the handler sleeping the full Latency. net/http only watches a
// connection for a departed client once the request body has been read to
// the end, so the fault reads it before waiting; Server.Close (which waits
// for every handler) then returns long before the 5 s wait is over.
func TestFaultWaitNoticesDepartedClient(t *testing.T) {
	const latency = 5 * time.Second
	cases := []struct {
		name, route, method, path, contentType, body string
		action                                       string
	}{
		{"LatencyOnAccept", emulator.RouteAccept, "POST", "/requests/%s", "application/json",
			`{"referenceId":"RO-1"}`, emulator.FaultLatency},
		// The 415 answer is written without reading the body: the fault's
		// own read is what lets the server see the client go.
		{"LandThenHangOnUnreadBody", emulator.RouteAccept, "POST", "/requests/%s", "text/plain",
			`{"referenceId":"RO-1"}`, emulator.FaultLandThenHang},
		{"LandThenHangOnQuote", emulator.RouteCreateQuote, "POST", "/jobs/%s/quotes", "application/json",
			`{"type":"Estimate","status":"Draft"}`, emulator.FaultLandThenHang},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			emu, err := emulator.New(emulator.Options{Token: testToken, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			id := emu.AddRequests(emulator.SeedRequest{ClaimNumber: "CLM-1"})[0]
			srv := httptest.NewServer(emu)
			defer srv.Close() // a no-op after the timed Close below
			target := id
			if c.route == emulator.RouteCreateQuote {
				target = "RO-0"
				req, _ := http.NewRequest("POST", srv.URL+emulator.APIPrefix+"/requests/"+id, strings.NewReader(`{"referenceId":"RO-0"}`))
				req.Header.Set("Authorization", "Bearer "+testToken)
				req.Header.Set("Content-Type", "application/json")
				resp, err := srv.Client().Do(req)
				if err != nil || resp.StatusCode != http.StatusCreated {
					t.Fatalf("accept before the fault: %v %v", resp, err)
				}
				resp.Body.Close()
			}
			emu.AddFault(emulator.Fault{Route: c.route, Action: c.action, Latency: latency, Count: 1})

			client := &http.Client{Timeout: 200 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
			req, _ := http.NewRequest(c.method, srv.URL+emulator.APIPrefix+fmt.Sprintf(c.path, target), strings.NewReader(c.body))
			req.Header.Set("Authorization", "Bearer "+testToken)
			req.Header.Set("Content-Type", c.contentType)
			start := time.Now()
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("the faulted call answered %d within the client's timeout", resp.StatusCode)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Fatalf("the client gave up after %v, want about 200ms", took)
			}

			start = time.Now()
			srv.Close()
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("Server.Close took %v after the client left: the %s wait did not notice (want < 2s of the %v)",
					took, c.action, latency)
			}
			if got := emu.Faults()[0].Fired; got != 1 {
				t.Errorf("fault fired %d times, want 1", got)
			}
		})
	}
}

// TestFaultWaitKeepsTheBody: the body a latency fault reads before its
// wait reaches the handler whole, and the body cap still applies (413).
func TestFaultWaitKeepsTheBody(t *testing.T) {
	h := newHarness(t, withoutValidation(), func(o *emulator.Options, _ *harness) { o.MaxBodyBytes = 64 })
	id := h.seed("CLM-1")
	h.emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultLatency, Latency: 10 * time.Millisecond})
	long := `{"referenceId":"` + strings.Repeat("R", 80) + `"}`
	expectError(t, "oversize accept", h.call("POST", "/requests/"+id, long), http.StatusRequestEntityTooLarge, emulator.CodeBodyTooLarge)
	expectStatus(t, "accept", h.call("POST", "/requests/"+id, `{"referenceId":"RO-1","bookingDate":"2025-06-05"}`), http.StatusCreated)
	if r, _ := h.emu.State().Request(id); r.ReferenceID != "RO-1" || r.BookingDate != "2025-06-05" {
		t.Errorf("accepted as %q booked %q, want RO-1 on 2025-06-05", r.ReferenceID, r.BookingDate)
	}
	if got, want := h.emu.Faults()[0].Fired, 2; got != want {
		t.Errorf("fault fired %d times, want %d", got, want)
	}
}
