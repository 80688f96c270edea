package redact_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	htmltemplate "html/template"
	"net/url"
	"strings"
	"testing"
	texttemplate "text/template"

	"github.com/quotesync/quotesync/remote/redact"
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
	none.Add("ignored")
	none.AddFetched("ignored")
	if got := none.Redact("Bearer hook-5d1e"); got != "Bearer hook-5d1e" || !none.Empty() || none.Longest() != 0 {
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

// secret holds every character whose escapes differ between the
// encoders: a slash, a plus, a quote, an ampersand, a less-than, a space,
// an apostrophe, a non-ASCII letter and one past the BMP.
const secret = `s3cr/e+t "q"&<x> it's é𝄞-end`

// TestRedactForms: the secret is removed in each form an echo can take,
// as real encoders write it, alone and inside a text; nothing of it is
// left.
func TestRedactForms(t *testing.T) {
	s := redact.New(secret)
	jsonGo := func(html bool) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if err := enc.Encode(secret); err != nil {
			t.Fatal(err)
		}
		q := strings.TrimSpace(b.String())
		return q[1 : len(q)-1]
	}
	// PHP's json_encode default: \/ and \u escapes of non-ASCII (UTF-16).
	php := strings.NewReplacer(`/`, `\/`, `"`, `\"`, "é", `\u00e9`, "𝄞", `\ud834\udd1e`).Replace(secret)
	python := strings.NewReplacer(`"`, `\"`, "é", `\u00e9`, "𝄞", `\ud834\udd1e`).Replace(secret)
	upperU := strings.NewReplacer(`"`, `\"`, "é", `\u00E9`, "𝄞", `\uD834\uDD1E`, "<", `\u003C`, ">", `\u003E`, "&", `\u0026`, "/", `\u002F`).Replace(secret)
	lowerHex := func(s string) string {
		b := []byte(s)
		for i := range b {
			if b[i] == '%' {
				b[i+1], b[i+2] = bytes.ToLower(b[i+1 : i+2])[0], bytes.ToLower(b[i+2 : i+3])[0]
			}
		}
		return string(b)
	}
	var html bytes.Buffer
	if err := htmltemplate.Must(htmltemplate.New("").Parse(`{{.}}`)).Execute(&html, secret); err != nil {
		t.Fatal(err)
	}
	var attr bytes.Buffer
	if err := htmltemplate.Must(htmltemplate.New("").Parse(`<input value="{{.}}">`)).Execute(&attr, secret); err != nil {
		t.Fatal(err)
	}
	attrValue := strings.TrimSuffix(strings.TrimPrefix(attr.String(), `<input value="`), `">`)

	forms := map[string]string{
		"as sent":             secret,
		"json go":             jsonGo(true),
		"json no html":        jsonGo(false),
		"json slash":          strings.ReplaceAll(jsonGo(false), "/", `\/`),
		"json u002f":          strings.ReplaceAll(jsonGo(true), "/", `\u002f`),
		"json php":            php,
		"json python":         python,
		"json upper hex":      upperU,
		"query":               url.QueryEscape(secret),
		"query lower hex":     lowerHex(url.QueryEscape(secret)),
		"path":                url.PathEscape(secret),
		"path lower hex":      lowerHex(url.PathEscape(secret)),
		"component %20":       strings.ReplaceAll(url.QueryEscape(secret), "+", "%20"),
		"base64":              base64.StdEncoding.EncodeToString([]byte(secret)),
		"base64 raw":          base64.RawStdEncoding.EncodeToString([]byte(secret)),
		"base64url":           base64.URLEncoding.EncodeToString([]byte(secret)),
		"base64url raw":       base64.RawURLEncoding.EncodeToString([]byte(secret)),
		"base64 in json":      strings.ReplaceAll(base64.StdEncoding.EncodeToString([]byte(secret)), "/", `\/`),
		"html/template":       html.String(),
		"html/template attr":  attrValue,
		"text/template":       texttemplate.HTMLEscapeString(secret),
		"query in json slash": strings.ReplaceAll(url.PathEscape(secret), "/", `\/`),
	}
	for name, form := range forms {
		in := "before " + form + " after"
		if got, want := s.Redact(in), "before "+redact.Mark+" after"; got != want {
			t.Errorf("%s: Redact(%q) = %q, want %q", name, in, got, want)
		}
	}
	if s.Longest() < len(forms["json upper hex"]) {
		t.Errorf("Longest = %d, shorter than a form (%d)", s.Longest(), len(forms["json upper hex"]))
	}
}

// TestRedactBase64Embedded: a secret inside a longer text encoded whole
// (a bearer header in base64, at each of the three offsets a base64
// group can start at) leaves no run of the characters that encode it.
func TestRedactBase64Embedded(t *testing.T) {
	const tok = "tok/3n+Q9xYz-w_vU7"
	s := redact.New(tok)
	for _, prefix := range []string{"Bearer ", "Bearer  ", "Bearer   ", "x"} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			text := prefix + tok + " and more"
			in := enc.EncodeToString([]byte(text))
			got := s.Redact(in)
			if !strings.Contains(got, redact.Mark) {
				t.Errorf("base64 of %q: %q not redacted", text, in)
				continue
			}
			// No run of the characters that encode the token alone is left.
			for _, part := range strings.Split(got, redact.Mark) {
				for i := 0; i+4 <= len(part); i++ {
					if strings.Contains(tokenChars(enc, prefix, tok), part[i:i+4]) {
						t.Errorf("base64 of %q: %q left after redaction: %q", text, part[i:i+4], got)
						break
					}
				}
			}
		}
	}
}

// tokenChars are the characters of enc's encoding of prefix+tok+… that
// encode bytes of tok only.
func tokenChars(enc *base64.Encoding, prefix, tok string) string {
	s := enc.WithPadding(base64.NoPadding).EncodeToString([]byte(prefix + tok))
	from := (len(prefix)*8 + 5) / 6 // first character with no bit of prefix
	to := len(prefix+tok) * 8 / 6   // characters before it are complete
	return s[from:to]
}

// TestRedactBasicAuth: an OAuth2 client's id and secret in an HTTP Basic
// header, as they are and query-escaped first (as golang.org/x/oauth2
// sends them).
func TestRedactBasicAuth(t *testing.T) {
	const id, sec = "client id", "s3cret/+ü"
	s := redact.New(sec)
	s.Add(redact.BasicAuth(id, sec)...)
	b64 := base64.StdEncoding.EncodeToString
	for _, in := range []string{
		"Authorization: Basic " + b64([]byte(id+":"+sec)),
		"Authorization: Basic " + b64([]byte(url.QueryEscape(id)+":"+url.QueryEscape(sec))),
		"echo: " + b64([]byte(sec)),
	} {
		if got := s.Redact(in); strings.Contains(got, in[strings.LastIndexByte(in, ' ')+1:]) || !strings.Contains(got, redact.Mark) {
			t.Errorf("Redact(%q) = %q, want the base64 form redacted", in, got)
		}
	}
}

// TestCutAfterRedact: a secret that straddles the cut is redacted whole;
// cutting first would keep its first half.
func TestCutAfterRedact(t *testing.T) {
	const tok = "straddling-secret-0123456789"
	s := redact.New(tok)
	text := strings.Repeat("a", 90) + tok + strings.Repeat("b", 100)
	got := s.Cut(text, 100)
	if strings.Contains(got, tok[:10]) || !strings.Contains(got, redact.Mark) {
		t.Errorf("Cut = %q, want the straddling secret redacted whole", got)
	}
	if !strings.HasSuffix(got, "…") || len(got) > 100+len("…") {
		t.Errorf("Cut = %q (%d bytes), want at most 100 bytes and the cut marked", got, len(got))
	}
	if got := s.Cut("short", 100); got != "short" {
		t.Errorf("Cut(short) = %q", got)
	}
	if got := s.Cut("é"+strings.Repeat("x", 10), 1); got != "…" {
		t.Errorf("Cut on a rune = %q, want no half rune", got)
	}
}

// TestExcerptReadBound: a text read up to a bound may end inside a
// secret; Excerpt drops what could be its start, so no prefix of it is
// kept even when the redactions before it shorten the text into the
// kept part.
func TestExcerptReadBound(t *testing.T) {
	const tok = "bound-secret-0123456789abcdef"
	s := redact.New(tok)
	const keep = 60
	// Secrets before the bound shrink to Mark, pulling the straddling one
	// into the first keep bytes.
	body := strings.Repeat(tok+" ", 3) + tok
	bound := int(s.ReadBound(keep))
	if bound <= keep+len(tok) {
		t.Fatalf("ReadBound(%d) = %d, not past keep + the secret", keep, bound)
	}
	for cut := len(body) - len(tok) + 1; cut < len(body); cut++ {
		read := body[:cut] // the read stopped inside the last secret
		got := s.Excerpt(read, keep, true)
		if strings.Contains(got, tok[:4]) {
			t.Errorf("Excerpt of a read cut at %d = %q: a prefix of the secret is kept", cut, got)
		}
		if !strings.HasSuffix(got, "…") {
			t.Errorf("Excerpt = %q, want the cut marked", got)
		}
	}
	if got := s.Excerpt("all of it "+tok, keep, false); got != "all of it "+redact.Mark {
		t.Errorf("Excerpt of a whole text = %q", got)
	}
}

// TestAddFetched: tokens fetched at run time are redacted from their
// first use; only the last KeepFetched stay; configured values stay for
// good.
func TestAddFetched(t *testing.T) {
	s := redact.New("configured-1")
	s.AddFetched("configured-1")
	tok := func(i int) string {
		return "fetched-token-" + strings.Repeat("x", i%3) + string(rune('A'+i%26)) + string(rune('a'+i/26))
	}
	for i := range redact.KeepFetched + 5 {
		s.AddFetched(tok(i))
		if got := s.Redact("t " + tok(i)); got != "t "+redact.Mark {
			t.Fatalf("token %d not redacted at once: %q", i, got)
		}
	}
	if got := s.Redact(tok(0)); got != tok(0) {
		t.Errorf("the oldest fetched token is still redacted past KeepFetched: %q", got)
	}
	if got := s.Redact(tok(redact.KeepFetched + 4)); got != redact.Mark {
		t.Errorf("the newest fetched token is not redacted: %q", got)
	}
	if got := s.Redact("configured-1"); got != redact.Mark {
		t.Errorf("a configured value left the set: %q", got)
	}
	j := redact.New()
	j.Join(s)
	if got := j.Redact(tok(redact.KeepFetched+4) + " configured-1"); got != redact.Mark+" "+redact.Mark {
		t.Errorf("Join lost values: %q", got)
	}
}

// TestURL: a webhook URL's path and query are secrets (each query value
// too), its scheme and host are not.
func TestURL(t *testing.T) {
	const hook = "https://hooks.slack.com/services/T0001/B0002/k3yXXXXsecretXXXXk3y24?token=q-s3cret&x=1"
	s := redact.New(redact.URL(hook)...)
	got := s.Redact("POST " + hook + ": 404; the key alone: k3yXXXXsecretXXXXk3y24? no: /services/T0001/B0002/k3yXXXXsecretXXXXk3y24; q-s3cret")
	for _, kept := range []string{"k3yXXXXsecretXXXXk3y24", "q-s3cret", "T0001/B0002"} {
		if strings.Contains(got, kept) {
			t.Errorf("%q kept in %q", kept, got)
		}
	}
	if !strings.Contains(got, "POST https://hooks.slack.com") {
		t.Errorf("the scheme and host went: %q", got)
	}
	if v := redact.URL("https://receiver.example"); len(v) != 0 {
		t.Errorf("URL of a bare origin = %q, want no secret", v)
	}
}

// TestRedactHexCaseLiteral: a secret holding a % or a backslash before u
// of its own is still found in its upper- and lower-case-hex echoes (a %
// or \u of the secret's text is no escape whose hex case changes), as
// .NET's System.Text.Json (upper-case \u003C) and others write them.
func TestRedactHexCaseLiteral(t *testing.T) {
	for secret, forms := range map[string][]string{
		"Passw%rd>é": {`Passw%rd\u003E\u00E9`, `Passw%rd\u003e\u00e9`, `Passw%rd\u003Eé`,
			"Passw%25rd%3E%C3%A9", "Passw%25rd%3e%c3%a9"},
		`C:\users<k>`: {`C:\\users\u003Ck\u003E`, `C:\\users\u003ck\u003e`,
			`C\u003A\u005Cusers\u003Ck\u003E`, "C%3A%5Cusers%3Ck%3E", "C%3a%5cusers%3ck%3e"},
	} {
		s := redact.New(secret)
		for _, form := range forms {
			in := `{"password":"` + form + `"}`
			if got, want := s.Redact(in), `{"password":"`+redact.Mark+`"}`; got != want {
				t.Errorf("New(%q).Redact(%q) = %q, want %q", secret, in, got, want)
			}
		}
	}
}
