// Package redact removes secret values from every text quotesync keeps
// (its state tables, the outbox) or shows (logs, the verbs' output, the
// listener's answers, sd_notify): the one place that knows the forms a
// secret can take in an echo, and the one set of secrets a process holds.
//
// A receiver or a service that quotes a request back in its error answer
// (a 400 that echoes the Authorization header, a token endpoint that
// quotes the client secret) would otherwise carry the secret into the
// log and into quotesync's tables, whence status and the status page
// show it.
//
// Why a sub-package of remote: the insurer's service is where secrets are
// sent and echoed back (the token, the client secret, each OAuth2 token as
// it arrives), and remote redacts its own errors with the set. sync (the
// pass's texts, the webhook's answers) and cmd (the log, the verbs, the
// listener) import it as they import remote; shopdb keeps what its tables
// hold through its own one-method Redacter interface, so remote and shopdb
// stay unaware of each other. It imports nothing of quotesync. An
// interface declared beside each consumer would repeat the cut and read
// bound methods in three packages and still need this one type.
//
// Redact the whole text, then cut it (Cut, Excerpt): a cut first can
// leave half of a secret, which no longer matches.
//
// strings.Replacer does the matching; no library was weighed beyond it:
// the redaction hooks of logging libraries act on their own lines only,
// and these texts are stored too.
package redact

import (
	"cmp"
	"net/url"
	"slices"
	"strings"
	gosync "sync"
	"sync/atomic"
	"unicode/utf8"
)

// Mark replaces a secret.
const Mark = "[REDACTED]"

// MinLen is the shortest value that is redacted: shorter ones would shred
// ordinary text, and no real secret is that short.
const MinLen = 4

// KeepFetched is how many of the values added by AddFetched the set
// keeps: a token fetched anew at each expiry would otherwise pile up for
// the life of the process. Text quoting a token that many generations
// old no longer comes by.
const KeepFetched = 32

// Secrets is a set of secret values to remove from text. It is safe for
// concurrent use; a nil *Secrets holds none, redacts nothing and ignores
// additions.
type Secrets struct {
	mu      gosync.Mutex // serialises changes
	values  []string     // kept for the life of the set
	fetched []string     // the last KeepFetched values of AddFetched, oldest first
	r       atomic.Pointer[strings.Replacer]
	longest atomic.Int64 // bytes of the longest form matched
}

// New returns the set of values; empty ones and ones shorter than MinLen
// are left out.
func New(values ...string) *Secrets {
	s := &Secrets{}
	s.Add(values...)
	return s
}

// Add adds values to the set for its life (a reload that read a new
// secret keeps the old one too: text made with it may still come by).
func (s *Secrets) Add(values ...string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	for _, v := range values {
		if len(v) >= MinLen && !slices.Contains(s.values, v) {
			s.values = append(s.values, v)
			s.fetched = slices.DeleteFunc(s.fetched, func(f string) bool { return f == v })
			changed = true
		}
	}
	if changed {
		s.rebuild()
	}
}

// AddFetched adds a value fetched while the process runs (an access
// token, from its file, its variable or the OAuth2 token endpoint, at
// each use): one of the last KeepFetched such values, the oldest
// dropped first. A value the set holds already costs a lookup only.
func (s *Secrets) AddFetched(v string) {
	if s == nil || len(v) < MinLen {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.fetched); n > 0 && s.fetched[n-1] == v || slices.Contains(s.values, v) {
		return // the token of the last call (the common case), or a value kept for good
	}
	i := slices.Index(s.fetched, v)
	if i >= 0 {
		s.fetched = slices.Delete(s.fetched, i, i+1)
	}
	s.fetched = append(s.fetched, v)
	if i < 0 { // new: not only its age changes
		s.fetched = slices.Delete(s.fetched, 0, max(len(s.fetched)-KeepFetched, 0))
		s.rebuild()
	}
}

// rebuild makes the replacer of every form of every value; s.mu held.
func (s *Secrets) rebuild() {
	var forms []string
	for _, v := range slices.Concat(s.values, s.fetched) {
		forms = append(forms, echoes(v)...)
	}
	// Longest first: a secret that contains another goes whole, and the
	// replacer tries the forms in this order at each position.
	slices.SortFunc(forms, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	forms = slices.Compact(forms) // never empty: a value joined
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Mark)
	}
	s.longest.Store(int64(len(forms[0])))
	s.r.Store(strings.NewReplacer(pairs...))
}

// BasicAuth returns the values to add for an HTTP Basic header that
// carries user and password: its credentials in base64, as they are and
// query-escaped first (as golang.org/x/oauth2 sends a client's id and
// secret). An answer that echoes the header carries neither in clear.
func BasicAuth(user, password string) []string {
	return []string{user + ":" + password, url.QueryEscape(user) + ":" + url.QueryEscape(password)}
}

// Join adds the values of o to the set (its fetched values as fetched).
func (s *Secrets) Join(o *Secrets) {
	if s == nil || o == nil || s == o {
		return
	}
	o.mu.Lock()
	values, fetched := slices.Clone(o.values), slices.Clone(o.fetched)
	o.mu.Unlock()
	s.Add(values...)
	for _, v := range fetched {
		s.AddFetched(v)
	}
}

// Redact returns text with every secret of the set, in every form of
// echoes, replaced by Mark.
func (s *Secrets) Redact(text string) string {
	if s.Empty() {
		return text
	}
	return s.r.Load().Replace(text) // once set, never nil again
}

// Empty reports whether the set holds no secret (nothing to redact).
func (s *Secrets) Empty() bool {
	return s == nil || s.r.Load() == nil
}

// Longest is the length in bytes of the longest form the set matches (0
// when it holds none); see ReadBound.
func (s *Secrets) Longest() int {
	if s == nil {
		return 0
	}
	return int(s.longest.Load())
}

// Cut returns text with every secret redacted, then (see the package doc
// for why in that order) cut to at most max bytes on a rune boundary, "…"
// marking a cut.
func (s *Secrets) Cut(text string, max int) string {
	return cut(s.Redact(text), max, false)
}

// Excerpt is Cut of a text read up to a bound, to at most limit bytes.
// When more is true the read stopped at its bound and the text goes on:
// a secret straddling the bound is not matched, and what was read of it
// is the raw end of the redacted text, shorter than Longest. So the
// redacted text loses its last Longest bytes, or less: the bytes after
// its last Mark when that mark ends among them (a secret whole before
// the bound is kept as its mark); and the excerpt says it was cut. A
// bounded read that keeps limit bytes should read more than limit +
// Longest (ReadBound), so that what is dropped lies past what is kept.
func (s *Secrets) Excerpt(text string, limit int, more bool) string {
	text = s.Redact(text)
	if more {
		n := max(len(text)-s.Longest(), 0)
		if i := strings.LastIndex(text, Mark); i >= 0 && i+len(Mark) > n {
			n = i + len(Mark)
		}
		for n > 0 && n < len(text) && !utf8.RuneStart(text[n]) {
			n--
		}
		text = text[:n]
	}
	return cut(text, limit, more)
}

// ReadBound is how many bytes to read of a text of which keep bytes are
// kept (see Excerpt): keep, the longest form, and a byte to tell that
// the text went on.
func (s *Secrets) ReadBound(keep int) int64 {
	return int64(keep) + int64(s.Longest()) + 1
}

// cut keeps at most max bytes of s on a rune boundary and marks a cut
// (or, with more, text that went on) with "…".
func cut(s string, max int, more bool) string {
	if len(s) <= max {
		if more {
			return s + "…"
		}
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// MinURLSegment is the shortest segment of a URL's path that URL counts
// as a secret of its own: keys are long and random, the words of a path
// ("services", "webhooks", "IncomingWebhook") short.
const MinURLSegment = 16

// URL returns the values of a URL that are secrets: its path and query,
// whole, each query value and each path segment of at least
// MinURLSegment characters (Slack, Teams and Discord put the key of a
// webhook in the path, a receiver may echo it alone; others put a token
// in the query), and the password of its user info. The scheme and the
// host are not: they say where a text went. A value that is no URL gives
// itself whole.
func URL(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return []string{raw}
	}
	var out []string
	if p := u.EscapedPath(); p != "" && p != "/" {
		out = append(out, p, u.Path)
		for _, seg := range strings.Split(u.Path, "/") {
			if len(seg) >= MinURLSegment {
				out = append(out, seg)
			}
		}
	}
	if u.RawQuery != "" {
		out = append(out, u.RawQuery)
		for _, vs := range u.Query() {
			out = append(out, vs...)
		}
	}
	if pw, ok := u.User.Password(); ok {
		out = append(out, pw)
	}
	return out
}
