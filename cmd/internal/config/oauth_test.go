package config

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOAuth2SecretFileIsReread: a client secret fixed in its file after the
// token endpoint refused it is used at the next fetch, without a reload;
// endpoint_params (the documented redirect_uri) reach the endpoint.
func TestOAuth2SecretFileIsReread(t *testing.T) {
	var redirectURI string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		redirectURI = r.PostForm.Get("redirect_uri")
		if id != "quotesync" || secret != "right-s3cret-value" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"invalid_client"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"fresh","token_type":"Bearer","expires_in":3600}`)
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "client-secret")
	if err := os.WriteFile(path, []byte("wrong-s3cret-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yml := baseYAML + fmt.Sprintf("  token:\n    oauth2:\n      token_url: %s/oauth/token\n      client_id: quotesync\n"+
		"      client_secret_file: %s\n      endpoint_params: {redirect_uri: \"https://workshop.example/callback\"}\n", srv.URL, path)
	fc, err := Parse(strings.NewReader(yml))
	if err != nil {
		t.Fatal(err)
	}
	s, err := fc.Build(BuildOptions{Getenv: func(string) string { return "" }, Scope: RemoteSecrets})
	if err != nil {
		t.Fatal(err)
	}
	src := s.Daemon.Insurers[0].Tokens
	if _, err := src.Token(context.Background()); err == nil || strings.Contains(err.Error(), "wrong-s3cret-value") {
		t.Fatalf("with the wrong secret: %v, want a refusal that does not show the secret", err)
	}
	if redirectURI != "https://workshop.example/callback" {
		t.Errorf("redirect_uri sent = %q, want the configured one", redirectURI)
	}
	if err := os.WriteFile(path, []byte("right-s3cret-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, err := src.Token(context.Background()); err != nil || tok != "fresh" {
		t.Errorf("after fixing the file: %q, %v; want the token", tok, err)
	}
}
