package remote

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// TestClientCredentialsRefusesRedirect: a token endpoint that answers 307
// to another host gets no second request there (the secret stays home),
// and the error names the Location and the fix.
func TestClientCredentialsRefusesRedirect(t *testing.T) {
	const secret = "cl1ent-s3cret"
	var foreign atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		foreign.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"foreign-token","token_type":"Bearer"}`))
	}))
	defer other.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	src := ClientCredentials(ClientCredentialsConfig{TokenURL: redirector.URL + "/oauth/token", ClientID: "quotesync", ClientSecret: secret})
	tok, err := src.Token(context.Background())
	if err == nil {
		t.Fatalf("Token = %q, want an error (the redirect must not be followed)", tok)
	}
	if n := foreign.Load(); n != 0 {
		t.Errorf("the redirect target got %d requests, want 0", n)
	}
	assertNoToken(t, err, secret)
	for _, want := range []string{other.URL + "/steal", "redirect", "token_url"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if errors.Is(err, ErrTemporary) {
		t.Errorf("a redirect is a configuration error, not temporary: %v", err)
	}
}

// TestClientCredentialsSendsEndpointParams: the documented flow's
// redirect_uri (any EndpointParams) goes in the token request's form.
func TestClientCredentialsSendsEndpointParams(t *testing.T) {
	var form atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		form.Store(r.PostForm.Encode())
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"tok","token_type":"Bearer","expires_in":3600}`))
	}))
	defer srv.Close()
	src := ClientCredentials(ClientCredentialsConfig{TokenURL: srv.URL, ClientID: "quotesync", ClientSecret: "cl1ent-s3cret",
		EndpointParams: url.Values{"redirect_uri": {"https://workshop.example/callback"}}})
	if _, err := src.Token(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, _ := url.ParseQuery(form.Load().(string))
	if got.Get("redirect_uri") != "https://workshop.example/callback" || got.Get("grant_type") != "client_credentials" {
		t.Errorf("token request form = %v, want grant_type and redirect_uri", got)
	}
}

// TestClientCredentialsSecretFuncRereads: with SecretFunc, a secret fixed
// after a refusal is used at the next fetch, without a new source.
func TestClientCredentialsSecretFuncRereads(t *testing.T) {
	te := &tokenEndpoint{expiresIn: 3600}
	srv := httptest.NewServer(te)
	defer srv.Close()
	secret := "wrong-s3cret-value"
	src := ClientCredentials(ClientCredentialsConfig{TokenURL: srv.URL, ClientID: "quotesync",
		SecretFunc: func() (string, error) { return secret, nil }})
	_, err := src.Token(context.Background())
	if err == nil || !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("with the wrong secret: %v, want unauthorized", err)
	}
	assertNoToken(t, err, secret)
	secret = "cl1ent-s3cret" // fixed on disk
	if tok, err := src.Token(context.Background()); err != nil || tok != "oauth-token-1" {
		t.Errorf("after the fix: %q, %v; want oauth-token-1", tok, err)
	}
	fail := ClientCredentials(ClientCredentialsConfig{TokenURL: srv.URL, ClientID: "quotesync",
		SecretFunc: func() (string, error) { return "", errors.New("read /etc/x: permission denied") }})
	if _, err := fail.Token(context.Background()); err == nil || !strings.Contains(err.Error(), "/etc/x") {
		t.Errorf("SecretFunc error = %v, want it passed on", err)
	}
}
