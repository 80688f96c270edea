// Package redact removes secret values from text that quotesync keeps (its
// state tables, the outbox) or shows (logs, status): the one place that
// knows the forms a secret can take in an echo.
//
// A receiver or a service that quotes a request back in its error answer
// (a 401 that echoes the secret header) would otherwise carry the secret
// into the log and into quotesync's tables, whence status and the status
// page show it. Whatever the text came from, Secrets.Redact replaces every
// configured secret in it with Mark.
//
// strings.Replacer does the matching; no library was weighed beyond it:
// the redaction hooks of logging libraries act on their own lines only,
// and these texts are stored too.
package redact

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	gosync "sync"
	"sync/atomic"
)

// Mark replaces a secret.
const Mark = "[REDACTED]"

// MinLen is the shortest value that is redacted: shorter ones would shred
// ordinary text, and no real secret is that short.
const MinLen = 4

// Secrets is a set of secret values to remove from text. It is safe for
// concurrent use; a nil *Secrets holds none and redacts nothing.
type Secrets struct {
	mu     gosync.Mutex // serialises Add
	values []string
	r      atomic.Pointer[strings.Replacer] // nil while there is nothing to replace
}

// New returns the set of values; empty ones and ones shorter than MinLen
// are left out.
func New(values ...string) *Secrets {
	s := &Secrets{}
	s.Add(values...)
	return s
}

// Add adds values to the set (a reload that read a new secret keeps the
// old one too: text made with it may still come by).
func (s *Secrets) Add(values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.values)
	for _, v := range values {
		if len(v) >= MinLen && !slices.Contains(s.values, v) {
			s.values = append(s.values, v)
		}
	}
	if len(s.values) == n {
		return
	}
	var forms []string
	for _, v := range s.values {
		forms = append(forms, echoes(v)...)
	}
	// Longest first: a secret that contains another goes whole.
	slices.SortFunc(forms, func(a, b string) int {
		if d := len(b) - len(a); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	forms = slices.Compact(forms)
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Mark)
	}
	s.r.Store(strings.NewReplacer(pairs...))
}

// echoes are the forms in which an answer (or a log line) may quote v:
// as it is, escaped in a JSON string (with and without the HTML escapes),
// escaped in a URL's query or path, in base64.
func echoes(v string) []string {
	forms := []string{v, base64.StdEncoding.EncodeToString([]byte(v))}
	for _, html := range []bool{true, false} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(v) == nil {
			q := strings.TrimSuffix(b.String(), "\n")
			forms = append(forms, q[1:len(q)-1])
		}
	}
	forms = append(forms, url.QueryEscape(v), url.PathEscape(v))
	out := forms[:0]
	for _, f := range forms {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// BasicAuth returns the values to add for an HTTP Basic header that
// carries user and password: its credentials in base64, as they are and
// query-escaped first (as golang.org/x/oauth2 sends a client's id and
// secret). An answer that echoes the header carries neither in clear.
func BasicAuth(user, password string) []string {
	b64 := base64.StdEncoding.EncodeToString
	return []string{b64([]byte(user + ":" + password)), b64([]byte(url.QueryEscape(user) + ":" + url.QueryEscape(password)))}
}

// Join adds the values of o to the set.
func (s *Secrets) Join(o *Secrets) {
	if o == nil {
		return
	}
	o.mu.Lock()
	values := slices.Clone(o.values)
	o.mu.Unlock()
	s.Add(values...)
}

// Redact returns text with every secret of the set replaced by Mark.
func (s *Secrets) Redact(text string) string {
	if s == nil {
		return text
	}
	r := s.r.Load()
	if r == nil {
		return text
	}
	return r.Replace(text)
}

// Empty reports whether the set holds no secret (nothing to redact).
func (s *Secrets) Empty() bool {
	return s == nil || s.r.Load() == nil
}
