package remote_test

// The contract test's referee: the OpenAPI document, the validating
// transport every exchange goes through, and the checks that prove the
// validator is not vacuous.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
)

// contractSpec is remote/openapi.yaml loaded, validated and routed.
type contractSpec struct {
	doc    *openapi3.T
	router routers.Router
}

func loadContractSpec(t *testing.T) *contractSpec {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(contractSpecPath)
	if err != nil {
		t.Fatalf("load %s: %v", contractSpecPath, err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("validate %s: %v", contractSpecPath, err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("route %s: %v", contractSpecPath, err)
	}
	return &contractSpec{doc: doc, router: router}
}

// operations lists the contract's operations as "METHOD /path", sorted.
func (s *contractSpec) operations() []string {
	var ops []string
	for path, item := range s.doc.Paths.Map() {
		for method := range item.Operations() {
			ops = append(ops, method+" "+path)
		}
	}
	slices.Sort(ops)
	return ops
}

// inProcessTransport serves each request with h.ServeHTTP and an
// httptest.ResponseRecorder: no network, the emulator's code path only.
type inProcessTransport struct{ h http.Handler }

func (p inProcessTransport) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	var body io.Reader
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		if len(b) > 0 {
			body = bytes.NewReader(b)
		}
	}
	sreq := httptest.NewRequest(req.Method, req.URL.String(), body).WithContext(req.Context())
	sreq.Header = req.Header.Clone()
	rec := httptest.NewRecorder()
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			resp, err = nil, errors.New("in-process emulator aborted the answer")
		}
	}()
	p.h.ServeHTTP(rec, sreq)
	resp = rec.Result()
	resp.Request = req
	return resp, nil
}

// contractTransport validates every exchange through it against the
// contract: the request (parameters, body, bearer token, the seed's
// headers) and the answer (status, headers, body schema).
type contractTransport struct {
	spec *contractSpec
	base http.RoundTripper

	mu         sync.Mutex
	exchanges  int            // requests sent through
	validated  int            // exchanges whose request and answer were both checked
	routes     map[string]int // "METHOD /path" of the contract → exchanges validated
	statuses   map[int]int    // status → exchanges validated
	violations []string
}

func newContractTransport(spec *contractSpec, base http.RoundTripper) *contractTransport {
	return &contractTransport{spec: spec, base: base, routes: make(map[string]int), statuses: make(map[int]int)}
}

func (v *contractTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		var err error
		reqBody, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	v.mu.Lock()
	v.exchanges++
	v.mu.Unlock()
	resp, err := v.base.RoundTrip(req)
	if err != nil {
		v.violate("%s %s: no answer to validate: %v", req.Method, req.URL.Path, err)
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		v.violate("%s %s: read the answer: %v", req.Method, req.URL.Path, err)
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	v.check(req, reqBody, resp, respBody)
	return resp, nil
}

// check validates one exchange and records the outcome.
func (v *contractTransport) check(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) {
	ctx := context.Background()
	what := fmt.Sprintf("%s %s → %d", req.Method, req.URL.EscapedPath(), resp.StatusCode)
	vreq := req.Clone(ctx)
	vreq.Body, vreq.GetBody, vreq.ContentLength = http.NoBody, nil, int64(len(reqBody))
	if len(reqBody) > 0 {
		vreq.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	route, params, err := v.spec.router.FindRoute(vreq)
	if err != nil {
		v.violate("%s: no operation in the contract: %v", what, err)
		return
	}
	// The seed: "Every request carries the header Content-Type with the
	// value application/json" (the bearer token is checked below).
	if ct := req.Header.Get("Content-Type"); ct != "application/json" {
		v.violate("%s: request Content-Type %q, the seed wants application/json", what, ct)
	}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route,
		Options: &openapi3filter.Options{MultiError: true, RejectWhenRequestBodyNotSpecified: true,
			AuthenticationFunc: bearerPresent}}
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
		v.violate("%s: the request violates the contract: %v\nrequest body: %s", what, err, reqBody)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode,
		Header: resp.Header, Options: &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true}}
	out.SetBodyBytes(respBody)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		v.violate("%s: the answer violates the contract: %v\nanswer body: %s", what, err, respBody)
	}
	v.mu.Lock()
	v.validated++
	v.routes[route.Method+" "+route.Path]++
	v.statuses[resp.StatusCode]++
	v.mu.Unlock()
}

// bearerPresent is the contract's bearerAuth: "Authorization: Bearer
// <token>" with a token. Whether the token is right is the emulator's call.
func bearerPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if s := in.SecurityScheme; s == nil || s.Type != "http" || !strings.EqualFold(s.Scheme, "bearer") {
		return in.NewError(fmt.Errorf("security scheme %q is not http bearer", in.SecuritySchemeName))
	}
	scheme, tok, _ := strings.Cut(in.RequestValidationInput.Request.Header.Get("Authorization"), " ")
	if scheme != "Bearer" || strings.TrimSpace(tok) == "" {
		return in.NewError(errors.New(`no "Authorization: Bearer <token>" header`))
	}
	return nil
}

func (v *contractTransport) violate(format string, args ...any) {
	v.mu.Lock()
	v.violations = append(v.violations, fmt.Sprintf(format, args...))
	v.mu.Unlock()
}

// contractReport is a snapshot of a contractTransport's counters.
type contractReport struct {
	exchanges, validated int
	routes               map[string]int
	statuses             map[int]int
	violations           []string
}

func (v *contractTransport) report() contractReport {
	v.mu.Lock()
	defer v.mu.Unlock()
	r := contractReport{exchanges: v.exchanges, validated: v.validated,
		routes: make(map[string]int), statuses: make(map[int]int), violations: slices.Clone(v.violations)}
	for k, n := range v.routes {
		r.routes[k] = n
	}
	for k, n := range v.statuses {
		r.statuses[k] = n
	}
	return r
}

// runValidatorNotVacuous proves the validator catches what it should:
// wrong requests sent through it, and answers tampered with between the
// emulator and it on their way to the real client.
func runValidatorNotVacuous(t *testing.T, spec *contractSpec, setup contractSetup) {
	ctx := context.Background()
	t.Run("WrongRequests", func(t *testing.T) {
		env := newContractEnv(t, spec, setup, nil)
		id := env.emu.AddRequests(emulator.SeedRequest{ClaimNumber: "CLM-V"})[0]
		env.draftJob(t, env.client(contractToken, nil), id, "RO-V1")
		plain := &http.Client{Transport: env.validator}
		for _, c := range []struct {
			name, method, path, body string
			bearer                   bool
			want                     string // in the violation
		}{
			{"AcceptWithoutReferenceID", "POST", "/requests/" + id, `{"bookingDate":"2025-06-05"}`, true, `"referenceId"`},
			{"PriceAsString", "POST", "/jobs/RO-V1/quotes", `{"type":"Estimate","status":"Draft","items":[` +
				`{"type":"Parts","description":"x","quantity":1,"price":"412.38","total":412.38}]}`, true, "price"},
			{"BookingDateNotADate", "POST", "/requests/" + id, `{"referenceId":"RO-V2","bookingDate":"05/06/2025"}`, true, "bookingDate"},
			{"StatusDraft", "PUT", "/jobs/RO-V1/quotes/Estimate/status", `{"status":"Draft"}`, true, "status"},
			{"BodyOnList", "GET", "/requests", `{}`, true, "body not allowed"},
			{"NoBearerToken", "GET", "/requests", "", false, "Authorization"},
		} {
			before := len(env.validator.report().violations)
			var body io.Reader
			if c.body != "" {
				body = strings.NewReader(c.body)
			}
			req, err := http.NewRequest(c.method, env.baseURL+remote.APIRoot+c.path, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			if c.bearer {
				req.Header.Set("Authorization", "Bearer "+contractToken)
			}
			resp, err := plain.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			resp.Body.Close()
			expectViolation(t, c.name, env.validator.report().violations[before:], c.want)
		}
	})
	t.Run("WrongAnswers", func(t *testing.T) {
		for _, c := range []struct {
			name string
			edit func(resp *http.Response, body []byte) []byte
			call func(c *remote.Client, id string) error
			want string // in the violation
		}{
			{"JobClaimNumberRenamed", replaceInBody(`"claim_number"`, `"claimNumber"`), acceptAs("RO-W1"), "claimNumber"},
			{"JobWithoutLocation", func(resp *http.Response, body []byte) []byte {
				resp.Header.Del("Location")
				return body
			}, acceptAs("RO-W2"), "Location"},
			{"PriceAsString", replaceInBody(`"price":412.3750`, `"price":"412.3750"`), draftAs("RO-W3"), "price"},
			{"ItemIDDropped", replaceInBody(`"id":"line-1",`, ``), draftAs("RO-W4"), `"id"`},
			{"UndocumentedStatus", func(resp *http.Response, body []byte) []byte {
				resp.StatusCode, resp.Status = http.StatusAccepted, "202 Accepted"
				return body
			}, func(c *remote.Client, _ string) error { _, err := c.ListRequests(ctx); return err }, "status"},
		} {
			t.Run(c.name, func(t *testing.T) {
				tamper := &tamperTransport{edit: c.edit}
				env := newContractEnv(t, spec, setup, func(base http.RoundTripper) http.RoundTripper {
					tamper.base = base
					return tamper
				})
				id := env.emu.AddRequests(emulator.SeedRequest{ClaimNumber: "CLM-W"})[0]
				_ = c.call(env.client(contractToken, nil), id) // the tolerant client may well take it
				if tamper.changed.Load() == 0 {
					t.Fatalf("the answer was not tampered with")
				}
				expectViolation(t, c.name, env.validator.report().violations, c.want)
			})
		}
	})
}

// acceptAs is a call accepting request id as job.
func acceptAs(job string) func(*remote.Client, string) error {
	return func(c *remote.Client, id string) error {
		_, err := c.Accept(context.Background(), id, job, time.Time{})
		return err
	}
}

// draftAs is a call accepting request id as job and creating its Draft.
func draftAs(job string) func(*remote.Client, string) error {
	return func(c *remote.Client, id string) error {
		if err := acceptAs(job)(c, id); err != nil {
			return err
		}
		_, err := c.CreateQuote(context.Background(), job, contractDraft(job))
		return err
	}
}

// expectViolation checks that violations has one mentioning want.
func expectViolation(t *testing.T, what string, violations []string, want string) {
	t.Helper()
	if !slices.ContainsFunc(violations, func(v string) bool { return strings.Contains(v, want) }) {
		t.Errorf("%s: violations %q, want one mentioning %s", what, violations, want)
	}
}

// tamperTransport changes answers on their way back: edit may change the
// response's status and headers and returns the new body.
type tamperTransport struct {
	base    http.RoundTripper
	edit    func(resp *http.Response, body []byte) []byte
	changed atomic.Int32 // answers edit changed
}

func (tt *tamperTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := tt.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	status, location := resp.StatusCode, resp.Header.Get("Location")
	edited := tt.edit(resp, body)
	if !bytes.Equal(edited, body) || resp.StatusCode != status || resp.Header.Get("Location") != location {
		tt.changed.Add(1)
	}
	body = edited
	resp.Header.Del("Content-Length")
	resp.ContentLength = int64(len(body))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// replaceInBody is an edit replacing from with to in the body of 2xx answers.
func replaceInBody(from, to string) func(*http.Response, []byte) []byte {
	return func(resp *http.Response, body []byte) []byte {
		if resp.StatusCode/100 != 2 {
			return body
		}
		return bytes.Replace(body, []byte(from), []byte(to), 1)
	}
}
