package emulator_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
)

// The documented mode: the service as its public documentation describes
// it. Its answers are not checked against remote/openapi.yaml (the spec
// mode's contract); each test checks the documented shape itself.

// documentedHarness starts an emulator in ModeDocumented with a token TTL
// of ttl (0: the default) and returns it with a valid access token.
func documentedHarness(t *testing.T, ttl time.Duration) (*harness, string) {
	t.Helper()
	h := newHarness(t, withoutValidation(), func(o *emulator.Options, _ *harness) {
		o.Mode, o.ClientID, o.TokenTTL = emulator.ModeDocumented, "shop-1", ttl
	})
	return h, h.fetchToken(url.Values{"grant_type": {"client_credentials"}, "client_id": {"shop-1"},
		"client_secret": {testToken}, "redirect_uri": {"https://shop.example/cb"}}, "", http.StatusOK)
}

// fetchToken posts form to the token endpoint (with HTTP Basic when basic
// is "id:secret"), checks the status and returns the access token of a 200.
func (h *harness) fetchToken(form url.Values, basic string, want int) string {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+emulator.TokenPath, strings.NewReader(form.Encode()))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if id, secret, ok := strings.Cut(basic, ":"); ok {
		req.SetBasicAuth(id, secret)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		h.t.Fatalf("token endpoint: decode: %v", err)
	}
	if resp.StatusCode != want {
		h.t.Fatalf("token endpoint: status %d (%q), want %d", resp.StatusCode, body.Error, want)
	}
	if want == http.StatusOK && (body.AccessToken == "" || body.TokenType != "Bearer" || body.ExpiresIn <= 0) {
		h.t.Fatalf("token answer %+v, want a Bearer token with expires_in", body)
	}
	return body.AccessToken
}

// docCall sends an API call with bearer token tok.
func (h *harness) docCall(tok, method, path, body string) response {
	h.t.Helper()
	return h.send(method, h.api+path, body, map[string]string{"Authorization": "Bearer " + tok})
}

// expectPlain fails unless r has status want and a plain-text body
// containing text.
func expectPlain(t *testing.T, what string, r response, want int, text string) {
	t.Helper()
	expectStatus(t, what, r, want)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("%s: Content-Type %q, want text/plain", what, ct)
	}
	if !strings.Contains(string(r.body), text) || strings.Contains(string(r.body), `"error"`) {
		t.Errorf("%s: body %q, want plain text with %q", what, r.body, text)
	}
}

func TestDocumentedTokenEndpoint(t *testing.T) {
	h, tok := documentedHarness(t, 10*time.Minute)
	good := url.Values{"grant_type": {"client_credentials"}, "redirect_uri": {"https://shop.example/cb"}}
	// HTTP Basic works as well as the form.
	basicTok := h.fetchToken(good, "shop-1:"+testToken, http.StatusOK)
	for name, form := range map[string]url.Values{
		"NoRedirectURI": {"grant_type": {"client_credentials"}, "client_id": {"shop-1"}, "client_secret": {testToken}},
		"WrongGrant":    {"grant_type": {"password"}, "client_id": {"shop-1"}, "client_secret": {testToken}, "redirect_uri": {"x"}},
	} {
		t.Run(name, func(t *testing.T) { h.fetchToken(form, "", http.StatusBadRequest) })
	}
	h.fetchToken(good, "shop-1:wrong", http.StatusUnauthorized)
	h.fetchToken(good, "other:"+testToken, http.StatusUnauthorized)
	if got := h.emu.TokenCalls(); got != 6 {
		t.Errorf("token calls = %d, want 6", got)
	}
	for _, tk := range []string{tok, basicTok} {
		expectStatus(t, "list with an issued token", h.docCall(tk, "GET", "/requests", ""), http.StatusOK)
	}
	// The static token of the spec mode is not a token here.
	expectPlain(t, "list with the client secret as token", h.call("GET", "/requests", ""), http.StatusUnauthorized, "token")
	// Tokens expire with the clock, and on demand.
	h.clock.Advance(10 * time.Minute)
	expectPlain(t, "list with an expired token", h.docCall(tok, "GET", "/requests", ""), http.StatusUnauthorized, "token")
	fresh := h.fetchToken(url.Values{"grant_type": {"client_credentials"}, "client_id": {"shop-1"},
		"client_secret": {testToken}, "redirect_uri": {"https://shop.example/cb"}}, "", http.StatusOK)
	expectStatus(t, "list with a fresh token", h.docCall(fresh, "GET", "/requests", ""), http.StatusOK)
	h.emu.ExpireTokens()
	expectStatus(t, "list after ExpireTokens", h.docCall(fresh, "GET", "/requests", ""), http.StatusUnauthorized)
}

func TestDocumentedRequestsAndAccept(t *testing.T) {
	h, tok := documentedHarness(t, 0)
	id := h.seed("CLM-DOC-1")
	r := h.docCall(tok, "GET", "/requests", "")
	expectStatus(t, "list", r, http.StatusOK)
	var list []map[string]json.RawMessage
	r.decode(t, &list)
	if len(list) != 1 {
		t.Fatalf("listed %s, want one request", r.body)
	}
	if got := string(list[0]["id"]); got != `"`+id+`"` {
		t.Errorf("id %s, want the string %q", got, id)
	}
	if got := string(list[0]["claimNumber"]); got != `"CLM-DOC-1"` || list[0]["claim_number"] != nil {
		t.Errorf("claim number as %s, want claimNumber only", r.body)
	}
	var expiry string
	_ = json.Unmarshal(list[0]["expiry"], &expiry)
	exp, err := time.Parse(time.RFC3339, expiry)
	if !strings.HasSuffix(expiry, "+10:00") || err != nil || !exp.Equal(h.clock.Now().Add(24*time.Hour)) {
		t.Errorf("expiry %q (%v), want the same instant with the local offset +10:00", expiry, err)
	}

	accept := `{"referenceId":"RO-1"}`
	r = h.docCall(tok, "POST", "/requests/"+id, accept)
	expectStatus(t, "accept", r, http.StatusCreated)
	if !strings.Contains(string(r.body), `"requestId":"`+id+`"`) || !strings.Contains(string(r.body), `"claimNumber":"CLM-DOC-1"`) {
		t.Errorf("the accepted job %s, want requestId as a string and claimNumber", r.body)
	}
	// Our accept sent again: 400 in plain text, not 409.
	expectPlain(t, "accept re-sent", h.docCall(tok, "POST", "/requests/"+id, accept), http.StatusBadRequest, "request already accepted")
	if st, _ := h.emu.State().Request(id); st.ReferenceID != "RO-1" {
		t.Errorf("the refused accept changed the request: %+v", st)
	}
	// Other errors are plain text too.
	expectPlain(t, "unknown request", h.docCall(tok, "POST", "/requests/999999", accept), http.StatusNotFound, "999999")
	expectPlain(t, "bad body", h.docCall(tok, "POST", "/requests/"+id, `{"referenceId":""}`), http.StatusBadRequest, "referenceId")
}

func TestDocumentedTakenElsewhere(t *testing.T) {
	h, tok := documentedHarness(t, 0)
	id := h.seed("CLM-DOC-2")
	if err := h.emu.TakeElsewhere(id, "PORTAL-77"); err != nil {
		t.Fatal(err)
	}
	if err := h.emu.TakeElsewhere(id, "PORTAL-78"); err == nil || !strings.Contains(err.Error(), "PORTAL-77") {
		t.Errorf("taking a taken request again: %v, want an error naming PORTAL-77", err)
	}
	r := h.docCall(tok, "GET", "/requests", "")
	if strings.TrimSpace(string(r.body)) != "[]" {
		t.Errorf("a request taken elsewhere is still listed: %s", r.body)
	}
	r = h.docCall(tok, "POST", "/requests/"+id, `{"referenceId":"RO-2"}`)
	expectStatus(t, "our accept of a request taken elsewhere", r, http.StatusConflict)
	var body struct{ ReferenceID, RequestID string }
	r.decode(t, &body)
	if body.ReferenceID != "PORTAL-77" || body.RequestID != id {
		t.Errorf("409 body %s, want the other party's referenceId PORTAL-77 and request %s", r.body, id)
	}
	// Through the admin API.
	id2 := h.seed("CLM-DOC-3")
	r = h.send("POST", h.srv.URL+emulator.AdminPrefix+"requests/"+id2+"/take", `{"referenceId":"PORTAL-79"}`, nil)
	expectStatus(t, "admin take", r, http.StatusNoContent)
	if st, _ := h.emu.State().Request(id2); st.ReferenceID != "PORTAL-79" || st.Status != emulator.RequestAccepted {
		t.Errorf("after the admin take: %+v", st)
	}
	r = h.send("POST", h.srv.URL+emulator.AdminPrefix+"tokens/expire", `{}`, nil)
	expectStatus(t, "admin expire tokens", r, http.StatusNoContent)
	expectStatus(t, "list after the admin expired tokens", h.docCall(tok, "GET", "/requests", ""), http.StatusUnauthorized)
}

func TestDocumentedQuotesAndStatusForms(t *testing.T) {
	h, tok := documentedHarness(t, 0)
	quote := func(itemType string) string {
		return fmt.Sprintf(`{"status":"Draft","items":[{"type":%q,"description":"x","quantity":1,"price":2,"total":2}]}`, itemType)
	}
	for i, form := range []struct{ method, path string }{
		{"POST", "/jobs/%s/quotes/status/Submitted"},
		{"PUT", "/jobs/%s/quote/status/Submitted"},
	} {
		job := fmt.Sprintf("RO-%d", i)
		id := h.seed("CLM-" + job)
		expectStatus(t, "accept", h.docCall(tok, "POST", "/requests/"+id, `{"referenceId":"`+job+`"}`), http.StatusCreated)
		// A quote without type: it is the Estimate.
		r := h.docCall(tok, "POST", "/jobs/"+job+"/quotes", quote("RepairLabour"))
		expectStatus(t, "quote without type", r, http.StatusCreated)
		// Every status form but the documented ones is unknown (404, not 405).
		for _, other := range []struct{ method, path string }{
			{"PUT", "/jobs/%s/quotes/status/Submitted"}, {"POST", "/jobs/%s/quote/status/Submitted"},
			{"PUT", "/jobs/%s/quotes/Estimate/status"}, {"POST", "/jobs/%s/quotes/Estimate/status"},
			{"PUT", "/jobs/%s/quote/Estimate/status"}, {"POST", "/jobs/%s/quote/Estimate/status"},
		} {
			r := h.docCall(tok, other.method, fmt.Sprintf(other.path, job), `{"status":"Submitted"}`)
			expectPlain(t, other.method+" "+other.path, r, http.StatusNotFound, "no route")
		}
		r = h.docCall(tok, form.method, fmt.Sprintf(form.path, job), "")
		expectStatus(t, form.method+" "+form.path, r, http.StatusOK)
		rj, _ := h.emu.State().Job(job)
		if q, ok := rj.Quote("Estimate"); !ok || q.Status != emulator.StatusSubmitted || q.SubmitCount != 1 {
			t.Errorf("job %s after %s %s: %+v", job, form.method, form.path, rj.Quotes)
		}
	}
	id := h.seed("CLM-TYPES")
	expectStatus(t, "accept", h.docCall(tok, "POST", "/requests/"+id, `{"referenceId":"RO-T"}`), http.StatusCreated)
	for i, typ := range emulator.DocumentedItemTypes() {
		want := http.StatusOK // the Draft replaced
		if i == 0 {
			want = http.StatusCreated
		}
		expectStatus(t, "item type "+typ, h.docCall(tok, "POST", "/jobs/RO-T/quotes", quote(typ)), want)
	}
	for _, typ := range []string{"RemoveReplace", "Paint", "Sublet"} {
		expectPlain(t, "item type "+typ, h.docCall(tok, "POST", "/jobs/RO-T/quotes", quote(typ)), http.StatusBadRequest, "not a documented item type")
	}
}

func TestModeIsChecked(t *testing.T) {
	_, err := emulator.New(emulator.Options{Token: "x", Mode: "real"})
	if !errors.Is(err, emulator.ErrMode) {
		t.Errorf("New with mode %q: %v, want ErrMode", "real", err)
	}
	emu, err := emulator.New(emulator.Options{Token: "x"})
	if err != nil || emu.Mode() != emulator.ModeSpec {
		t.Errorf("the default mode: %v, %v; want spec", emu.Mode(), err)
	}
}

// The spec mode has no token endpoint and keeps the seed's shapes.
func TestSpecModeUnchanged(t *testing.T) {
	h := newHarness(t, withoutValidation())
	id := h.seed("CLM-SPEC")
	r := h.call("GET", "/requests", "")
	if !strings.Contains(string(r.body), `"id":`+id+`,`) || !strings.Contains(string(r.body), `"claim_number"`) {
		t.Errorf("spec mode list %s, want a numeric id and claim_number", r.body)
	}
	h.accept(id, "RO-S")
	expectError(t, "spec mode re-sent accept", h.call("POST", "/requests/"+id, `{"referenceId":"RO-S"}`), http.StatusConflict, emulator.CodeRequestAlreadyAccepted)
	r = h.send("POST", h.srv.URL+emulator.TokenPath, "", nil)
	expectStatus(t, "spec mode token endpoint", r, http.StatusNotFound)
}
