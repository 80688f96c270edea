package config

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/redact"
)

// TestRedactHoldsEverySecret: the set (Daemon.Secrets) removes every
// secret Build could read: the database password, the webhook's secret,
// the remote's token (file or variable) or the OAuth2 client secret,
// whatever the scope; one that cannot be read is left out, and the
// build of a scope that does not need it goes on.
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
			[]string{"db-pass-2b", "env-token-4d", "hook-secret-3c"}, nil},
		{"Unreadable", "  token: {file: \"${CREDENTIALS_DIRECTORY}/missing\"}\n", ShopSecrets,
			[]string{"db-pass-2b", "hook-secret-3c"}, []string{"file-token-1a"}},
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
			text := strings.Join(append(append([]string{}, tt.want...), tt.keep...), " ")
			got := set.Daemon.Secrets.Redact(text)
			for _, w := range tt.want {
				if strings.Contains(got, w) {
					t.Errorf("%q kept in %q", w, got)
				}
			}
			for _, k := range tt.keep {
				if !strings.Contains(got, k) {
					t.Errorf("%q redacted in %q; it cannot be read", k, got)
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
		if got := set.Daemon.Secrets.Redact("401: Authorization: Basic " + basic); strings.Contains(got, basic) {
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
		// The remote client, given the set as the daemon gives it, adds
		// the token it sends.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("[]"))
		}))
		t.Cleanup(srv.Close)
		rc := set.Daemon.Insurers[0].Remote
		rc.BaseURL, rc.Secrets = srv.URL, set.Daemon.Secrets
		client, err := remote.New(rc, set.Daemon.Insurers[0].Tokens)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.ListRequests(t.Context()); err != nil {
			t.Fatalf("ListRequests after the rotation: %v", err)
		}
		if got := set.Daemon.Secrets.Redact("echo: rotated-token-7f"); got != "echo: "+redact.Mark {
			t.Errorf("the rotated token kept: %q", got)
		}
	})
}

// TestWebhookURLSecret: a webhook URL's path and query join the set,
// whether it is written in the YAML or read from a file or a variable;
// where it comes from is said, never the URL; a URL given twice, or a
// file that cannot be read by a verb that needs it, is an error naming
// the key.
func TestWebhookURLSecret(t *testing.T) {
	dir := t.TempDir()
	const hook = "https://hooks.slack.com/services/T0001/B0002/k3yXXXXsecretXXXXk3y24"
	if err := os.WriteFile(filepath.Join(dir, "hook-url"), []byte(hook+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		return map[string]string{"CREDENTIALS_DIRECTORY": dir, "T": "env-token-4d", "HOOK_URL": hook}[k]
	}
	for _, tt := range []struct{ name, webhook, from string }{
		{"YAML", "{url: \"" + hook + "\"}", WebhookURLInYAML},
		{"File", "{url_file: \"${CREDENTIALS_DIRECTORY}/hook-url\"}", "file " + filepath.Join(dir, "hook-url")},
		{"Env", "{url_env: HOOK_URL}", "environment variable HOOK_URL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			set := mustBuildAll(t, baseYAML+"  token: {env: T}\nnotify:\n  webhook: "+tt.webhook+"\n", env)
			if set.Daemon.Notify.Webhook.URL != hook {
				t.Errorf("the webhook's URL = %q, want the one configured", set.Daemon.Notify.Webhook.URL)
			}
			if set.WebhookURLFrom != tt.from {
				t.Errorf("WebhookURLFrom = %q, want %q", set.WebhookURLFrom, tt.from)
			}
			got := set.Daemon.Secrets.Redact("POST " + hook + ": 404 no such key k3yXXXXsecretXXXXk3y24")
			if strings.Contains(got, "k3yXXXXsecretXXXXk3y24") || strings.Contains(got, "T0001/B0002") || !strings.Contains(got, "https://hooks.slack.com") {
				t.Errorf("redacted: %q, want the path gone and the host kept", got)
			}
		})
	}
	for _, tt := range []struct{ name, webhook, want string }{
		{"Twice", "{url: \"" + hook + "\", url_env: HOOK_URL}", "notify.webhook.url, url_file and url_env: set one"},
		{"MissingFile", "{url_file: \"${CREDENTIALS_DIRECTORY}/nothing\"}", "notify.webhook.url_file: open"},
		{"UnsetEnv", "{url_env: NOTHING}", "notify.webhook.url_env: the environment variable NOTHING is not set"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fc, err := Parse(strings.NewReader(baseYAML + "  token: {env: T}\nnotify:\n  webhook: " + tt.webhook + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = fc.Build(BuildOptions{Getenv: env, Scope: AllSecrets})
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "k3yXXXX") {
				t.Errorf("build: %v, want %q and no key", err, tt.want)
			}
			if _, err := fc.Build(BuildOptions{Getenv: env, Scope: ShopSecrets}); tt.name != "Twice" && err != nil {
				t.Errorf("a verb that needs no webhook failed: %v", err)
			}
		})
	}
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

// TestWebhookInClear: a webhook that carries a secret (a secret header, or
// a key in a URL kept out of the YAML) is refused over plain http beyond
// loopback, naming the key and https; to loopback, or with no secret, it
// is taken.
func TestWebhookInClear(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hook-secret"), []byte("s3cr3t-h00k-v4lue\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		return map[string]string{"CREDENTIALS_DIRECTORY": dir, "T": "env-token-4d",
			"HOOK_URL": "http://hooks.example.net/services/k3yXXXXsecret", "LOCAL_HOOK": "http://127.0.0.1:9000/hook"}[k]
	}
	secretHeader := ", secret_header: Authorization, secret_file: \"${CREDENTIALS_DIRECTORY}/hook-secret\""
	for _, tt := range []struct {
		name, webhook string
		refused       bool
	}{
		{"SecretHeader", "{url: \"http://hooks.example.net/quotesync\"" + secretHeader + "}", true},
		{"KeyInURL", "{url_env: HOOK_URL}", true},
		{"Loopback", "{url_env: LOCAL_HOOK" + secretHeader + "}", false},
		{"HTTPS", "{url: \"https://hooks.example.net/quotesync\"" + secretHeader + "}", false},
		{"NoSecret", "{url: \"http://hooks.example.net/quotesync\"}", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fc, err := Parse(strings.NewReader(baseYAML + "  token: {env: T}\nnotify:\n  webhook: " + tt.webhook + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = fc.Build(BuildOptions{Getenv: env, Scope: AllSecrets})
			switch {
			case tt.refused && (err == nil || !strings.Contains(err.Error(), "notify.webhook.url:") || !strings.Contains(err.Error(), "plain http") ||
				!strings.Contains(err.Error(), "https://") || strings.Contains(err.Error(), "k3yXXXX")):
				t.Errorf("build: %v, want notify.webhook.url refused as plain http, naming https and not the URL's key", err)
			case !tt.refused && err != nil:
				t.Errorf("build: %v, want it taken", err)
			}
		})
	}
}
