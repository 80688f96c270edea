package emulator

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// quoteSeeds is the seed corpus of FuzzDecodeQuote and the round-trip test.
func quoteSeeds() []string {
	return []string{
		`{"type":"Estimate","status":"Draft"}`,
		`{"type":"Estimate","status":"Submitted","referenceId":"RO-1","rates":[{"type":"RepairLabour","rate":95.5000}],"items":[]}`,
		`{"type":"Estimate","status":"Draft","items":[{"id":"L-1","order":1,"type":"Parts","description":"Bumper \u00e9 <&>","quantity":1.25,"price":412.3750,"total":515.47,"metadata":{"op":"R&R"},"partNumber":"52119","markup":1e1,"isOnReport":false}]}`,
		`{"type":"Estimate","status":"Draft","items":[{"id":17,"type":"Parts","description":"","quantity":-1,"price":0.0001,"total":-0.00}]}`,
		`{"type":"E","status":"Draft","extra":{"nested":[1,2.50,"x"]},"z":null}`,
		`{"type":"Estimate","status":"Draft","items":[{"type":"Parts","description":"d","quantity":"1","price":1,"total":1}]}`,
		`{"type":"Estimate","status":"Draft","items":[{"id":1,"type":"Parts","description":"d","quantity":1,"price":1,"total":1},{"id":"1","type":"Parts","description":"d","quantity":1,"price":1,"total":1}]}`,
		`{"type":"Estimate","status":"Draft"} x`,
		`[]`, `null`, ``, `{`, `{"type":1}`, `{"items":[null]}`, `{"rates":[{"rate":1}]}`,
	}
}

// TestQuoteRoundTrip checks that a stored quote renders its numbers as
// sent, and that rendering is stable through a second decode.
func TestQuoteRoundTrip(t *testing.T) {
	q, aerr := decodeQuote([]byte(quoteSeeds()[2]), true, true)
	if aerr != nil {
		t.Fatalf("decode: %v", aerr)
	}
	got := string(q.render())
	want := `{"type":"Estimate","status":"Draft","rates":[],"items":[{"id":"L-1","order":1,"type":"Parts",` +
		`"description":"Bumper é <&>","quantity":1.25,"price":412.3750,"total":515.47,"metadata":{"op":"R&R"},` +
		`"partNumber":"52119","markup":1e1,"isOnReport":false}]}`
	if got != want {
		t.Errorf("render\n got %s\nwant %s", got, want)
	}
	q2, aerr := decodeQuote([]byte(got), true, true)
	if aerr != nil {
		t.Fatalf("decode rendered: %v", aerr)
	}
	if again := string(q2.render()); again != got {
		t.Errorf("second render differs:\n%s\n%s", again, got)
	}
}

// TestDecodeFieldNames checks the field an error names, table-driven.
func TestDecodeFieldNames(t *testing.T) {
	for _, c := range []struct{ body, field, code string }{
		{`{"type":"E","status":"Draft","items":[{"type":"P","description":"d","quantity":1,"price":1,"total":true}]}`, "items[0].total", CodeInvalidField},
		{`{"type":"E","status":"Draft","items":[{"type":"P","description":"d","quantity":1,"price":1}]}`, "items[0].total", CodeMissingField},
		{`{"type":"E","status":"Draft","items":[{"type":"P","description":"d","quantity":1,"price":1,"total":1,"markup":"5"}]}`, "items[0].markup", CodeInvalidField},
		{`{"type":"E","status":"Draft","items":[{"type":"P","description":"d","quantity":1,"price":1,"total":1,"partNumber":5}]}`, "items[0].partNumber", CodeInvalidField},
		{`{"type":"E","status":"Draft","items":[{"type":"P","description":"d","quantity":1,"price":1,"total":1,"id":1.5}]}`, "items[0].id", CodeInvalidField},
		{`{"type":"E","status":"Draft","items":[5]}`, "items[0]", CodeInvalidField},
		{`{"type":"E","status":"Draft","rates":[{"type":"P","rate":1,"x":1}]}`, "rates[0].x", CodeUnknownField},
		{`{"type":"E","status":"Draft","referenceId":7}`, "referenceId", CodeInvalidField},
		{`{"type":"E","status":"Draft","rates":"none"}`, "rates", CodeInvalidField},
	} {
		_, aerr := decodeQuote([]byte(c.body), true, true)
		if aerr == nil || aerr.detail.Field != c.field || aerr.detail.Code != c.code {
			t.Errorf("decode %s: %v (field %q), want %s on %s", c.body, aerr, fieldOf(aerr), c.code, c.field)
		}
	}
}

func fieldOf(e *apiError) string {
	if e == nil {
		return ""
	}
	return e.detail.Field
}

// TestMatchRoute checks the routing table, the literal-first order of the
// status forms and the 405 list.
func TestMatchRoute(t *testing.T) {
	for _, c := range []struct{ method, path, route string }{
		{"GET", "/requests", RouteListRequests},
		{"POST", "/requests/12", RouteAccept},
		{"POST", "/jobs/RO%2F1/quotes", RouteCreateQuote},
		{"PUT", "/jobs/RO-1/quotes/Estimate", RouteUpdateQuote},
		{"PUT", "/jobs/RO-1/quotes/status/Submitted", "PUT /jobs/{jobId}/quotes/status/{status}"},
		{"POST", "/jobs/RO-1/quote/status/Submitted", "POST /jobs/{jobId}/quote/status/{status}"},
		{"POST", "/jobs/RO-1/quotes/Estimate/status", "POST /jobs/{jobId}/quotes/{quoteId}/status"},
		{"PUT", "/jobs/RO-1/quote/Estimate/status", "PUT /jobs/{jobId}/quote/{quoteId}/status"},
		{"GET", "/requests/", ""},
		{"POST", "/jobs//quotes", ""},
		{"POST", "/jobs/%zz/quotes", ""},
	} {
		r := httptest.NewRequest(c.method, "/", nil)
		rt, _ := matchRoute(routeTable(ModeSpec), r, c.path)
		got := ""
		if rt != nil {
			got = rt.name
			if r.Pattern != rt.name {
				t.Errorf("%s %s: request pattern %q, want %q", c.method, c.path, r.Pattern, rt.name)
			}
		}
		if got != c.route {
			t.Errorf("%s %s matched %q, want %q", c.method, c.path, got, c.route)
		}
	}
	r := httptest.NewRequest("POST", "/", nil)
	if matchRoute(routeTable(ModeSpec), r, "/jobs/RO%2F1/quotes"); r.PathValue("id") != "RO/1" {
		t.Errorf("escaped job id decoded as %q, want RO/1", r.PathValue("id"))
	}
	if _, allowed := matchRoute(routeTable(ModeSpec), httptest.NewRequest("DELETE", "/", nil),
		"/jobs/RO-1/quotes/Estimate/status"); !slices.Equal(allowed, []string{"PUT", "POST"}) {
		t.Errorf("allowed %v, want [PUT POST]", allowed)
	}
}

// FuzzDecodeQuote: decoding never panics; an accepted quote renders to
// valid JSON that decodes again to the same rendering, with every item id
// set; a refused one is a 400 naming a code.
func FuzzDecodeQuote(f *testing.F) {
	for _, s := range quoteSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		q, aerr := decodeQuote(data, true, true)
		if aerr != nil {
			if aerr.status != http.StatusBadRequest || aerr.detail.Code == "" || aerr.detail.Message == "" {
				t.Fatalf("refusal %+v: want a 400 with code and message", aerr)
			}
			return
		}
		j := &job{quotes: map[string]*storedQuote{}}
		j.assignItemIDs(&q, q.Type)
		out := q.render()
		if !json.Valid(out) {
			t.Fatalf("render of %q is not JSON: %s", data, out)
		}
		q2, aerr := decodeQuote(out, true, true)
		if aerr != nil {
			t.Fatalf("rendered quote %s refused: %v", out, aerr)
		}
		if again := q2.render(); string(again) != string(out) {
			t.Fatalf("unstable render:\n%s\n%s", out, again)
		}
		for i, it := range q2.Items {
			if it.ID.text == "" {
				t.Fatalf("item %d has no id after assignment: %s", i, out)
			}
		}
	})
}

// FuzzDecodeAccept: the accept body decoder never panics and only lets
// through a referenceId within bounds and a real date.
func FuzzDecodeAccept(f *testing.F) {
	for _, s := range []string{
		`{"referenceId":"RO-1"}`, `{"referenceId":"RO-1","bookingDate":"2025-06-05"}`,
		`{"referenceId":"","bookingDate":"2025-02-30"}`, `{"referenceId":"\u0000"}`, `{"bookingDate":"x"}`,
		`{"referenceId":"RO","x":1}`, `{}`, `[]`, `"RO-1"`, `{"referenceId":["a"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ref, booking, aerr := decodeAccept(data)
		if aerr != nil {
			if aerr.status != http.StatusBadRequest {
				t.Fatalf("refusal with status %d", aerr.status)
			}
			return
		}
		if ref == "" || utf8.RuneCountInString(ref) > MaxReferenceIDLength || strings.ContainsAny(ref, "\x00\n\r\t") {
			t.Fatalf("accepted referenceId %q", ref)
		}
		if booking != "" && len(booking) != len("2006-01-02") {
			t.Fatalf("accepted bookingDate %q", booking)
		}
	})
}

// FuzzDecodeStatusBody: the status body decoder never panics and agrees
// with the path status when both are given.
func FuzzDecodeStatusBody(f *testing.F) {
	for _, s := range []struct{ body, path string }{
		{`{"status":"Submitted"}`, ""}, {`{"status":"Submitted"}`, "Submitted"}, {`{"status":"Draft"}`, "Submitted"},
		{``, "Submitted"}, {`{}`, ""}, {`{"status":1}`, ""}, {`{"x":"y"}`, "Submitted"},
	} {
		f.Add([]byte(s.body), s.path)
	}
	f.Fuzz(func(t *testing.T, body []byte, pathStatus string) {
		if len(body) == 0 {
			body = nil
		}
		got, aerr := decodeStatusBody(body, pathStatus)
		if aerr != nil {
			return
		}
		if got == "" {
			t.Fatalf("accepted an empty status from body %q path %q", body, pathStatus)
		}
		if pathStatus != "" && got != pathStatus {
			t.Fatalf("status %q disagrees with path %q", got, pathStatus)
		}
	})
}
