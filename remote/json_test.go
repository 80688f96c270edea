package remote

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/shopspring/decimal"
)

func TestRequestUnmarshal(t *testing.T) {
	utc := func(y int, m time.Month, d, h, min, s int) time.Time {
		return time.Date(y, m, d, h, min, s, 0, time.UTC)
	}
	tests := []struct {
		name    string
		in      string
		want    Request
		wantErr []string // substrings of the error
	}{
		{name: "SeedForm", in: `{"id": 17, "claim_number": "C1", "expiry": "2030-05-01T10:00:00Z"}`,
			want: Request{ID: "17", ClaimNumber: "C1", Expiry: utc(2030, 5, 1, 10, 0, 0)}},
		{name: "BigNumericID", in: `{"id": 123456789012345678901234567890}`,
			want: Request{ID: "123456789012345678901234567890"}},
		{name: "StringIDCamelClaim", in: `{"id": "abc-1", "claimNumber": "C2"}`,
			want: Request{ID: "abc-1", ClaimNumber: "C2"}},
		{name: "BothClaimSpellings", in: `{"id": 1, "claim_number": "", "claimNumber": "C3"}`,
			want: Request{ID: "1", ClaimNumber: "C3"}},
		{name: "NumericClaim", in: `{"id": 1, "claim_number": 4455}`, want: Request{ID: "1", ClaimNumber: "4455"}},
		{name: "ExpiryOffset", in: `{"id": 1, "expiry": "2030-05-01T12:00:00.250+02:00"}`,
			want: Request{ID: "1", Expiry: time.Date(2030, 5, 1, 10, 0, 0, 250e6, time.UTC)}},
		{name: "ExpiryNoZone", in: `{"id": 1, "expiry": "2030-05-01T10:00:00"}`,
			want: Request{ID: "1", Expiry: utc(2030, 5, 1, 10, 0, 0)}},
		{name: "ExpiryCompactOffset", in: `{"id": 1, "expiry": "2030-05-01T10:00:00+0000"}`,
			want: Request{ID: "1", Expiry: utc(2030, 5, 1, 10, 0, 0)}},
		{name: "ExpiryDate", in: `{"id": 1, "expiry": "2030-05-01"}`, want: Request{ID: "1", Expiry: utc(2030, 5, 1, 0, 0, 0)}},
		{name: "ExpiryNull", in: `{"id": 1, "expiry": null}`, want: Request{ID: "1"}},
		{name: "RawKept", in: `{"id": 1, "vehicle": {"make": "Ford"}, "accident": null, "instructions": "call first"}`,
			want: Request{ID: "1", Vehicle: json.RawMessage(`{"make": "Ford"}`), Instructions: json.RawMessage(`"call first"`)}},
		{name: "BadExpiry", in: `{"id": 42, "expiry": "01/05/2030"}`, wantErr: []string{"request 42", "expiry", "01/05/2030"}},
		{name: "NumericExpiry", in: `{"id": 42, "expiry": 1893456000}`, wantErr: []string{"request 42", "expiry"}},
		{name: "MissingID", in: `{"claim_number": "C1"}`, wantErr: []string{"id: missing"}},
		{name: "BoolID", in: `{"id": true}`, wantErr: []string{"id: want a string or number, got a boolean"}},
		{name: "NotObject", in: `[1]`, wantErr: []string{"want a JSON object, got an array"}},
		{name: "NULInID", in: `{"id": "R\u00001"}`, wantErr: []string{`request "R\x001"`, "id: holds the control character U+0000 at byte 1"}},
		{name: "DELInClaim", in: `{"id": 7, "claim_number": "C\u007f"}`, wantErr: []string{"request 7", "claim_number: holds the control character U+007F"}},
		{name: "NewlineInClaim", in: `{"id": 7, "claimNumber": "C1\nC2"}`, wantErr: []string{"claimNumber: holds the control character U+000A"}},
		{name: "IsolateInID", in: `{"id": "R-\u20661"}`, wantErr: []string{`request "R-\u20661"`, "U+2066"}},
		{name: "MetacharactersKept", in: `{"id": "R 1;$(id)*", "claim_number": "C 'x' \"y\" \u00e9\u200d"}`,
			want: Request{ID: "R 1;$(id)*", ClaimNumber: "C 'x' \"y\" é\u200d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Request
			err := json.Unmarshal([]byte(tt.in), &got)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("Unmarshal(%s) succeeded, want an error", tt.in)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Request{}, "Raw"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
			if string(got.Raw) != tt.in {
				t.Errorf("Raw = %s, want the input", got.Raw)
			}
		})
	}
}

func TestDecimalsRoundTripExactly(t *testing.T) {
	for _, s := range []string{"95.5000", "0.1", "123456789.1234", "-1.50", "0", "0.00", "143.25", "1000", "0.0001"} {
		in := `{"type":"Parts","rate":` + s + `}`
		var r Rate
		if err := json.Unmarshal([]byte(in), &r); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if !r.Rate.Equal(decimal.RequireFromString(s)) {
			t.Errorf("decoded %s as %s", s, r.Rate)
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != in {
			t.Errorf("round trip of %s = %s, want %s", s, out, in)
		}
	}
	// Quoted numbers and exponents decode; they are sent back as plain numbers.
	for in, want := range map[string]string{`"95.50"`: "95.50", `1.5e2`: "150", `"-0.25"`: "-0.25", `12E-2`: "0.12"} {
		var r Rate
		if err := json.Unmarshal([]byte(`{"rate":`+in+`}`), &r); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := formatDecimal(r.Rate); got != want {
			t.Errorf("%s sent back as %s, want %s", in, got, want)
		}
	}
	for _, bad := range []string{`"abc"`, `1e999999999`, `true`, `"` + strings.Repeat("9", 100) + `"`} {
		var r Rate
		if err := json.Unmarshal([]byte(`{"rate":`+bad+`}`), &r); err == nil || !strings.Contains(err.Error(), "rate") {
			t.Errorf("rate %s: err = %v, want an error naming rate", bad, err)
		}
	}
	if decimal.MarshalJSONWithoutQuotes {
		t.Error("shopspring's MarshalJSONWithoutQuotes global was changed")
	}
}

func TestItemTolerantDecode(t *testing.T) {
	in := `{"id": 901, "order": "2", "type": "RefinishLabour", "description": "Paint",
	  "quantity": "1.25", "price": 80, "total": 100.00, "metadata": {"shopLine": "L-7", "hours": 1.5, "none": null},
	  "partNumber": 12345, "markup": "0.10", "isOnReport": "true", "unknown": [1]}`
	var got Item
	if err := json.Unmarshal([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	markup, yes := decimal.RequireFromString("0.10"), true
	want := Item{ID: "901", Order: 2, Type: "RefinishLabour", Description: "Paint",
		Quantity: decimal.RequireFromString("1.25"), Price: decimal.RequireFromString("80"),
		Total:      decimal.RequireFromString("100.00"),
		Metadata:   map[string]string{"shopLine": "L-7", "hours": "1.5", "none": ""},
		PartNumber: "12345", Markup: &markup, IsOnReport: &yes}
	eq := cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })
	if diff := cmp.Diff(want, got, eq); diff != "" {
		t.Errorf("item (-want +got):\n%s", diff)
	}
	out, _ := json.Marshal(got)
	wantOut := `{"id":"901","order":2,"type":"RefinishLabour","description":"Paint","quantity":1.25,"price":80,` +
		`"total":100.00,"metadata":{"hours":"1.5","none":"","shopLine":"L-7"},"partNumber":"12345","markup":0.10,"isOnReport":true}`
	if string(out) != wantOut {
		t.Errorf("marshal\n got %s\nwant %s", out, wantOut)
	}

	var q Quote
	err := json.Unmarshal([]byte(`{"type":"Estimate","items":[{"id":1},{"id":2,"price":"x"}]}`), &q)
	if err == nil || !strings.Contains(err.Error(), "items[1].price") {
		t.Errorf("err = %v, want it to name items[1].price", err)
	}
}

func TestQuoteExtraRoundTrip(t *testing.T) {
	in := `{"type":"Estimate","status":"Draft","referenceId":"RO-1","rates":[],"items":[],` +
		`"assessor":{"name":"A. Smith"},"createdAt":"2030-01-01T00:00:00Z","version":3}`
	var q Quote
	if err := json.Unmarshal([]byte(in), &q); err != nil {
		t.Fatal(err)
	}
	if len(q.Extra) != 3 {
		t.Errorf("Extra = %v, want 3 unknown members", q.Extra)
	}
	out, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip\n got %s\nwant %s", out, in)
	}
	// Extra cannot override a modelled field.
	q.Extra["status"] = json.RawMessage(`"Submitted"`)
	out, _ = json.Marshal(q)
	if strings.Contains(string(out), "Submitted") {
		t.Errorf("Extra overrode status: %s", out)
	}
	// A zero quote still sends arrays, not null.
	out, _ = json.Marshal(Quote{Type: "Estimate", Status: "Draft"})
	if got, want := string(out), `{"type":"Estimate","status":"Draft","rates":[],"items":[]}`; got != want {
		t.Errorf("zero quote = %s, want %s", got, want)
	}
}

func TestJobAndRequestMarshal(t *testing.T) {
	var j Job
	if err := json.Unmarshal([]byte(`{"id": 50001, "status": "open"}`), &j); err != nil || j.ID != "50001" {
		t.Fatalf("Job = %+v, %v; want id 50001", j, err)
	}
	if got := mustJSON(t, j); got != `{"id":50001,"status":"open"}` {
		t.Errorf("Job marshal = %s, want Raw compacted", got)
	}
	if got := mustJSON(t, Job{ID: "RO-1"}); got != `{"id":"RO-1"}` {
		t.Errorf("built Job = %s", got)
	}
	r := Request{ID: "17", ClaimNumber: "C1", Expiry: time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)}
	got := mustJSON(t, r)
	if want := `{"id":"17","claim_number":"C1","expiry":"2030-05-01T10:00:00Z"}`; got != want {
		t.Errorf("built Request = %s, want %s", got, want)
	}
	var back Request
	if err := json.Unmarshal([]byte(got), &back); err != nil || !back.Expiry.Equal(r.Expiry) || back.ID != r.ID {
		t.Errorf("round trip = %+v, %v", back, err)
	}
}

// TestLoneSurrogateBesideReplacement: a lone surrogate escape is refused
// even when the same string also sends a U+FFFD (escaped or raw) of its
// own; a valid pair and an escaped backslash before "ud800" are text.
func TestLoneSurrogateBesideReplacement(t *testing.T) {
	const bad = "a \\u escape that is no character (a lone UTF-16 surrogate)"
	for _, tt := range []struct{ in, want string }{
		{`{"id":"r1","claimNumber":"\ufffd\ud800"}`, "decode request: claimNumber: " + bad},
		{`{"id":"r1","claimNumber":"\uFFFD\udc00"}`, "decode request: claimNumber: " + bad},
		{`{"id":"r1","claimNumber":"� \ud800"}`, "decode request: claimNumber: " + bad},
		{`{"id":"r1","claimNumber":"\\ufffd\ud800"}`, "decode request: claimNumber: " + bad},
		{`{"id":"r1","vehicle":{"make":"\ufffd\ud800"}}`, "vehicle.make: " + bad},
		{`{"id":"r1","claimNumber":"\ufffd\ud83d\ude97 \\ud800 �"}`, ""},
	} {
		var r Request
		err := json.Unmarshal([]byte(tt.in), &r)
		if got := fmt.Sprint(err); tt.want == "" && err != nil || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("Unmarshal(%s) = %v, want %q", tt.in, err, tt.want)
		}
	}
	var q Quote
	in := `{"id":"q1","items":[{"id":"1","type":"Part","description":"\ufffd\ud800","quantity":1,"price":1}]}`
	if err := json.Unmarshal([]byte(in), &q); !strings.Contains(fmt.Sprint(err), "items[0].description: "+bad) {
		t.Errorf("Unmarshal(%s) = %v, want items[0].description refused", in, err)
	}
	for raw, field := range map[string]string{
		`{"id":"1","claimNumber":"\ufffd\ud800"}`:         "claimNumber",
		`{"id":"1","vehicle":{"make":"� \udc00"}}`:        "vehicle.make",
		`{"id":"1","notes":["ok","\\ufffd\ud800\u00e9"]}`: "notes[1]",
	} {
		if got, cause := badTextMember([]byte(raw)); got != field || cause != errBadEscape {
			t.Errorf("badTextMember(%s) = %q, %v; want %q, errBadEscape", raw, got, cause, field)
		}
	}
}
