package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/shopdb"
)

// TestNotifyAndWriteBackSettings: the webhook's secret comes from its
// file (never the YAML), the keys are checked with the key named, and
// shop.write_back reaches the mapping by kind.
func TestNotifyAndWriteBackSettings(t *testing.T) {
	const secret = "Bearer hook-SECRET-7a2e"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hook"), []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		if k == "CREDENTIALS_DIRECTORY" {
			return dir
		}
		return ""
	}
	good := baseYAML + `  token: {env: T}
notify:
  events: [rejected, expiring]
  webhook:
    url: https://hooks.example/q
    secret_header: Authorization
    secret_file: ${CREDENTIALS_DIRECTORY}/hook
`
	good = strings.Replace(good, "  queries:\n", "  write_back:\n    submitted: UPDATE j SET s = :status WHERE job = :job\n  queries:\n", 1)
	fc, err := Parse(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	set, err := fc.Build(BuildOptions{Getenv: env, Scope: RemoteSecrets})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	n := set.Daemon.Notify
	if n.Webhook.Secret != secret || n.Webhook.Header != "Authorization" || strings.Join(n.Events, ",") != "rejected,expiring" {
		t.Errorf("notify = %+v", n)
	}
	if set.WebhookSecretFrom != "file ${CREDENTIALS_DIRECTORY}/hook" {
		t.Errorf("WebhookSecretFrom = %q", set.WebhookSecretFrom)
	}
	if wb := set.Daemon.Shop.WriteBack; len(wb) != 1 || !strings.Contains(wb[shopdb.WriteBackSubmitted], ":status") {
		t.Errorf("shop.write_back = %v, want the submitted statement only", wb)
	}

	for name, c := range map[string]struct{ yaml, want string }{
		"SecretInYAML":      {"notify:\n  webhook: {url: https://h.example, secret_header: X, secret: s}\n", "notify.webhook.secret: a secret must not be written in the YAML"},
		"HeaderNoSecret":    {"notify:\n  webhook: {url: https://h.example, secret_header: X}\n", "notify.webhook.secret_header: set notify.webhook.secret_file or secret_env"},
		"SecretNoHeader":    {"notify:\n  webhook: {url: https://h.example, secret_env: S}\n", "set notify.webhook.secret_header"},
		"NotAURL":           {"notify:\n  webhook: {url: \"ftp://h.example/x?token=abc\"}\n", "notify.webhook.url: ftp://h.example/… is not an http(s) URL"},
		"UnknownEvent":      {"notify:\n  events: [held]\n", "notify.events: \"held\" is not a notice"},
		"UnknownWriteBack":  {strings.Replace(baseYAML, "  queries:\n", "  write_back:\n    declined: UPDATE j SET s = 1\n  queries:\n", 1), "unknown key declined"},
		"WriteBackBadParam": {strings.Replace(baseYAML, "  queries:\n", "  write_back:\n    gone: UPDATE j SET s = :expiry\n  queries:\n", 1), "shop.write_back.gone: unknown parameter :expiry"},
	} {
		t.Run(name, func(t *testing.T) {
			yml := c.yaml
			if !strings.HasPrefix(yml, "shop:") {
				yml = baseYAML + "  token: {env: T}\n" + yml
			} else {
				yml += "  token: {env: T}\n"
			}
			fc, err := Parse(strings.NewReader(yml))
			if err == nil {
				_, err = fc.Build(BuildOptions{Getenv: func(string) string { return "" }, Scope: NoSecrets})
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want %q", err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "abc") {
				t.Errorf("the error shows the URL's query: %v", err)
			}
		})
	}
}
