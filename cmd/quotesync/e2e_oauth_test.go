package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
)

// TestE2EOAuth2 runs the binary with OAuth2 client credentials against the
// documented token endpoint.
func TestE2EOAuth2(t *testing.T) {
	t.Run("RedirectURI", func(t *testing.T) {
		t.Parallel()
		e := newE2E(t, e2eOptions{Mode: emulator.ModeDocumented, NoRedirectURI: true})
		res := e.once()
		if res.Code == 0 || !strings.Contains(res.Output, "redirect_uri") {
			t.Errorf("without endpoint_params.redirect_uri: exit %d, want a failure naming redirect_uri\n%s", res.Code, e2eTail(res.Output, 5))
		}
		refused := e.Emu.TokenCalls()
		e.opts.NoRedirectURI = false
		e.writeConfig()
		e.mustOnce()
		if got := e.Emu.TokenCalls() - refused; refused == 0 || got != 1 {
			t.Errorf("token calls: %d refused, then %d; want the one with redirect_uri to get a token", refused, got)
		}
	})

	t.Run("ExpiredTokenFetchedAgain", func(t *testing.T) {
		t.Parallel()
		e := newE2E(t, e2eOptions{Mode: emulator.ModeDocumented, TokenTTL: 2 * time.Second})
		p := e.start("run")
		accepted := func(id string) func() bool {
			return func() bool { r, _ := e.Emu.State().Request(id); return r.ReferenceID != "" }
		}
		e.createJob("CLM-TOK-1")
		e2eWaitFor(t, p, "the first accept", accepted(e.seed("CLM-TOK-1", "")))
		// The token expires while the daemon runs: fetched anew.
		time.Sleep(2500 * time.Millisecond)
		e.createJob("CLM-TOK-2")
		e2eWaitFor(t, p, "the accept after the token's lifetime", accepted(e.seed("CLM-TOK-2", "")))
		n := e.Emu.TokenCalls()
		if n < 2 {
			t.Errorf("token calls %d, want a token fetched again after it expired", n)
		}
		// Every token revoked: the 401 makes the daemon fetch a new one.
		e.Emu.ExpireTokens()
		e.createJob("CLM-TOK-3")
		e2eWaitFor(t, p, "the accept after the tokens were revoked", accepted(e.seed("CLM-TOK-3", "")))
		if e.Emu.TokenCalls() <= n {
			t.Errorf("no token fetched after the 401")
		}
		if code := p.stop(30 * time.Second); code != 0 {
			t.Errorf("run: exit %d\n%s", code, e2eTail(p.out.String(), 10))
		}
	})

	t.Run("RedirectNotFollowed", func(t *testing.T) {
		t.Parallel()
		var hits atomic.Int32
		e := newE2E(t, e2eOptions{Mode: emulator.ModeDocumented})
		target := e.Srv.URL + emulator.TokenPath
		redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			http.Redirect(w, r, target, http.StatusTemporaryRedirect)
		}))
		t.Cleanup(redirect.Close)
		e.opts.TokenURL = redirect.URL + "/token"
		e.writeConfig()
		res := e.once()
		if res.Code == 0 || !strings.Contains(res.Output, target) || !strings.Contains(res.Output, "redirect") {
			t.Errorf("a 307 from the token endpoint: exit %d; want a failure naming the Location %s\n%s", res.Code, target, e2eTail(res.Output, 5))
		}
		if hits.Load() == 0 || e.Emu.TokenCalls() != 0 {
			t.Errorf("redirecting endpoint called %d times, the Location %d times; want the redirect not followed", hits.Load(), e.Emu.TokenCalls())
		}
	})

	t.Run("SecretFileFixed", func(t *testing.T) {
		t.Parallel()
		secret := filepath.Join(t.TempDir(), "client-secret")
		if err := os.WriteFile(secret, []byte("stale-secret-0000\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		e := newE2E(t, e2eOptions{Mode: emulator.ModeDocumented, SecretFile: secret})
		e.createJob("CLM-SEC-1")
		id := e.seed("CLM-SEC-1", "")
		p := e.start("run")
		e2eWaitFor(t, p, "the refused token request logged", func() bool {
			return e.Emu.TokenCalls() > 0 && strings.Contains(p.out.String(), "invalid_client")
		})
		if r, _ := e.Emu.State().Request(id); r.ReferenceID != "" {
			t.Fatalf("with a wrong secret: request %+v accepted", r)
		}
		if err := os.WriteFile(secret, []byte(e2eToken+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		e2eWaitFor(t, p, "the accept after the secret was fixed", func() bool {
			r, _ := e.Emu.State().Request(id)
			return r.ReferenceID != ""
		})
		if code := p.stop(30 * time.Second); code != 0 {
			t.Errorf("run: exit %d", code)
		}
		if strings.Contains(p.out.String(), "stale-secret-0000") {
			t.Errorf("the secret was logged")
		}
	})
}
