package main

import (
	"strings"
	"testing"

	"github.com/quotesync/quotesync/cmd/internal/config"
)

// webhookKey is the key a webhook URL carries in its path.
const webhookKey = "T0001/B0002/k3yXXXXsecretXXXXk3y24"

// TestWebhookURLShownWithoutItsKey: the real binary's check and config
// show a webhook URL as where it goes, never its path; a URL read from
// url_file is named by its file, and one written in the YAML is accepted
// with a warning that the file holds a secret.
func TestWebhookURLShownWithoutItsKey(t *testing.T) {
	t.Parallel()
	const hook = "https://hooks.example.com/services/" + webhookKey
	for _, tt := range []struct {
		name          string
		edit          func(fc *config.File)
		check, config []string // what check and config say of it
	}{
		{"InTheYAML", func(fc *config.File) { fc.Notify.Webhook.URL = hook },
			[]string{"warn  notify.webhook.url", "https://hooks.example.com/… is written in the YAML, which should hold no secret", "url_file"},
			[]string{"https://hooks.example.com/…", "its path and query are a secret, not shown"}},
		{"FromAFile", func(fc *config.File) { fc.Notify.Webhook.URLFile = "${CREDENTIALS_DIRECTORY}/webhook-url" },
			[]string{"webhook URL from file ", "webhook POST https://hooks.example.com/…"},
			[]string{"(secret, not shown)", "named by notify.webhook.url_file"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newCLIEnv(t, tt.edit)
			e.writeSecret("webhook-url", hook)
			for _, verb := range []string{"check", "config"} {
				r := e.run(verb, "--config", e.Conf)
				out := r.Stdout + r.Stderr
				if strings.Contains(out, "k3yXXXX") || strings.Contains(out, "T0001") {
					t.Errorf("quotesync %s shows the webhook URL's path:\n%s", verb, r)
				}
				want := tt.config
				if verb == "check" {
					want = tt.check
				}
				for _, w := range want {
					if !strings.Contains(out, w) {
						t.Errorf("quotesync %s lacks %q:\n%s", verb, w, r)
					}
				}
			}
		})
	}
}
