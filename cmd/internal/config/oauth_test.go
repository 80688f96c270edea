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

// TestTokenURLInClear: a token endpoint over plain http beyond loopback is
// refused, naming the key and the fix, in remote: and in each insurer of
// remotes:, where the client secret would cross the network in clear;
// loopback (the emulator, the tests) is allowed.
func TestTokenURLInClear(t *testing.T) {
	// oauth is the token of an insurer, its keys indented by in.
	oauth := func(in, url string) string {
		return in + "token:\n" + in + "  oauth2:\n" + in + "    token_url: " + url + "\n" + in + "    client_id: quotesync\n" + in + "    client_secret_env: S\n"
	}
	remotes := strings.Replace(baseYAML, "remote:\n  base_url: https://api.insurer.example\n",
		"remotes:\n  - name: aa\n    base_url: https://aa.example\n    token: {env: T}\n  - name: bb\n    base_url: https://bb.example\n", 1)
	tests := []struct {
		name, yml string
		want      []string // nil: accepted
	}{
		{"Remote", baseYAML + oauth("  ", "http://login.insurer.example/oauth/token"),
			[]string{`remote.token.oauth2.token_url: "http://login.insurer.example/oauth/token" is plain http`,
				"the client secret and the token would cross the network in clear", "use https://login.insurer.example/oauth/token"}},
		{"Remotes", remotes + oauth("    ", "http://10.0.0.7/token"), []string{"remotes[1].token.oauth2.token_url:", "plain http"}},
		{"NotHTTP", remotes + oauth("    ", "ftp://login.insurer.example/token"), []string{"remotes[1].token.oauth2.token_url:", "must be the https URL"}},
		{"Loopback", remotes + oauth("    ", "http://127.0.0.1:9000/token"), nil},
		{"HTTPS", remotes + oauth("    ", "https://login.insurer.example/token"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc, err := Parse(strings.NewReader(tt.yml))
			if err != nil {
				t.Fatalf("parse: %v\n%s", err, tt.yml)
			}
			_, err = fc.Build(BuildOptions{Getenv: func(string) string { return "" }, Scope: NoSecrets})
			if tt.want == nil {
				if err != nil {
					t.Fatalf("build: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("build accepted:\n%s", tt.yml)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
