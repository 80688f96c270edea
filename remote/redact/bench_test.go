package redact_test

import (
	"strings"
	"testing"

	"github.com/quotesync/quotesync/remote/redact"
)

// BenchmarkRedact is the cost of one redaction of a 300-byte log line or
// error text with the secrets of a daemon that uses OAuth2 and a webhook
// (the set holds the database password, the client secret with its Basic
// forms, the webhook's secret and URL, and KeepFetched access tokens).
func BenchmarkRedact(b *testing.B) {
	s := redact.New("db-pa55word/16ch", "cl1ent/s3cret+Q9=x-7f-0123456789ab", "hook-secret-3c9f1a2b")
	s.Add(redact.BasicAuth("e2e-workshop", "cl1ent/s3cret+Q9=x-7f-0123456789ab")...)
	s.Add(redact.URL("https://hooks.slack.com/services/T0001/B0002/k3yXXXXsecretXXXXk3y24")...)
	for i := range redact.KeepFetched {
		s.AddFetched(strings.Repeat("0123456789abcdef", 3) + string(rune('a'+i%26)) + string(rune('a'+i/26)))
	}
	text := strings.Repeat("POST /requests/1003: rejected: status 400 Bad Request: referenceId is used; ", 4)[:300]
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		_ = s.Redact(text)
	}
}

// BenchmarkAddFetched is the cost the remote client pays at each call for
// the token it sends, already in the set.
func BenchmarkAddFetched(b *testing.B) {
	s := redact.New("db-pa55word/16ch")
	tok := strings.Repeat("0123456789abcdef", 3)
	s.AddFetched(tok)
	for b.Loop() {
		s.AddFetched(tok)
	}
}
