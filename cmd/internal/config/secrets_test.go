package config

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/internal/redact"
)

// TestRedactHoldsEverySecret: Settings.Redact (and the shop's, the same
// set) removes every secret Build read: the database password, the
// webhook's secret, the remote's token (file or variable) or the OAuth2
// client secret; a scope without the remote's secrets holds the password
// only.
func TestRedactHoldsEverySecret(t *testing.T) {
	dir := t.TempDir()
	for name, v := range map[string]string{"token": "file-token-1a", "db": "db-pass-2b", "hook": "hook-secret-3c"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := func(k string) string {
		return map[string]string{"CREDENTIALS_DIRECTORY": dir, "T": "env-token-4d", "S": "client-secret-5e"}[k]
	}
	const common = "notify:\n  webhook: {url: https://h.example, secret_header: X, secret_file: \"${CREDENTIALS_DIRECTORY}/hook\"}\n"
	withPassword := strings.Replace(baseYAML, "  user: quotesync\n", "  user: quotesync\n  password_file: ${CREDENTIALS_DIRECTORY}/db\n", 1)
	for _, tt := range []struct {
		name, token string
		scope       Scope
		want, keep  []string
	}{
		{"TokenFile", "  token: {file: \"${CREDENTIALS_DIRECTORY}/token\"}\n", AllSecrets,
			[]string{"file-token-1a", "db-pass-2b", "hook-secret-3c"}, nil},
		{"TokenEnv", "  token: {env: T}\n", AllSecrets,
			[]string{"env-token-4d", "db-pass-2b", "hook-secret-3c"}, nil},
		{"OAuth2", "  token:\n    oauth2: {token_url: https://auth.example/token, client_id: c, client_secret_env: S}\n", AllSecrets,
			[]string{"client-secret-5e", "db-pass-2b", "hook-secret-3c"}, nil},
		{"ShopOnly", "  token: {env: T}\n", ShopSecrets,
			[]string{"db-pass-2b"}, []string{"env-token-4d", "hook-secret-3c"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fc, err := Parse(strings.NewReader(withPassword + tt.token + common))
			if err != nil {
				t.Fatal(err)
			}
			set, err := fc.Build(BuildOptions{Getenv: env, Scope: tt.scope})
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			if set.Daemon.Shop.Redact != set.Redact {
				t.Errorf("the shop's set is not Settings.Redact")
			}
			text := strings.Join(append(append([]string{}, tt.want...), tt.keep...), " ")
			got := set.Redact.Redact(text)
			for _, w := range tt.want {
				if strings.Contains(got, w) {
					t.Errorf("%q kept in %q", w, got)
				}
			}
			for _, k := range tt.keep {
				if !strings.Contains(got, k) {
					t.Errorf("%q redacted in %q; this scope does not read it", k, got)
				}
			}
			if n := strings.Count(got, redact.Mark); n != len(tt.want) {
				t.Errorf("%d redactions in %q, want %d", n, got, len(tt.want))
			}
		})
	}
}

// TestRedactBasicAuthAndRotatedToken: the OAuth2 client's id and secret
// in base64 (its HTTP Basic header, which an endpoint's answer may echo)
// are redacted; and a token file rotated at run time is redacted as soon
// as the remote client reads the new token, without a reload.
func TestRedactBasicAuthAndRotatedToken(t *testing.T) {
	dir := t.TempDir()
	env := func(k string) string {
		return map[string]string{"CREDENTIALS_DIRECTORY": dir, "S": "client-secret-5e"}[k]
	}
	t.Run("BasicAuth", func(t *testing.T) {
		set := mustBuildAll(t, baseYAML+"  token:\n    oauth2: {token_url: https://auth.example/token, client_id: c, client_secret_env: S}\n", env)
		basic := base64.StdEncoding.EncodeToString([]byte("c:client-secret-5e"))
		if got := set.Redact.Redact("401: Authorization: Basic " + basic); strings.Contains(got, basic) {
			t.Errorf("the Basic header's credentials kept: %q", got)
		}
	})
	t.Run("RotatedTokenFile", func(t *testing.T) {
		path := filepath.Join(dir, "token")
		if err := os.WriteFile(path, []byte("file-token-1a\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		set := mustBuildAll(t, baseYAML+"  token: {file: \"${CREDENTIALS_DIRECTORY}/token\"}\n", env)
		if err := os.WriteFile(path, []byte("rotated-token-7f\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if tok, err := set.Daemon.Insurers[0].Tokens.Token(t.Context()); err != nil || tok != "rotated-token-7f" {
			t.Fatalf("Token after the rotation = %q, %v", tok, err)
		}
		if got := set.Redact.Redact("echo: rotated-token-7f"); got != "echo: "+redact.Mark {
			t.Errorf("the rotated token kept: %q", got)
		}
	})
}

// mustBuildAll parses yaml and builds it with every secret read.
func mustBuildAll(tb testing.TB, yaml string, getenv func(string) string) *Settings {
	tb.Helper()
	fc, err := Parse(strings.NewReader(yaml))
	if err != nil {
		tb.Fatal(err)
	}
	set, err := fc.Build(BuildOptions{Getenv: getenv, Scope: AllSecrets})
	if err != nil {
		tb.Fatalf("build: %v", err)
	}
	return set
}
