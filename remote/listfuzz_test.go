package remote

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzListRequests fuzzes the pending list as a whole, as ListRequests
// reads it (decodeRequestsFrom with its limits): whatever the body, the
// decoder ends, never returns a request it changed, accounts for every
// entry (returned or skipped), keeps its errors bounded, and splits a valid
// array exactly as encoding/json does. A campaign:
// `go test -fuzz FuzzListRequests ./remote/`.
func FuzzListRequests(f *testing.F) {
	for _, s := range []string{
		`[]`, `null`, ``, ` [ ] `, `{}`, `"x"`, `<html>`, `[,]`, `[1,]`, `[{"id":1}`, `[{"id":1}] x`,
		`[{"id":1},{"id":"2","claim_number":"C2"},{"id":{"a":1}},{"id":[1]},3,null,"s",[]]`,
		`[{"id":"D","x":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `},{"id":"ok"}]`,
		`[{"id":"` + strings.Repeat("a", 5000) + `"},{"id":"ok"}]`,
		"[{\"id\":\"\xff\"},{\"id\":\"u\",\"vehicle\":{\"make\":\"\xc3\"}},{\"id\":\"ok\"}]",
		`[{"id":"s","claim_number":"\udc00"},{"id":"e","claim_number":"\ufffd"}]`,
		`[{"id":"q\"]","x":"[{"},{"id":"b\\"}]`,
		`[{"id":1,"expiry":"bad"},{"id":2,"expiry":"2030-01-01"}]`,
		`[{"id": 1e400}, {"id": -0.5}, {"id": ""}, {"id": null}, {"claimNumber": 7}]`,
		`[}]`, `[{]`, `[{"id":1}}]`, `[[}]]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		n := int64(len(body)) + 1
		reqs, skipped, head, err := decodeRequestsFrom(bytes.NewReader(body), n, n)
		if len(head) > headBytes {
			t.Fatalf("head of %d bytes", len(head))
		}
		if err != nil {
			if reqs != nil || skipped != nil {
				t.Fatalf("whole-body error with results: %v", err)
			}
			if len(err.Error()) > 1000 {
				t.Fatalf("whole-body error of %d bytes", len(err.Error()))
			}
			return
		}
		total := len(reqs)
		if skipped != nil {
			total += len(skipped.Skipped)
			if skipped.Total != total || len(skipped.Skipped) == 0 {
				t.Fatalf("Total %d, returned %d + skipped %d", skipped.Total, len(reqs), len(skipped.Skipped))
			}
			for _, s := range skipped.Skipped {
				if msg := s.Err.Error(); len(msg) > 2000 || !utf8.ValidString(msg) {
					t.Fatalf("entry %d: error of %d bytes, valid UTF-8 %v", s.Index, len(msg), utf8.ValidString(msg))
				}
				if len(s.ID) > MaxSkippedIDLen || len(s.IDText) > 200 || (s.ID != "" && s.ID != s.IDText) {
					t.Fatalf("entry %d: id %q, text %q", s.Index, s.ID, s.IDText)
				}
			}
		}
		var elems []json.RawMessage
		if json.Unmarshal(body, &elems) == nil && body != nil && !bytes.Equal(bytes.TrimSpace(body), []byte("null")) {
			if total != len(elems) {
				t.Fatalf("%d entries, encoding/json splits %d", total, len(elems))
			}
		}
		for _, r := range reqs {
			if r.ID == "" {
				t.Fatalf("request without id returned: %s", r.Raw)
			}
			for _, s := range []string{r.ID, r.ClaimNumber, string(r.Raw)} {
				if !utf8.ValidString(s) {
					t.Fatalf("request %q holds text that is not valid UTF-8", r.ID)
				}
			}
			if strings.ContainsRune(r.ID+r.ClaimNumber, utf8.RuneError) && !sendsReplacement(r.Raw) {
				t.Fatalf("request %q: a replacement character the remote did not send", r.ID)
			}
			if !bytes.Contains(body, r.Raw) {
				t.Fatalf("request %q: Raw is not the entry as listed", r.ID)
			}
		}
	})
}

// sendsReplacement reports whether raw spells U+FFFD itself, so that one
// in the decoded string is data, not the decoder's replacement.
func sendsReplacement(raw []byte) bool {
	return bytes.ContainsRune(raw, utf8.RuneError) || bytes.Contains(bytes.ToLower(raw), []byte(`\ufffd`))
}
