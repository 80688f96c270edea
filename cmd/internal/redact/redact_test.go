package redact_test

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/cmd/internal/redact"
)

func TestRedact(t *testing.T) {
	s := redact.New("Bearer hook-5d1e", "", "abc", `p"w&d/é`, "hook-5d1e-longer")
	for _, tt := range []struct{ in, want string }{
		{"401: Authorization: Bearer hook-5d1e", "401: Authorization: [REDACTED]"},
		{`{"headers":{"Authorization":"Bearer hook-5d1e"}}`, `{"headers":{"Authorization":"[REDACTED]"}}`},
		{"echo: Bearer%20hook-5d1e and Bearer+hook-5d1e", "echo: [REDACTED] and [REDACTED]"},
		{`json: "p\"w\u0026d/é" raw: p"w&d/é`, `json: "[REDACTED]" raw: [REDACTED]`},
		{`a log line: {"error":"p\"w&d/é"}`, `a log line: {"error":"[REDACTED]"}`},
		{"query: p%22w%26d%2F%C3%A9", "query: [REDACTED]"},
		{"the longer one: hook-5d1e-longer", "the longer one: [REDACTED]"},
		{"short values stay: abc", "short values stay: abc"},
		{"nothing secret", "nothing secret"},
	} {
		if got := s.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}

	var none *redact.Secrets
	if got := none.Redact("Bearer hook-5d1e"); got != "Bearer hook-5d1e" || !none.Empty() {
		t.Errorf("a nil set redacted %q (empty %v)", got, none.Empty())
	}
	empty := redact.New("", "ab")
	if !empty.Empty() || empty.Redact("ab") != "ab" {
		t.Errorf("a set of no usable value is not empty")
	}
	empty.Add("token-2")
	if empty.Empty() || empty.Redact("new token-2") != "new [REDACTED]" {
		t.Errorf("Add: %q", empty.Redact("new token-2"))
	}
}

// TestRedactBase64: a secret is also removed in base64, alone and as the
// credentials of an HTTP Basic header (an OAuth2 client's id and secret,
// also in the query-escaped form the OAuth2 library sends).
func TestRedactBase64(t *testing.T) {
	const id, secret = "client id", "s3cret/+ü"
	s := redact.New(secret)
	s.Add(redact.BasicAuth(id, secret)...)
	b64 := base64.StdEncoding.EncodeToString
	for _, in := range []string{
		"Authorization: Basic " + b64([]byte(id+":"+secret)),
		"Authorization: Basic " + b64([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret))),
		"echo: " + b64([]byte(secret)),
	} {
		if got := s.Redact(in); strings.Contains(got, in[strings.LastIndexByte(in, ' ')+1:]) || !strings.Contains(got, redact.Mark) {
			t.Errorf("Redact(%q) = %q, want the base64 form redacted", in, got)
		}
	}
}
