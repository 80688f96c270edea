package emulator_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
)

// testToken is the bearer token of every test emulator.
const testToken = "test-token-3f9a"

// clock is a settable clock for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// harness is an emulator behind a real HTTP server and a plain client.
type harness struct {
	t      testing.TB
	emu    *emulator.Emulator
	srv    *httptest.Server
	clock  *clock
	client *http.Client
	api    string // srv.URL + APIPrefix
}

// harnessOption adjusts a harness before it starts.
type harnessOption func(*emulator.Options, *harness)

// withStatePath persists the emulator's state to path.
func withStatePath(path string) harnessOption {
	return func(o *emulator.Options, _ *harness) { o.StatePath = path }
}

// withoutValidation leaves the OpenAPI validation of every exchange out
// (for faults, whose answers are broken on purpose).
func withoutValidation() harnessOption {
	return func(_ *emulator.Options, h *harness) { h.client = &http.Client{Timeout: 10 * time.Second} }
}

// newHarness starts an emulator; by default every exchange of its client is
// validated against remote/openapi.yaml (see openapi_test.go).
func newHarness(t testing.TB, opts ...harnessOption) *harness {
	t.Helper()
	h := &harness{t: t, clock: newClock()}
	o := emulator.Options{Token: testToken, Now: h.clock.Now, Seed: 42}
	for _, opt := range opts {
		opt(&o, h)
	}
	emu, err := emulator.New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.emu = emu
	h.srv = httptest.NewServer(emu)
	t.Cleanup(h.srv.Close)
	h.api = h.srv.URL + emulator.APIPrefix
	if h.client == nil {
		h.client = &http.Client{Timeout: 10 * time.Second, Transport: newValidatingTransport(t)}
	}
	return h
}

// response is a read answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// errorBody decodes the error body of the answer.
func (r response) errorBody(t testing.TB) emulator.ErrorDetail {
	t.Helper()
	var eb emulator.ErrorBody
	if err := json.Unmarshal(r.body, &eb); err != nil {
		t.Fatalf("decode error body %q: %v", r.body, err)
	}
	return eb.Error
}

// decode decodes the answer's JSON body into v.
func (r response) decode(t testing.TB, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode body %q: %v", r.body, err)
	}
}

// call sends an authorized API call; path is relative to APIPrefix and body
// is sent as JSON text when not "".
func (h *harness) call(method, path, body string) response {
	h.t.Helper()
	return h.send(method, h.api+path, body, auth())
}

// send sends a request with exactly the given headers (Content-Type:
// application/json is added when there is a body and none is given).
func (h *harness) send(method, url, body string, headers map[string]string) response {
	h.t.Helper()
	r, err := h.try(method, url, body, headers)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, url, err)
	}
	return r
}

// try is send returning transport errors; it is safe in any goroutine.
func (h *harness) try(method, url, body string, headers map[string]string) (response, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return response{}, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	return response{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// auth is the Authorization header of the test token.
func auth() map[string]string { return map[string]string{"Authorization": "Bearer " + testToken} }

// seed adds one pending request expiring in a day and returns its id.
func (h *harness) seed(claim string) string {
	h.t.Helper()
	ids := h.emu.AddRequests(emulator.SeedRequest{
		ClaimNumber:  claim,
		Expiry:       h.clock.Now().Add(24 * time.Hour),
		Vehicle:      json.RawMessage(`{"registration":"AB12 CDE","make":"Ford","model":"Focus"}`),
		Accident:     json.RawMessage(`{"date":"2025-05-30","description":"Rear-ended"}`),
		Instructions: json.RawMessage(`{"assessmentType":"Desktop"}`),
	})
	return ids[0]
}

// accept accepts request id with ref and fails the test unless it gets 201.
func (h *harness) accept(id, ref string) {
	h.t.Helper()
	if r := h.call("POST", "/requests/"+id, `{"referenceId":"`+ref+`"}`); r.status != http.StatusCreated {
		h.t.Fatalf("accept %s as %s: status %d, body %s", id, ref, r.status, r.body)
	}
}

// acceptedJob seeds a request, accepts it as ref and returns ref.
func (h *harness) acceptedJob(ref string) string {
	h.t.Helper()
	h.accept(h.seed("CLM-"+ref), ref)
	return ref
}

// expectStatus fails the test unless r has status want.
func expectStatus(t testing.TB, what string, r response, want int) {
	t.Helper()
	if r.status != want {
		t.Fatalf("%s: status %d, want %d; body %s", what, r.status, want, r.body)
	}
}

// expectError fails the test unless r is an error answer with status and code.
func expectError(t testing.TB, what string, r response, status int, code string) emulator.ErrorDetail {
	t.Helper()
	expectStatus(t, what, r, status)
	if got := r.header.Get("Content-Type"); got != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json", what, got)
	}
	e := r.errorBody(t)
	if e.Code != code {
		t.Fatalf("%s: error code %q, want %q (message %q)", what, e.Code, code, e.Message)
	}
	if e.Message == "" {
		t.Errorf("%s: error message is empty", what)
	}
	return e
}

// draftQuote is a realistic Draft Estimate with a string id, a line
// without id and 4-decimal prices.
const draftQuote = `{"type":"Estimate","status":"Draft","referenceId":"%s",
 "rates":[{"type":"RepairLabour","rate":95.5000},{"type":"Parts","rate":0}],
 "items":[
  {"id":"L-1","order":1,"type":"Parts","description":"Front bumper","quantity":1,"price":412.3750,"total":412.38,"partNumber":"52119-02A90","markup":10.5,"isOnReport":true},
  {"order":2,"type":"RepairLabour","description":"Fit bumper","quantity":1.5,"price":95.5000,"total":143.25,"metadata":{"operation":"R&R"}}
 ],
 "assessorNotes":{"kept":true}}`
