package emulator_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
)

// errorFixture prepares: a pending request, a request accepted as RO-1
// whose job has a Draft Estimate, a request accepted as RO-2 whose job has
// no quote, and an expired request.
func errorFixture(t *testing.T) (h *harness, pending, accepted, expired string) {
	h = newHarness(t)
	pending = h.seed("CLM-P")
	accepted = h.seed("CLM-A")
	h.accept(accepted, "RO-1")
	h.acceptedJob("RO-2")
	expired = h.emu.AddRequests(emulator.SeedRequest{ClaimNumber: "CLM-E", Expiry: h.clock.Now().Add(time.Hour)})[0]
	expectStatus(t, "create draft", h.call("POST", "/jobs/RO-1/quotes", `{"type":"Estimate","status":"Draft","items":[]}`), http.StatusCreated)
	h.clock.Advance(2 * time.Hour)
	return h, pending, accepted, expired
}

// TestErrors checks every error answer: status, code and the field named.
func TestErrors(t *testing.T) {
	h, pending, accepted, expired := errorFixture(t)
	item := func(fields string) string {
		return `{"type":"Estimate","status":"Draft","items":[{"type":"Parts","description":"d","quantity":1,"price":2,"total":2},` +
			`{"type":"Parts","description":"d","quantity":1,"price":2,"total":2},{` + fields + `}]}`
	}
	good := `"type":"Parts","description":"d","quantity":1,"price":2,"total":2`
	cases := []struct {
		name, method, path, body string
		status                   int
		code, field              string
	}{
		{"AcceptMissingReference", "POST", "/requests/" + pending, `{"bookingDate":"2025-06-05"}`, 400, emulator.CodeMissingField, "referenceId"},
		{"AcceptEmptyReference", "POST", "/requests/" + pending, `{"referenceId":""}`, 400, emulator.CodeInvalidField, "referenceId"},
		{"AcceptNumericReference", "POST", "/requests/" + pending, `{"referenceId":5001}`, 400, emulator.CodeInvalidField, "referenceId"},
		{"AcceptNullReference", "POST", "/requests/" + pending, `{"referenceId":null}`, 400, emulator.CodeInvalidField, "referenceId"},
		{"AcceptLongReference", "POST", "/requests/" + pending, `{"referenceId":"` + strings.Repeat("x", 101) + `"}`, 400, emulator.CodeInvalidField, "referenceId"},
		{"AcceptControlCharacter", "POST", "/requests/" + pending, `{"referenceId":"RO\n1"}`, 400, emulator.CodeInvalidField, "referenceId"},
		{"AcceptBadBookingDate", "POST", "/requests/" + pending, `{"referenceId":"RO-3","bookingDate":"05/06/2025"}`, 400, emulator.CodeInvalidField, "bookingDate"},
		{"AcceptDateTimeBooking", "POST", "/requests/" + pending, `{"referenceId":"RO-3","bookingDate":"2025-06-05T10:00:00Z"}`, 400, emulator.CodeInvalidField, "bookingDate"},
		{"AcceptUnknownField", "POST", "/requests/" + pending, `{"referenceId":"RO-3","booking_date":"2025-06-05"}`, 400, emulator.CodeUnknownField, "booking_date"},
		{"AcceptNotJSON", "POST", "/requests/" + pending, `referenceId=RO-3`, 400, emulator.CodeInvalidBody, ""},
		{"AcceptArray", "POST", "/requests/" + pending, `[{"referenceId":"RO-3"}]`, 400, emulator.CodeInvalidBody, ""},
		{"AcceptTrailingData", "POST", "/requests/" + pending, `{"referenceId":"RO-3"} {}`, 400, emulator.CodeInvalidBody, ""},
		{"AcceptCutJSON", "POST", "/requests/" + pending, `{"referenceId":"RO-3"`, 400, emulator.CodeInvalidBody, ""},
		{"AcceptUnknownRequest", "POST", "/requests/999999", `{"referenceId":"RO-3"}`, 404, emulator.CodeRequestNotFound, ""},
		{"AcceptAlreadyAccepted", "POST", "/requests/" + accepted, `{"referenceId":"RO-3"}`, 409, emulator.CodeRequestAlreadyAccepted, "referenceId"},
		{"AcceptReferenceInUse", "POST", "/requests/" + pending, `{"referenceId":"RO-1"}`, 409, emulator.CodeReferenceInUse, "referenceId"},
		{"AcceptExpired", "POST", "/requests/" + expired, `{"referenceId":"RO-3"}`, 410, emulator.CodeRequestExpired, ""},
		{"QuoteUnknownJob", "POST", "/jobs/RO-404/quotes", `{"type":"Estimate","status":"Draft"}`, 404, emulator.CodeJobNotFound, ""},
		{"QuoteMissingType", "POST", "/jobs/RO-2/quotes", `{"status":"Draft"}`, 400, emulator.CodeMissingField, "type"},
		{"QuoteEmptyType", "POST", "/jobs/RO-2/quotes", `{"type":"","status":"Draft"}`, 400, emulator.CodeInvalidField, "type"},
		{"QuoteMissingStatus", "POST", "/jobs/RO-2/quotes", `{"type":"Estimate"}`, 400, emulator.CodeMissingField, "status"},
		{"QuoteBadStatus", "POST", "/jobs/RO-2/quotes", `{"type":"Estimate","status":"Final"}`, 400, emulator.CodeInvalidField, "status"},
		{"QuoteWrongReference", "POST", "/jobs/RO-2/quotes", `{"type":"Estimate","status":"Draft","referenceId":"RO-1"}`, 400, emulator.CodeInvalidField, "referenceId"},
		{"QuoteItemsNotArray", "POST", "/jobs/RO-2/quotes", `{"type":"Estimate","status":"Draft","items":{}}`, 400, emulator.CodeInvalidField, "items"},
		{"QuoteQuantityString", "POST", "/jobs/RO-2/quotes", item(`"type":"Parts","description":"d","quantity":"1.5","price":2,"total":3`), 400, emulator.CodeInvalidField, "items[2].quantity"},
		{"QuoteMissingPrice", "POST", "/jobs/RO-2/quotes", item(`"type":"Parts","description":"d","quantity":1,"total":3`), 400, emulator.CodeMissingField, "items[2].price"},
		{"QuoteMissingDescription", "POST", "/jobs/RO-2/quotes", item(`"type":"Parts","quantity":1,"price":2,"total":3`), 400, emulator.CodeMissingField, "items[2].description"},
		{"QuoteFractionalOrder", "POST", "/jobs/RO-2/quotes", item(`"order":1.5,` + good), 400, emulator.CodeInvalidField, "items[2].order"},
		{"QuoteMetadataNumber", "POST", "/jobs/RO-2/quotes", item(`"metadata":{"op":7},` + good), 400, emulator.CodeInvalidField, "items[2].metadata.op"},
		{"QuoteIsOnReportString", "POST", "/jobs/RO-2/quotes", item(`"isOnReport":"yes",` + good), 400, emulator.CodeInvalidField, "items[2].isOnReport"},
		{"QuoteItemUnknownField", "POST", "/jobs/RO-2/quotes", item(`"qty":1,` + good), 400, emulator.CodeUnknownField, "items[2].qty"},
		{"QuoteItemIDEmpty", "POST", "/jobs/RO-2/quotes", item(`"id":"",` + good), 400, emulator.CodeInvalidField, "items[2].id"},
		{"QuoteItemIDBool", "POST", "/jobs/RO-2/quotes", item(`"id":true,` + good), 400, emulator.CodeInvalidField, "items[2].id"},
		{"QuoteItemIDDuplicate", "POST", "/jobs/RO-2/quotes",
			`{"type":"Estimate","status":"Draft","items":[{"id":"L1",` + good + `},{"id":"L1",` + good + `}]}`, 400, emulator.CodeInvalidField, "items[1].id"},
		{"QuoteRateString", "POST", "/jobs/RO-2/quotes", `{"type":"Estimate","status":"Draft","rates":[{"type":"Parts","rate":"95"}]}`, 400, emulator.CodeInvalidField, "rates[0].rate"},
		{"QuoteRateMissingType", "POST", "/jobs/RO-2/quotes", `{"type":"Estimate","status":"Draft","rates":[{"rate":95}]}`, 400, emulator.CodeMissingField, "rates[0].type"},
		{"UpdateNoQuote", "PUT", "/jobs/RO-2/quotes/Estimate", `{"items":[]}`, 404, emulator.CodeQuoteNotFound, ""},
		{"UpdateUnknownJob", "PUT", "/jobs/RO-404/quotes/Estimate", `{"items":[]}`, 404, emulator.CodeJobNotFound, ""},
		{"UpdateTypeMismatch", "PUT", "/jobs/RO-1/quotes/Estimate", `{"type":"Supplement"}`, 400, emulator.CodeInvalidField, "type"},
		{"StatusUnknownJob", "PUT", "/jobs/RO-404/quotes/Estimate/status", `{"status":"Submitted"}`, 404, emulator.CodeJobNotFound, ""},
		{"StatusUnknownQuote", "PUT", "/jobs/RO-1/quotes/Supplement/status", `{"status":"Submitted"}`, 404, emulator.CodeQuoteNotFound, ""},
		{"StatusNoQuoteInJob", "POST", "/jobs/RO-2/quote/status/Submitted", ``, 404, emulator.CodeQuoteNotFound, ""},
		{"StatusToDraft", "PUT", "/jobs/RO-1/quotes/Estimate/status", `{"status":"Draft"}`, 400, emulator.CodeInvalidField, "status"},
		{"StatusMissing", "PUT", "/jobs/RO-1/quotes/Estimate/status", `{}`, 400, emulator.CodeMissingField, "status"},
		{"StatusEmptyBody", "PUT", "/jobs/RO-1/quote/Estimate/status", ``, 415, emulator.CodeUnsupportedMediaType, ""},
		{"StatusUnknownField", "PUT", "/jobs/RO-1/quotes/Estimate/status", `{"status":"Submitted","note":"x"}`, 400, emulator.CodeUnknownField, "note"},
		{"StatusPathDraft", "PUT", "/jobs/RO-1/quotes/status/Draft", ``, 400, emulator.CodeInvalidField, "status"},
		{"StatusBodyDisagrees", "POST", "/jobs/RO-1/quotes/status/Submitted", `{"status":"Draft"}`, 400, emulator.CodeInvalidField, "status"},
		{"UnknownRoute", "GET", "/jobs/RO-1", ``, 404, emulator.CodeRouteNotFound, ""},
		{"TrailingSlash", "GET", "/requests/", ``, 404, emulator.CodeRouteNotFound, ""},
		{"MethodNotAllowed", "DELETE", "/requests", ``, 405, emulator.CodeMethodNotAllowed, ""},
	}
	before := h.emu.State()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.call(c.method, c.path, c.body)
			e := expectError(t, c.method+" "+c.path, r, c.status, c.code)
			if e.Field != c.field {
				t.Errorf("field %q, want %q (message %q)", e.Field, c.field, e.Message)
			}
		})
	}
	after := h.emu.State()
	if got, want := len(after.History), len(before.History); got != want {
		t.Errorf("errors changed the state: %d history entries, want %d", got, want)
	}
}

// TestConflictNamesTheAcceptance checks that the 409s of accept say which
// referenceId and request they collided with.
func TestConflictNamesTheAcceptance(t *testing.T) {
	h, pending, accepted, _ := errorFixture(t)
	e := expectError(t, "accept again with the same referenceId",
		h.call("POST", "/requests/"+accepted, `{"referenceId":"RO-1"}`), 409, emulator.CodeRequestAlreadyAccepted)
	if e.ReferenceID != "RO-1" || e.RequestID != accepted || !strings.Contains(e.Message, "RO-1") {
		t.Errorf("error %+v: want referenceId RO-1 and requestId %s, named in the message", e, accepted)
	}
	e = expectError(t, "reuse RO-1", h.call("POST", "/requests/"+pending, `{"referenceId":"RO-1"}`), 409, emulator.CodeReferenceInUse)
	if e.ReferenceID != "RO-1" || e.RequestID != accepted {
		t.Errorf("error %+v: want referenceId RO-1 of request %s", e, accepted)
	}
}

// TestTransportErrors covers the token, Content-Type and size checks.
func TestTransportErrors(t *testing.T) {
	h, pending, _, _ := errorFixture(t)
	url := h.api + "/requests/" + pending
	body := `{"referenceId":"RO-9"}`
	for _, c := range []struct {
		name    string
		headers map[string]string
		body    string
		status  int
		code    string
	}{
		{"NoToken", nil, body, 401, emulator.CodeUnauthorized},
		{"WrongToken", map[string]string{"Authorization": "Bearer nope"}, body, 401, emulator.CodeUnauthorized},
		{"BasicScheme", map[string]string{"Authorization": "Basic " + testToken}, body, 401, emulator.CodeUnauthorized},
		{"TokenPrefix", map[string]string{"Authorization": "Bearer " + testToken[:5]}, body, 401, emulator.CodeUnauthorized},
		{"TextPlain", map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "text/plain"}, body, 415, emulator.CodeUnsupportedMediaType},
		{"FormEncoded", map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "application/x-www-form-urlencoded"}, body, 415, emulator.CodeUnsupportedMediaType},
		{"TooLarge", map[string]string{"Authorization": "Bearer " + testToken},
			`{"referenceId":"RO-9","pad":"` + strings.Repeat("x", emulator.DefaultMaxBodyBytes) + `"}`, 413, emulator.CodeBodyTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := h.send("POST", url, c.body, c.headers)
			expectError(t, c.name, r, c.status, c.code)
			if c.status == 401 && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer WWW-Authenticate header: %q", r.header.Get("WWW-Authenticate"))
			}
		})
	}
	r := h.send("POST", url, body, map[string]string{"Authorization": "bearer " + testToken, "Content-Type": "application/json; charset=utf-8"})
	expectStatus(t, "lower-case scheme and a charset", r, http.StatusCreated)
	expectError(t, "outside the API", h.send("GET", h.srv.URL+"/requests", "", nil), 404, emulator.CodeRouteNotFound)
	if got, want := h.call("DELETE", "/requests", "").header.Get("Allow"), "GET"; got != want {
		t.Errorf("Allow %q, want %q", got, want)
	}
	if got := h.emu.Calls()[emulator.RouteAccept]; got < 8 {
		t.Errorf("accept calls counted %d, want the refused ones too (≥ 8)", got)
	}
}
