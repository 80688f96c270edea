package remote_test

// The contract test: the real remote.Client against the real emulator,
// every exchange validated against remote/openapi.yaml with kin-openapi.
// One workflow (runContract) runs against every way of reaching the
// emulator, in the style of litestream's RunWithReplicaClient: in-process
// (ServeHTTP through a RoundTripper, no network) and over a real listener.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
)

// contractSpecPath is the contract both sides are held to.
const contractSpecPath = "openapi.yaml"

// contractSetup is one way of reaching an emulator: serve returns the base
// URL and the transport to use for handler h.
type contractSetup struct {
	name  string
	serve func(t *testing.T, h http.Handler) (baseURL string, base http.RoundTripper)
}

// contractSetups are the implementations the workflow runs against.
func contractSetups() []contractSetup {
	return []contractSetup{
		{"InProcess", func(_ *testing.T, h http.Handler) (string, http.RoundTripper) {
			return "http://emulator.in-process", inProcessTransport{h}
		}},
		{"Listener", func(t *testing.T, h http.Handler) (string, http.RoundTripper) {
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			return srv.URL, srv.Client().Transport
		}},
	}
}

// TestContract runs the whole workflow against each setup, validating
// every request the client sends and every answer it gets, then checks
// that the validator is not vacuous.
func TestContract(t *testing.T) {
	spec := loadContractSpec(t)
	for _, setup := range contractSetups() {
		t.Run(setup.name, func(t *testing.T) {
			runContract(t, spec, setup)
			t.Run("ValidatorIsNotVacuous", func(t *testing.T) { runValidatorNotVacuous(t, spec, setup) })
		})
	}
}

// TestContractCoversEmulatorRoutes: the contract's operations are exactly
// the emulator's API routes, so "every operation validated" in
// runContract means every route the emulator serves.
func TestContractCoversEmulatorRoutes(t *testing.T) {
	spec := loadContractSpec(t)
	got, want := spec.operations(), slices.Sorted(slices.Values(emulator.Routes()))
	if !slices.Equal(got, want) {
		t.Errorf("openapi.yaml operations %q\nemulator routes %q", got, want)
	}
}

// contractToken is the emulator's bearer token in the contract test.
const contractToken = "contract-token-7d1e"

// contractEnv is one emulator reached through one setup, and the
// validating transport every client of the run shares.
type contractEnv struct {
	t         *testing.T
	emu       *emulator.Emulator
	clock     *contractClock
	baseURL   string
	validator *contractTransport
	attempts  *attemptLog // every client's attempts (Config.Observe)
}

// attemptLog records the attempts of clients (Config.Observe).
type attemptLog struct {
	mu    sync.Mutex
	calls []remote.CallInfo
}

func (l *attemptLog) observe(ci remote.CallInfo) {
	l.mu.Lock()
	l.calls = append(l.calls, ci)
	l.mu.Unlock()
}

// routes returns the routes of the attempts so far, in order.
func (l *attemptLog) routes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.calls))
	for i, ci := range l.calls {
		out[i] = ci.Route
	}
	return out
}

// contractClock is the emulator's settable clock.
type contractClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *contractClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *contractClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// newContractEnv starts an emulator through setup; wrap, when set, sits
// between the validator and the setup's transport.
func newContractEnv(t *testing.T, spec *contractSpec, setup contractSetup, wrap func(http.RoundTripper) http.RoundTripper) *contractEnv {
	t.Helper()
	clock := &contractClock{now: time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)}
	emu, err := emulator.New(emulator.Options{Token: contractToken, Now: clock.Now, Seed: 1})
	if err != nil {
		t.Fatalf("emulator.New: %v", err)
	}
	baseURL, base := setup.serve(t, emu)
	if wrap != nil {
		base = wrap(base)
	}
	return &contractEnv{t: t, emu: emu, clock: clock, baseURL: baseURL,
		validator: newContractTransport(spec, base), attempts: &attemptLog{}}
}

// client is a remote.Client of the emulator through the validator, with
// quick retries, no rate limit, token tok and edit applied.
func (env *contractEnv) client(tok string, edit func(*remote.Config)) *remote.Client {
	env.t.Helper()
	cfg := remote.Config{
		BaseURL: env.baseURL, UserAgent: "quotesync-contract-test", Timeout: 5 * time.Second,
		BackoffInitial: time.Millisecond, BackoffMax: 5 * time.Millisecond, RateLimit: -1,
		Observe: env.attempts.observe, HTTPClient: &http.Client{Transport: env.validator},
	}
	if edit != nil {
		edit(&cfg)
	}
	c, err := remote.New(cfg, remote.StaticToken(tok))
	if err != nil {
		env.t.Fatalf("remote.New: %v", err)
	}
	return c
}

// contractRun is the workflow's shared state: the emulator, two clients
// (the default and one updating Drafts by PUT) and the seeded requests.
type contractRun struct {
	env    *contractEnv
	c, put *remote.Client
	later  time.Time // expiry of the requests that do not expire
	// first has vehicle, accident and instructions; slashed has the string
	// id "REQ/2"; expiring expires an hour in; spare feeds the status steps.
	first, slashed, other, expiring, untouched string
	spare                                      []string
}

// The seeded request objects, as listed.
const (
	contractVehicle      = `{"registration":"AB12 CDE","make":"Ford","model":"Focus"}`
	contractAccident     = `{"date":"2025-05-30","description":"Rear-ended"}`
	contractInstructions = `{"assessmentType":"Desktop","excess":250.00}`
)

// runContract is the workflow of the seed, its error paths and every
// configurable way of updating and submitting, through env's validator;
// then it checks that every exchange was validated and none failed.
func runContract(t *testing.T, spec *contractSpec, setup contractSetup) {
	env := newContractEnv(t, spec, setup, nil)
	r := &contractRun{env: env, c: env.client(contractToken, nil),
		put:   env.client(contractToken, func(cfg *remote.Config) { cfg.DraftUpdate = remote.DraftUpdatePut }),
		later: env.clock.Now().Add(48 * time.Hour)}
	ids := env.emu.AddRequests(
		emulator.SeedRequest{ClaimNumber: "CLM-100", Expiry: r.later, Vehicle: json.RawMessage(contractVehicle),
			Accident: json.RawMessage(contractAccident), Instructions: json.RawMessage(contractInstructions)},
		emulator.SeedRequest{ID: "REQ/2", ClaimNumber: "CLM-200", Expiry: r.later},
		emulator.SeedRequest{ClaimNumber: "CLM-300", Expiry: r.later},
		emulator.SeedRequest{ClaimNumber: "CLM-400", Expiry: env.clock.Now().Add(time.Hour)},
		emulator.SeedRequest{ClaimNumber: "CLM-500", Expiry: r.later},
	)
	r.first, r.slashed, r.other, r.expiring, r.untouched = ids[0], ids[1], ids[2], ids[3], ids[4]
	for i := range 10 {
		r.spare = append(r.spare, env.emu.AddRequests(emulator.SeedRequest{ClaimNumber: fmt.Sprintf("CLM-S%d", i), Expiry: r.later})...)
	}
	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"ListRequests", r.listRequests},
		{"Accept", r.accept},
		{"Quotes", r.quotes},
		{"Submit", r.submit},
		{"StatusForms", r.statusForms},
		{"StatusAuto", r.statusAuto},
		{"Unauthorized", r.unauthorized},
		{"Retries", r.retries},
	}
	for _, s := range steps {
		if !t.Run(s.name, s.run) {
			break // later steps build on this one; the contract check below still runs
		}
	}
	t.Run("EveryExchangeValidated", func(t *testing.T) { env.checkContract(t, spec) })
}

// listRequests: the pending requests with their objects, numeric and
// string ids.
func (r *contractRun) listRequests(t *testing.T) {
	reqs, err := r.c.ListRequests(context.Background())
	if err != nil {
		t.Fatalf("ListRequests: %v", err)
	}
	if got, want := len(reqs), 15; got != want {
		t.Fatalf("listed %d requests, want %d", got, want)
	}
	f, s := reqs[0], reqs[1]
	if f.ID != r.first || f.ClaimNumber != "CLM-100" || !f.Expiry.Equal(r.later) {
		t.Errorf("first request %s %s %s, want %s CLM-100 %s", f.ID, f.ClaimNumber, f.Expiry, r.first, r.later)
	}
	if string(f.Vehicle) != contractVehicle || string(f.Accident) != contractAccident || string(f.Instructions) != contractInstructions {
		t.Errorf("objects %s %s %s, want %s %s %s", f.Vehicle, f.Accident, f.Instructions,
			contractVehicle, contractAccident, contractInstructions)
	}
	if s.ID != "REQ/2" || s.ClaimNumber != "CLM-200" || string(s.Instructions) != "{}" || s.Vehicle != nil {
		t.Errorf("second request %+v, want id REQ/2, CLM-200, instructions {} and no vehicle", s)
	}
}

// accept: with and without bookingDate, then every refusal of accept.
func (r *contractRun) accept(t *testing.T) {
	ctx, c, env := context.Background(), r.c, r.env
	job, err := c.Accept(ctx, r.first, "RO-1001", time.Date(2025, 6, 5, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatalf("Accept with bookingDate: %v", err)
	}
	if want := env.baseURL + remote.APIRoot + "/jobs/RO-1001"; job.ID != "RO-1001" || job.Location != want {
		t.Errorf("job %s at %s, want RO-1001 at %s", job.ID, job.Location, want)
	}
	if job, err = c.Accept(ctx, r.slashed, "RO/1002", time.Time{}); err != nil {
		t.Fatalf("Accept without bookingDate: %v", err)
	}
	if job.ID != "RO/1002" || !strings.HasSuffix(job.Location, "/jobs/RO%2F1002") {
		t.Errorf("job %s at %s, want RO/1002 at …/jobs/RO%%2F1002", job.ID, job.Location)
	}
	st := env.emu.State()
	if q, _ := st.Request(r.first); q.BookingDate != "2025-06-05" {
		t.Errorf("bookingDate stored %q, want 2025-06-05", q.BookingDate)
	}
	if q, _ := st.Request(r.slashed); q.ReferenceID != "RO/1002" || q.BookingDate != "" {
		t.Errorf("request REQ/2 accepted as %q booked %q, want RO/1002 and no booking", q.ReferenceID, q.BookingDate)
	}
	_, err = c.Accept(ctx, r.other, "RO-1001", time.Time{})
	expectCallError(t, "referenceId used by another request", err, remote.ErrConflict, 409, "reference_in_use")
	_, err = c.Accept(ctx, r.first, "RO-1003", time.Time{})
	expectCallError(t, "accepted request, new referenceId", err, remote.ErrConflict, 409, "request_already_accepted")
	_, err = c.Accept(ctx, r.first, "RO-1001", time.Time{})
	expectCallError(t, "accepted request, same referenceId", err, remote.ErrConflict, 409, "request_already_accepted")
	_, err = c.Accept(ctx, "999999", "RO-1005", time.Time{})
	expectCallError(t, "unknown request", err, remote.ErrNotFound, 404, "request_not_found")

	env.clock.Advance(2 * time.Hour)
	reqs, err := c.ListRequests(ctx)
	if err != nil || len(reqs) != 12 || slices.ContainsFunc(reqs, func(q remote.Request) bool { return q.ID == r.expiring }) {
		t.Errorf("after expiry: %d requests (err %v), want 12 without %s", len(reqs), err, r.expiring)
	}
	_, err = c.Accept(ctx, r.expiring, "RO-1004", time.Time{})
	expectCallError(t, "expired request", err, remote.ErrNotFound, 410, "request_expired")
	if _, err := c.Accept(ctx, r.other, "RO-1006", time.Time{}); err != nil {
		t.Errorf("Accept after the 409: %v", err)
	}
}

// quotes: create with string ids and without ids, update by repost and by
// put, the refusals (400, 404), and a quote created Submitted at once.
func (r *contractRun) quotes(t *testing.T) {
	ctx, c := context.Background(), r.c
	created, err := c.CreateQuote(ctx, "RO-1001", contractDraft("RO-1001"))
	if err != nil {
		t.Fatalf("CreateQuote with string ids: %v", err)
	}
	if len(created.Items) != 2 || created.Items[0].ID != "line-1" || !isDigits(created.Items[1].ID) {
		t.Fatalf("created items %+v, want line-1 and a numeric id filled in", created.Items)
	}
	if p := created.Items[0].Price; p.Exponent() != -4 || p.String() != "412.375" {
		t.Errorf("price came back as %s (exponent %d), want 412.3750", p, p.Exponent())
	}
	if got := string(created.Extra["assessorNotes"]); got != `{"kept":true}` {
		t.Errorf("unknown member came back as %s", got)
	}
	bare := contractDraft("")
	for i := range bare.Items {
		bare.Items[i].ID = ""
	}
	q, err := c.CreateQuote(ctx, "RO/1002", bare)
	if err != nil {
		t.Fatalf("CreateQuote without ids: %v", err)
	}
	if len(q.Items) != 2 || !isDigits(q.Items[0].ID) || !isDigits(q.Items[1].ID) || q.Items[0].ID == q.Items[1].ID {
		t.Errorf("items %+v, want two distinct numeric ids", q.Items)
	}

	// The updates send back the id the emulator assigned as a JSON string
	// ("1", where the emulator sent 1): Item.ID is a string. The contract
	// allows both and the emulator keeps the value, so the ids compare
	// equal below; whether the real service takes "1" for its item 1 is
	// not known.
	edit := created
	edit.Items = slices.Clone(created.Items)
	edit.Items[0].Price = decimal.RequireFromString("399.9900")
	if q, err = c.UpdateDraft(ctx, "RO-1001", edit); err != nil || !q.Items[0].Price.Equal(edit.Items[0].Price) {
		t.Fatalf("UpdateDraft by repost: %v, items %+v", err, q.Items)
	}
	edit.Items[1].Quantity = decimal.RequireFromString("2.25")
	if q, err = r.put.UpdateDraft(ctx, "RO-1001", edit); err != nil || !q.Items[1].Quantity.Equal(edit.Items[1].Quantity) {
		t.Fatalf("UpdateDraft by put: %v, items %+v", err, q.Items)
	}
	if got, want := []string{q.Items[0].ID, q.Items[1].ID}, []string{"line-1", created.Items[1].ID}; !slices.Equal(got, want) {
		t.Errorf("item ids after the updates %q, want %q", got, want)
	}
	if got, want := historyKinds(r.env.emu.State(), "RO-1001"), []string{emulator.HistoryAccept,
		emulator.HistoryQuoteCreate, emulator.HistoryQuoteReplace, emulator.HistoryQuoteUpdate}; !slices.Equal(got, want) {
		t.Errorf("history of RO-1001 %q, want %q", got, want)
	}

	_, err = r.put.UpdateDraft(ctx, "RO-1001", remote.Quote{Type: "Supplement", Status: remote.StatusDraft})
	expectCallError(t, "PUT of a quote type the job lacks", err, remote.ErrNotFound, 404, "quote_not_found")
	_, err = c.CreateQuote(ctx, "RO-1001", contractDraft("RO-9999"))
	expectCallError(t, "referenceId not the job's", err, remote.ErrRejected, 400, "invalid_field")
	_, err = c.CreateQuote(ctx, "RO-404", contractDraft(""))
	expectCallError(t, "unknown job", err, remote.ErrNotFound, 404, "job_not_found")

	sup := remote.Quote{Type: "Supplement", Status: remote.StatusSubmitted, Items: bare.Items[:1]}
	if q, err = c.CreateQuote(ctx, "RO/1002", sup); err != nil || q.Status != remote.StatusSubmitted {
		t.Fatalf("CreateQuote Submitted at once: %v, status %q", err, q.Status)
	}
	// Only the forms with the quote type in the path name another quote
	// than the job's Estimate.
	byType := r.env.client(contractToken, func(cfg *remote.Config) {
		cfg.StatusPath, cfg.StatusMethod = remote.StatusPathQuotesID, http.MethodPut
	})
	_, err = byType.SetStatus(ctx, "RO/1002", "Supplement", remote.StatusSubmitted)
	expectCallError(t, "submit a quote created Submitted", err, remote.ErrConflict, 409, "quote_already_submitted")
}

// submit: the default status change, then every refusal after it.
func (r *contractRun) submit(t *testing.T) {
	ctx, c := context.Background(), r.c
	q, err := c.SetStatus(ctx, "RO-1001", remote.QuoteTypeEstimate, remote.StatusSubmitted)
	if err != nil || q.Status != remote.StatusSubmitted || len(q.Items) != 2 {
		t.Fatalf("SetStatus: %v, quote %+v; want Submitted with its 2 items", err, q)
	}
	_, err = c.UpdateDraft(ctx, "RO-1001", q)
	expectCallError(t, "repost of a Submitted quote", err, remote.ErrConflict, 409, "quote_submitted")
	_, err = r.put.UpdateDraft(ctx, "RO-1001", q)
	expectCallError(t, "PUT of a Submitted quote", err, remote.ErrConflict, 409, "quote_submitted")
	_, err = c.SetStatus(ctx, "RO-1001", remote.QuoteTypeEstimate, remote.StatusSubmitted)
	expectCallError(t, "second submit", err, remote.ErrConflict, 409, "quote_already_submitted")
	_, err = c.SetStatus(ctx, "RO-404", remote.QuoteTypeEstimate, remote.StatusSubmitted)
	expectCallError(t, "submit on an unknown job", err, remote.ErrNotFound, 404, "job_not_found")
	j, _ := r.env.emu.State().Job("RO-1001")
	if sq, _ := j.Quote(remote.QuoteTypeEstimate); sq.Status != remote.StatusSubmitted || sq.SubmitCount != 1 {
		t.Errorf("stored quote %s submitted %d times, want Submitted once", sq.Status, sq.SubmitCount)
	}
}

// statusForms: each of the four path forms with PUT and with POST, each on
// a job of its own.
func (r *contractRun) statusForms(t *testing.T) {
	n := 0
	for _, form := range []string{remote.StatusPathQuoteID, remote.StatusPathQuotesID,
		remote.StatusPathQuoteStatus, remote.StatusPathQuotesStatus} {
		for _, method := range []string{http.MethodPut, http.MethodPost} {
			job := fmt.Sprintf("RO-S%d", n)
			r.env.draftJob(t, r.c, r.spare[n], job)
			n++
			sc := r.env.client(contractToken, func(cfg *remote.Config) { cfg.StatusPath, cfg.StatusMethod = form, method })
			q, err := sc.SetStatus(context.Background(), job, remote.QuoteTypeEstimate, remote.StatusSubmitted)
			if err != nil || q.Status != remote.StatusSubmitted {
				t.Errorf("%s %s: %v, status %q", method, form, err, q.Status)
			}
			r.env.expectSubmittedBy(t, job, method+" "+form)
		}
	}
}

// statusAuto: auto mode (whatever status_method says) tries all eight
// pairs on an unknown job, then submits with the first pair, the public
// documentation's example, and remembers it.
func (r *contractRun) statusAuto(t *testing.T) {
	ctx := context.Background()
	for i, method := range []string{http.MethodPut, http.MethodPost} {
		job := fmt.Sprintf("RO-A%d", i)
		r.env.draftJob(t, r.c, r.spare[8+i], job)
		var mine attemptLog
		ac := r.env.client(contractToken, func(cfg *remote.Config) {
			cfg.StatusPath, cfg.StatusMethod = remote.StatusPathAuto, method
			cfg.Observe = func(ci remote.CallInfo) { r.env.attempts.observe(ci); mine.observe(ci) }
		})
		_, err := ac.SetStatus(ctx, "RO-404", remote.QuoteTypeEstimate, remote.StatusSubmitted)
		expectCallError(t, "auto on an unknown job", err, remote.ErrNotFound, 404, "job_not_found")
		if got := mine.routes(); len(got) != 8 || len(slices.Compact(slices.Sorted(slices.Values(got)))) != 8 {
			t.Errorf("auto (%s) tried %q, want the 8 (method, form) pairs once each", method, got)
		}
		if q, err := ac.SetStatus(ctx, job, remote.QuoteTypeEstimate, remote.StatusSubmitted); err != nil || q.Status != remote.StatusSubmitted {
			t.Errorf("auto (%s): %v, status %q", method, err, q.Status)
		}
		documented := http.MethodPost + " " + remote.StatusPathQuotesStatus
		r.env.expectSubmittedBy(t, job, documented)
		_, err = ac.SetStatus(ctx, job, remote.QuoteTypeEstimate, remote.StatusSubmitted)
		expectCallError(t, "auto, second submit", err, remote.ErrConflict, 409, "quote_already_submitted")
		if got := mine.routes(); len(got) != 10 || got[9] != documented {
			t.Errorf("auto (%s) attempts %q, want the remembered pair alone for the last call", method, got)
		}
	}
}

// retries: injected 429 (with Retry-After) and 503 answers are retried,
// and validated like any other answer.
func (r *contractRun) retries(t *testing.T) {
	r.env.emu.AddFault(emulator.Fault{Route: emulator.RouteListRequests, Action: emulator.FaultStatus,
		Status: http.StatusTooManyRequests, RetryAfter: time.Second, Count: 1})
	r.env.emu.AddFault(emulator.Fault{Route: emulator.RouteListRequests, Action: emulator.FaultStatus,
		Status: http.StatusServiceUnavailable, Count: 1})
	if _, err := r.c.ListRequests(context.Background()); err != nil {
		t.Errorf("ListRequests through a 429 and a 503: %v", err)
	}
	for _, f := range r.env.emu.Faults() {
		if f.Fired != 1 {
			t.Errorf("fault %s (%d) fired %d times, want 1", f.ID, f.Fault.Status, f.Fired)
		}
	}
}

// unauthorized: a wrong token gets 401 (twice: the client retries once
// with a fresh token) and changes nothing.
func (r *contractRun) unauthorized(t *testing.T) {
	ctx := context.Background()
	bad := r.env.client("wrong-token", nil)
	_, err := bad.ListRequests(ctx)
	expectCallError(t, "list with a wrong token", err, remote.ErrUnauthorized, 401, "unauthorized")
	_, err = bad.Accept(ctx, r.untouched, "RO-1401", time.Time{})
	expectCallError(t, "accept with a wrong token", err, remote.ErrUnauthorized, 401, "unauthorized")
	var e *remote.Error
	if errors.As(err, &e) && e.Attempts != 2 {
		t.Errorf("accept with a wrong token: %d attempts, want 2", e.Attempts)
	}
	if q, _ := r.env.emu.State().Request(r.untouched); q.Status != emulator.RequestPending {
		t.Errorf("request %s is %s after a refused accept, want pending", r.untouched, q.Status)
	}
}
