package remote

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/remote/redact"
)

// echoForms are s in the forms a service echoes it: as sent,
// URL-encoded in either hex case, JSON-escaped (\/ and \u002f), base64
// and base64url with and without padding.
func echoForms(s string) map[string]string {
	jsonEsc, _ := json.Marshal(s)
	js := strings.Trim(string(jsonEsc), `"`)
	return map[string]string{
		"as sent":       s,
		"url upper":     url.QueryEscape(s),
		"url lower":     lowerHex(url.QueryEscape(s)),
		"json \\/":      strings.ReplaceAll(js, "/", `\/`),
		"json \\u002f":  strings.ReplaceAll(js, "/", `\u002f`),
		"base64":        base64.StdEncoding.EncodeToString([]byte(s)),
		"base64 raw":    base64.RawStdEncoding.EncodeToString([]byte(s)),
		"base64url":     base64.URLEncoding.EncodeToString([]byte(s)),
		"base64url raw": base64.RawURLEncoding.EncodeToString([]byte(s)),
	}
}

// lowerHex lowers the hex digits of each %XX of s.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			copy(b[i+1:i+3], strings.ToLower(string(b[i+1:i+3])))
		}
	}
	return string(b)
}

// assertNoForm fails when text holds s in any echo form (or a run of a
// third of it as sent).
func assertNoForm(tb testing.TB, where, text, s string) {
	tb.Helper()
	for name, f := range echoForms(s) {
		if strings.Contains(text, f) {
			tb.Errorf("%s holds %q %s (%q):\n%s", where, s, name, f, text)
		}
	}
	if part := s[:len(s)/3]; strings.Contains(text, part) {
		tb.Errorf("%s holds the start of %q (%q):\n%s", where, s, part, text)
	}
}

// echoBody is a 400 body quoting header and secret in every form, with
// the client's own whole header in base64 (a bearer header encoded whole).
func echoBody(header string, secrets ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "bad request; you sent Authorization: %s (%s)", header, base64.StdEncoding.EncodeToString([]byte(header)))
	for _, s := range secrets {
		for name, f := range echoForms(s) {
			fmt.Fprintf(&b, "; %s: %s", name, f)
		}
	}
	return b.String()
}

// TestClientRedactsWithTheSet: a token the client sends joins the set it
// was given before it goes out, and an answer echoing it (and the other
// secrets of the set) in every form keeps none of them in the error.
func TestClientRedactsWithTheSet(t *testing.T) {
	const tok = "tok/3n+Q9x=Yz-w_vU7"
	const dbPassword = "db/pass+word=7"
	set := redact.New(dbPassword)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, echoBody(r.Header.Get("Authorization"), tok, dbPassword))
	}))
	t.Cleanup(srv.Close)
	cfg := testConfig(srv.URL)
	cfg.Secrets = set
	c, err := New(cfg, StaticToken(tok))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.SetStatus(context.Background(), "RO-1", "Estimate", StatusSubmitted)
	if err == nil || !strings.Contains(err.Error(), redact.Mark) {
		t.Fatalf("SetStatus = %v, want a refusal with the echo redacted", err)
	}
	assertNoForm(t, "the error", err.Error(), tok)
	assertNoForm(t, "the error", err.Error(), dbPassword)
	if got := set.Redact("later: " + tok); got != "later: "+redact.Mark {
		t.Errorf("the token did not join the set: %q", got)
	}
}

// TestTokenEndpointEchoRedacted: a token endpoint that refuses with a
// body quoting the client secret and the Basic header in every form
// (no OAuth2 error code: the body's excerpt is shown), one of them
// straddling the excerpt's cut, keeps neither in the error; the
// tokens a fetch gets join the set.
func TestTokenEndpointEchoRedacted(t *testing.T) {
	const secret = "cl1ent/s3cret+=x"
	for _, straddle := range []int{0, tokenBodyExcerpt - 6, tokenBodyExcerpt - 1} {
		t.Run(fmt.Sprint(straddle), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, strings.Repeat("x", straddle)+secret+" "+echoBody(r.Header.Get("Authorization"), secret))
			}))
			t.Cleanup(srv.Close)
			set := redact.New()
			src := ClientCredentials(ClientCredentialsConfig{TokenURL: srv.URL, ClientID: "quotesync", ClientSecret: secret, Secrets: set})
			_, err := src.Token(context.Background())
			if err == nil {
				t.Fatal("a refused fetch gave a token")
			}
			assertNoForm(t, "the error", err.Error(), secret)
			if got := set.Redact(secret); got != redact.Mark {
				t.Errorf("the client secret did not join the set: %q", got)
			}
		})
	}
	te := &tokenEndpoint{expiresIn: 3600}
	srv := httptest.NewServer(te)
	t.Cleanup(srv.Close)
	set := redact.New()
	src := ClientCredentials(ClientCredentialsConfig{TokenURL: srv.URL, ClientID: "quotesync", ClientSecret: "cl1ent-s3cret", Secrets: set})
	tok, err := src.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Redact("echo " + tok); got != "echo "+redact.Mark {
		t.Errorf("the fetched token did not join the set: %q", got)
	}
}
