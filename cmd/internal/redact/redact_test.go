package redact_test

import (
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
