package emulator_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/quotesync/quotesync/remote/emulator"
)

// Contracts the emulator's answers must satisfy: the integration API and
// the admin API. remote/openapi.yaml is the spec mode's contract; the
// documented mode (plain-text errors, string ids, claimNumber, two status
// forms) differs from it on purpose and is checked by documented_test.go.
const (
	specPath      = "../openapi.yaml"
	adminSpecPath = "admin-openapi.yaml"
)

// loadSpec loads and validates remote/openapi.yaml and builds its router.
func loadSpec(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	return loadSpecFile(t, specPath)
}

// loadSpecFile loads and validates an OpenAPI file and builds its router.
func loadSpecFile(t testing.TB, specPath string) (*openapi3.T, routers.Router) {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(specPath)
	if err != nil {
		t.Fatalf("load %s: %v", specPath, err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("validate %s: %v", specPath, err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("router for %s: %v", specPath, err)
	}
	return doc, router
}

// validatingTransport validates every exchange against the contract of its
// path (openapi.yaml for the API, admin-openapi.yaml for the admin API):
// the answer always, the request whenever the emulator accepted it (2xx),
// so the emulator never takes what the contract forbids.
type validatingTransport struct {
	t      testing.TB
	router routers.Router // the integration API
	admin  routers.Router // the admin API
	base   http.RoundTripper

	mu       sync.Mutex
	verified map[string]int // "PUT /jobs/{jobId}/quotes/{quoteId}/status 200" → count
}

func newValidatingTransport(t testing.TB) *validatingTransport {
	_, router := loadSpec(t)
	_, admin := loadSpecFile(t, adminSpecPath)
	return &validatingTransport{t: t, router: router, admin: admin, base: http.DefaultTransport, verified: make(map[string]int)}
}

func (v *validatingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		var err error
		if reqBody, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	resp, err := v.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	router := v.router
	switch {
	case strings.HasPrefix(req.URL.Path, emulator.APIPrefix+"/"):
	case strings.HasPrefix(req.URL.Path, emulator.AdminPrefix):
		router = v.admin
	default:
		return resp, nil
	}
	respBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	v.check(router, req, reqBody, resp, respBody)
	return resp, nil
}

// check validates one exchange and reports problems on v.t.
func (v *validatingTransport) check(router routers.Router, req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) {
	ctx := context.Background()
	vreq := req.Clone(ctx)
	vreq.Body = io.NopCloser(bytes.NewReader(reqBody))
	if router == v.admin && len(reqBody) > 0 {
		vreq.Header.Set("Content-Type", "application/json") // the admin API reads JSON whatever the type
	}
	route, params, err := router.FindRoute(vreq)
	if err != nil {
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed ||
			resp.StatusCode == http.StatusUnauthorized {
			return // a route the contract does not have, refused as such
		}
		v.t.Errorf("openapi: no operation for %s %s, yet the emulator answered %d", req.Method, req.URL.Path, resp.StatusCode)
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if resp.StatusCode/100 == 2 {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			v.t.Errorf("openapi: the emulator answered %d to %s %s with body %s, which the contract rejects: %v",
				resp.StatusCode, req.Method, req.URL.Path, reqBody, err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode,
		Header: resp.Header, Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	out.SetBodyBytes(respBody)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		v.t.Errorf("openapi: answer %d to %s %s violates the contract: %v\nbody: %s",
			resp.StatusCode, req.Method, req.URL.Path, err, respBody)
		return
	}
	v.mu.Lock()
	v.verified[req.Method+" "+route.Path+" "+resp.Status[:3]]++
	v.mu.Unlock()
}

// TestOpenAPIDocumentIsValid loads the contract and checks it names every
// route of the emulator with the right methods.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	doc, _ := loadSpec(t)
	for _, name := range emulator.Routes() {
		method, path, _ := strings.Cut(name, " ")
		item := doc.Paths.Find(path)
		if item == nil {
			t.Errorf("route %s: path missing from openapi.yaml", name)
			continue
		}
		if item.GetOperation(method) == nil {
			t.Errorf("route %s: method missing from openapi.yaml", name)
		}
	}
	if got, want := doc.Paths.Len(), 8; got != want {
		t.Errorf("openapi.yaml has %d paths, want %d (one per route template)", got, want)
	}
	loadSpecFile(t, adminSpecPath)
}

// TestOpenAPIRejectsWrongAnswers proves the validation is not vacuous: a
// misspelt field, a string price or a missing Location header fail it.
func TestOpenAPIRejectsWrongAnswers(t *testing.T) {
	_, router := loadSpec(t)
	cases := []struct {
		name, method, path, reqBody string
		status                      int
		header                      http.Header
		body                        string
		want                        string // in the violation
	}{
		{"JobWithoutID", "POST", "/requests/1", `{"referenceId":"R1"}`, 201,
			http.Header{"Location": {"http://x/integrations/repairer/jobs/R1"}}, `{"requestId":1,"claim_number":"C"}`, `property "id" is missing`},
		{"MissingLocation", "POST", "/requests/1", `{"referenceId":"R1"}`, 201,
			http.Header{}, `{"id":"R1","requestId":1,"claim_number":"C"}`, `"Location" missing`},
		{"MisspeltItemField", "POST", "/jobs/R1/quotes", `{"type":"Estimate","status":"Draft"}`, 201, nil,
			`{"type":"Estimate","status":"Draft","rates":[],"items":[{"id":1,"type":"Parts","description":"x","qty":1,"quantity":1,"price":1,"total":1}]}`, `"qty" is unsupported`},
		{"PriceAsString", "POST", "/jobs/R1/quotes", `{"type":"Estimate","status":"Draft"}`, 201, nil,
			`{"type":"Estimate","status":"Draft","rates":[],"items":[{"id":1,"type":"Parts","description":"x","quantity":1,"price":"1.00","total":1}]}`, `/items/0/price`},
		{"ItemWithoutID", "POST", "/jobs/R1/quotes", `{"type":"Estimate","status":"Draft"}`, 201, nil,
			`{"type":"Estimate","status":"Draft","rates":[],"items":[{"type":"Parts","description":"x","quantity":1,"price":1,"total":1}]}`, `property "id" is missing`},
		{"UnknownErrorCode", "GET", "/requests", ``, 401, nil, `{"error":{"code":"nope","message":"m"}}`, `allowed values`},
		{"ErrorExtraMember", "GET", "/requests", ``, 401, nil, `{"error":{"code":"unauthorized","message":"m","hint":"x"}}`, `"hint" is unsupported`},
		{"UndocumentedStatus", "GET", "/requests", ``, 418, nil, `{"error":{"code":"unauthorized","message":"m"}}`, `status is not supported`},
		{"RequestExpiryNotDate", "GET", "/requests", ``, 200, nil, `[{"id":1,"expiry":"tomorrow","claim_number":"C","instructions":{}}]`, `"date-time"`},
		{"RequestWithoutInstructions", "GET", "/requests", ``, 200, nil, `[{"id":1,"expiry":"2025-01-01T00:00:00Z","claim_number":"C"}]`, `"instructions" is missing`},
		{"StatusDraft", "PUT", "/jobs/R1/quotes/Estimate/status", `{"status":"Submitted"}`, 200, nil,
			`{"type":"Estimate","status":"Pending","rates":[],"items":[]}`, `allowed values`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, "http://127.0.0.1"+emulator.APIPrefix+c.path, strings.NewReader(c.reqBody))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			route, params, err := router.FindRoute(req)
			if err != nil {
				t.Fatalf("find route: %v", err)
			}
			header := http.Header{"Content-Type": {"application/json"}}
			for k, v := range c.header {
				header[k] = v
			}
			in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
				Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
			out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: c.status, Header: header,
				Options: &openapi3filter.Options{IncludeResponseStatus: true}}
			out.SetBodyBytes([]byte(c.body))
			err = openapi3filter.ValidateResponse(context.Background(), out)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("answer %d %s: violation %v, want one mentioning %s", c.status, c.body, err, c.want)
			}
		})
	}
}
