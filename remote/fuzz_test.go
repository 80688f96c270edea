package remote

import (
	"github.com/quotesync/quotesync/remote/redact"

	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The fuzz targets run their seeds in every `go test`; a campaign is
// `go test -fuzz FuzzDecodeQuote ./remote/` (QUOTESYNC_SOAK territory).

func FuzzDecodeRequests(f *testing.F) {
	for _, s := range []string{
		`[]`, `null`, ``, `{}`, `[{"id":1}]`,
		`[{"id": 12345678901234567890, "claim_number": "C1", "expiry": "2030-05-01T10:00:00Z", "vehicle": {"a": 1}}]`,
		`[{"id": "x", "claimNumber": 7, "expiry": "2030-05-01"}, {"id": 2, "expiry": "bad"}, 3, null, []]`,
		`[{"id": 1e400}, {"id": -0.5}, {"id": ""}, {"id": null}]`,
		`[{"id": 1, "expiry": "2030-05-01T10:00:00.123456789+05:30", "instructions": null}]`,
		"[{\"id\": \"\xff\"}]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		reqs, skipped, err := decodeRequests(body)
		if err != nil {
			if reqs != nil || skipped != nil {
				t.Fatalf("whole-body error with results: %v", err)
			}
			return
		}
		n := len(reqs)
		if skipped != nil {
			n += len(skipped.Skipped)
			if skipped.Total != n || len(skipped.Skipped) == 0 {
				t.Fatalf("Total %d, returned %d + skipped %d", skipped.Total, len(reqs), len(skipped.Skipped))
			}
			_ = skipped.Error()
		}
		for _, r := range reqs {
			if r.ID == "" {
				t.Fatalf("request without id returned: %s", r.Raw)
			}
			out, err := json.Marshal(r)
			if err != nil {
				t.Fatalf("marshal decoded request: %v", err)
			}
			var back Request
			if err := json.Unmarshal(out, &back); err != nil {
				t.Fatalf("decode of re-encoded request %s: %v", out, err)
			}
			if back.ID != r.ID || back.ClaimNumber != r.ClaimNumber || !back.Expiry.Equal(r.Expiry) {
				t.Fatalf("round trip changed %+v into %+v", r, back)
			}
		}
	})
}

func FuzzDecodeQuote(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"type":"Estimate","status":"Draft","rates":[],"items":[]}`,
		`{"type":"Estimate","status":"Submitted","referenceId":"RO-1","rates":[{"type":"Parts","rate":95.5000}],` +
			`"items":[{"id":7,"order":1,"type":"Parts","description":"x","quantity":"1.5","price":0.1,"total":123456789.1234,` +
			`"metadata":{"k":"v","n":1},"partNumber":"P","markup":"0.10","isOnReport":false}],"extra":{"deep":[1,2]}}`,
		`{"items":[{"price":1e-40}]}`, `{"items":[{"order":1.5}]}`, `{"rates":null,"items":null,"x":null}`,
		`{"referenceId": 123, "items": [{"id": "a", "quantity": -0}]}`, `[]`, `"quote"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var q Quote
		if err := json.Unmarshal(data, &q); err != nil {
			return
		}
		first, err := json.Marshal(q)
		if err != nil {
			t.Fatalf("marshal decoded quote: %v", err)
		}
		var again Quote
		if err := json.Unmarshal(first, &again); err != nil {
			t.Fatalf("decode of re-encoded quote %s: %v", first, err)
		}
		second, err := json.Marshal(again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("encoding not stable:\n%s\n%s", first, second)
		}
	})
}

func FuzzDecodeJob(f *testing.F) {
	for _, s := range []string{`{"id":"RO-50001"}`, `{"id":50001,"x":[1]}`, `{}`, `{"id":true}`, `null`, `[]`, ` {"id" : "a" } `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var j Job
		if err := json.Unmarshal(data, &j); err != nil {
			return
		}
		out, err := json.Marshal(j)
		if err != nil {
			t.Fatalf("marshal decoded job: %v", err)
		}
		var back Job
		if err := json.Unmarshal(out, &back); err != nil || back.ID != j.ID {
			t.Fatalf("round trip of %s: %+v, %v; want id %q", out, back, err, j.ID)
		}
	})
}

// FuzzDecodeError feeds arbitrary error bodies and Retry-After values to
// what builds an *Error: the excerpt must stay short, valid UTF-8 and free
// of the token, and Retry-After within its bounds.
func FuzzDecodeError(f *testing.F) {
	for _, s := range []struct {
		body, retryAfter string
		status           int
	}{
		{`{"error":{"code":"reference_in_use","message":"used","field":"referenceId"}}`, "", 409},
		{"Bearer " + testToken + " echoed", "5", 503},
		{strings.Repeat("é", 600), "Wed, 21 Oct 2015 07:28:00 GMT", 429},
		{"\xff\xfe" + testToken[:8], "-1", 400},
		{"", "99999999999999999999999", 0},
	} {
		f.Add([]byte(s.body), s.retryAfter, s.status)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte, retryAfter string, status int) {
		e := &Error{Method: "POST", Path: "/requests/1", Status: status,
			Body: excerpt(redact.New(testToken), body, DefaultBodyExcerpt, false), RetryAfter: parseRetryAfter(retryAfter, now)}
		if len(e.Body) > DefaultBodyExcerpt+len("…") || !utf8.ValidString(e.Body) {
			t.Fatalf("excerpt of %d bytes invalid: %d bytes", len(body), len(e.Body))
		}
		if strings.Contains(e.Body, testToken) || strings.Contains(e.Error(), testToken) {
			t.Fatalf("token in error: %s", e.Error())
		}
		if e.RetryAfter < 0 || e.RetryAfter > maxRetryAfter {
			t.Fatalf("RetryAfter %s out of bounds for %q", e.RetryAfter, retryAfter)
		}
		if c := Class(e); !slices.ContainsFunc(append(sentinels(), ErrUnreadable), func(s error) bool { return Class(s) == c }) {
			t.Fatalf("error classed %q", c)
		}
	})
}

// decodeRequests decodes a whole GET /requests body (see decodeRequestsFrom).
func decodeRequests(body []byte) (reqs []Request, skipped *DecodeError, err error) {
	n := int64(len(body)) + 1
	reqs, skipped, _, err = decodeRequestsFrom(bytes.NewReader(body), n, n)
	return reqs, skipped, err
}
