package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/remote/redact"
)

// secretText is a Stringer that shows a secret.
type secretText string

func (s secretText) String() string { return string(s) }

// TestLoggerRedacts: every secret of the set is gone from the log lines,
// whichever field or message carries it (a child's fields, an error, a
// Stringer, a byte string, the message; JSON-escaped in an answer), also
// a secret a reload adds after the logger was built.
func TestLoggerRedacts(t *testing.T) {
	const first, second = `hook"secret-1`, "token-secret-2"
	secrets := redact.New(first)
	var buf bytes.Buffer
	log := newLogger(zap.NewAtomicLevelAt(zap.DebugLevel), "json", &buf, secrets)
	child := log.With(zap.String("header", first))
	child.Warn("refused: "+first,
		zap.Error(errors.New(`answered 401: {"echo":"hook\"secret-1"}`)),
		zap.Stringer("answer", secretText("it said "+first)),
		zap.ByteString("body", []byte(first)))
	secrets.Add(second) // a reload read a new token
	log.Error("refused", zap.String("detail", "Bearer "+second), zap.Int("attempt", 1))
	out := buf.String()
	for _, s := range []string{"hook", second} {
		if strings.Contains(out, s) {
			t.Errorf("the log holds a secret (%q):\n%s", s, out)
		}
	}
	if got := strings.Count(out, redact.Mark); got != 6 {
		t.Errorf("%d redactions, want 6 (header, message, error, answer, body, detail):\n%s", got, out)
	}
	if !strings.Contains(out, `"attempt":1`) {
		t.Errorf("the other fields are lost:\n%s", out)
	}
}
