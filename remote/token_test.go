package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestStaticAndEnvToken(t *testing.T) {
	ctx := context.Background()
	if got, err := StaticToken("abc").Token(ctx); err != nil || got != "abc" {
		t.Errorf("StaticToken = %q, %v; want abc", got, err)
	}
	if _, err := StaticToken("").Token(ctx); err == nil {
		t.Error("empty StaticToken gave no error")
	}
	t.Setenv("QUOTESYNC_TEST_TOKEN", "  "+testToken+"\n")
	src := EnvToken("QUOTESYNC_TEST_TOKEN", nil)
	if got, err := src.Token(ctx); err != nil || got != testToken {
		t.Errorf("EnvToken = %q, %v; want trimmed token", got, err)
	}
	t.Setenv("QUOTESYNC_TEST_TOKEN", "rotated")
	if got, _ := src.Token(ctx); got != "rotated" {
		t.Errorf("EnvToken after change = %q, want rotated", got)
	}
	t.Setenv("QUOTESYNC_TEST_TOKEN", " ")
	_, err := src.Token(ctx)
	if err == nil || !strings.Contains(err.Error(), "QUOTESYNC_TEST_TOKEN") {
		t.Errorf("blank EnvToken error = %v, want one naming the variable", err)
	}
}

func TestFileToken(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "token")
	write := func(s string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	write(testToken+"\n", t0)
	src := FileToken(path)
	if got, err := src.Token(ctx); err != nil || got != testToken {
		t.Fatalf("Token = %q, %v; want %q", got, err, testToken)
	}

	// Same size and mtime: the cached value stays until Invalidate.
	same := strings.Replace(testToken, "9", "8", 1)
	write(same+"\n", t0)
	if got, _ := src.Token(ctx); got != testToken {
		t.Errorf("Token with unchanged stat = %q, want the cached %q", got, testToken)
	}
	src.Invalidate()
	if got, _ := src.Token(ctx); got != same {
		t.Errorf("Token after Invalidate = %q, want %q", got, same)
	}

	// A new mtime is noticed without Invalidate (systemd rewrites the file).
	write("rotated-token", t0.Add(time.Second))
	if got, _ := src.Token(ctx); got != "rotated-token" {
		t.Errorf("Token after rewrite = %q, want rotated-token", got)
	}

	write(" \n\t", t0.Add(2*time.Second))
	_, err := src.Token(ctx)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty file error = %v, want it to name %s and say empty", err, path)
	}

	write(testToken+"\nsecond line", t0.Add(3*time.Second))
	_, err = src.Token(ctx)
	assertNoToken(t, err, testToken)

	_, err = FileToken(filepath.Join(t.TempDir(), "missing")).Token(ctx)
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing file error = %v, want it to name the file", err)
	}
}

// tokenEndpoint is a fake OAuth2 token endpoint that counts fetches.
type tokenEndpoint struct {
	fetches   atomic.Int32
	expiresIn int
	status    int // answer with this error status when set
}

func (te *tokenEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if te.status != 0 {
		w.WriteHeader(te.status)
		fmt.Fprintf(w, "no luck for %s with secret %s (header %q, form %s)", id, secret, r.Header.Get("Authorization"), r.PostForm.Encode())
		return
	}
	if id != "quotesync" || secret != "cl1ent-s3cret" || r.PostForm.Get("grant_type") != "client_credentials" {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":"invalid_client"}`)
		return
	}
	n := te.fetches.Add(1)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"access_token": fmt.Sprintf("oauth-token-%d", n), "token_type": "Bearer", "expires_in": te.expiresIn,
	})
}

func newCC(tb testing.TB, te *tokenEndpoint, secret string) *ccToken {
	tb.Helper()
	srv := httptest.NewServer(te)
	tb.Cleanup(srv.Close)
	return ClientCredentials(ClientCredentialsConfig{
		TokenURL: srv.URL + "/oauth/token", ClientID: "quotesync", ClientSecret: secret,
		Scopes: []string{"repairer"}, ExpiryLeeway: time.Minute,
	}).(*ccToken)
}

func TestClientCredentialsCachesAndRefreshes(t *testing.T) {
	ctx := context.Background()
	te := &tokenEndpoint{expiresIn: 3600}
	src := newCC(t, te, "cl1ent-s3cret")
	offset := time.Duration(0)
	src.now = func() time.Time { return time.Now().Add(offset) }

	for range 3 {
		if got, err := src.Token(ctx); err != nil || got != "oauth-token-1" {
			t.Fatalf("Token = %q, %v; want oauth-token-1", got, err)
		}
	}
	if n := te.fetches.Load(); n != 1 {
		t.Errorf("%d fetches for 3 calls, want 1 (cached)", n)
	}
	src.Invalidate()
	if got, _ := src.Token(ctx); got != "oauth-token-2" || te.fetches.Load() != 2 {
		t.Errorf("after Invalidate: %q with %d fetches, want oauth-token-2 and 2", got, te.fetches.Load())
	}
	offset = 58 * time.Minute // still 2 minutes before expiry: cached
	if got, _ := src.Token(ctx); got != "oauth-token-2" {
		t.Errorf("2 min before expiry: %q, want the cached oauth-token-2", got)
	}
	offset = 59*time.Minute + 30*time.Second // inside the 1 min leeway: fetched anew
	if got, _ := src.Token(ctx); got != "oauth-token-3" {
		t.Errorf("inside the leeway: %q, want oauth-token-3", got)
	}

	// Concurrent callers share one fetch.
	src.Invalidate()
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if _, err := src.Token(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := te.fetches.Load(); n != 4 {
		t.Errorf("%d fetches after 10 concurrent calls, want 4", n)
	}
}

func TestClientCredentialsErrors(t *testing.T) {
	ctx := context.Background()
	const secret = "cl1ent-s3cret"
	t.Run("WrongSecretIsPermanentAndClean", func(t *testing.T) {
		src := newCC(t, &tokenEndpoint{}, "wrong-s3cret-value")
		_, err := src.Token(ctx)
		assertNoToken(t, err, "wrong-s3cret-value")
		if errors.Is(err, ErrTemporary) || !strings.Contains(err.Error(), "401") {
			t.Errorf("err = %v, want a permanent error naming 401", err)
		}
	})
	for _, status := range []int{400, 401, 503} {
		t.Run(fmt.Sprintf("EchoingEndpoint%d", status), func(t *testing.T) {
			src := newCC(t, &tokenEndpoint{status: status}, secret)
			_, err := src.Token(ctx)
			assertNoToken(t, err, secret)
			if got, want := errors.Is(err, ErrTemporary), status == 503; got != want {
				t.Errorf("temporary = %v, want %v (err %v)", got, want, err)
			}
		})
	}
	t.Run("Unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		src := ClientCredentials(ClientCredentialsConfig{TokenURL: srv.URL, ClientID: "id", ClientSecret: secret})
		_, err := src.Token(ctx)
		assertNoToken(t, err, secret)
		if !errors.Is(err, ErrTemporary) {
			t.Errorf("err = %v, want temporary", err)
		}
	})
	t.Run("MissingField", func(t *testing.T) {
		_, err := ClientCredentials(ClientCredentialsConfig{TokenURL: "http://x", ClientSecret: secret}).Token(ctx)
		if err == nil || !strings.Contains(err.Error(), "ClientID") {
			t.Errorf("err = %v, want it to name ClientID", err)
		}
	})
}

// TestClientWithClientCredentials: a 401 from the API makes the client fetch
// a new OAuth2 token and retry once.
func TestClientWithClientCredentials(t *testing.T) {
	te := &tokenEndpoint{expiresIn: 3600}
	src := newCC(t, te, "cl1ent-s3cret")
	rec := &recorder{}
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer oauth-token-1" {
			w.WriteHeader(http.StatusUnauthorized) // revoked early
			return
		}
		rec.ServeHTTP(w, r)
	})
	_, c := newServerClient(t, api, src)
	for range 3 {
		if _, err := c.ListRequests(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := te.fetches.Load(); n != 2 {
		t.Errorf("%d token fetches, want 2 (first, then one after the 401)", n)
	}
	for _, r := range rec.requests() {
		if r.Auth != "Bearer oauth-token-2" {
			t.Errorf("Authorization = %q, want the fresh token", r.Auth)
		}
	}
}
