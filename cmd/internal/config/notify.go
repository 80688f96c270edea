package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/quotesync/quotesync/shopdb"
	qsync "github.com/quotesync/quotesync/sync"
)

// WriteBackSection is shop.write_back: the optional statement run in the
// shop's database after each kind of event.
type WriteBackSection struct {
	Accepted         string `yaml:"accepted"`
	DraftPushed      string `yaml:"draft_pushed"`
	Submitted        string `yaml:"submitted"`
	Rejected         string `yaml:"rejected"`
	TakenElsewhere   string `yaml:"taken_elsewhere"`
	SupplementNeeded string `yaml:"supplement_needed"`
	Gone             string `yaml:"gone"`
	Retried          string `yaml:"retried"`
}

// statements are the set statements by kind (shopdb.WriteBackKinds).
func (w WriteBackSection) statements() map[string]string {
	m := map[string]string{
		shopdb.WriteBackAccepted: w.Accepted, shopdb.WriteBackDraftPushed: w.DraftPushed,
		shopdb.WriteBackSubmitted: w.Submitted, shopdb.WriteBackRejected: w.Rejected,
		shopdb.WriteBackTakenElsewhere: w.TakenElsewhere, shopdb.WriteBackSupplementNeeded: w.SupplementNeeded,
		shopdb.WriteBackGone: w.Gone, shopdb.WriteBackRetried: w.Retried,
	}
	maps.DeleteFunc(m, func(_, v string) bool { return v == "" })
	return m
}

// NotifySection is notify: who is told of the events that need a person.
type NotifySection struct {
	Events        []string       `yaml:"events"`
	ExpiryWarning time.Duration  `yaml:"expiry_warning"`
	Webhook       WebhookSection `yaml:"webhook"`
	Command       CommandSection `yaml:"command"`
}

// WebhookSection is notify.webhook. The secret header's value comes from
// a file or a variable, never from the YAML; so may the URL, whose path
// and query are a secret (Slack, Teams and Discord put the key there).
type WebhookSection struct {
	URL          string        `yaml:"url"`
	URLFile      string        `yaml:"url_file"`
	URLEnv       string        `yaml:"url_env"`
	Timeout      time.Duration `yaml:"timeout"`
	SecretHeader string        `yaml:"secret_header"`
	SecretFile   string        `yaml:"secret_file"`
	SecretEnv    string        `yaml:"secret_env"`
	Secret       string        `yaml:"secret"` // refused
}

// CommandSection is notify.command.
type CommandSection struct {
	Path    string        `yaml:"path"`
	Args    []string      `yaml:"args"`
	Timeout time.Duration `yaml:"timeout"`
}

// WebhookURLInYAML is Settings.WebhookURLFrom of a URL written in the
// YAML (notify.webhook.url).
const WebhookURLInYAML = "the YAML (notify.webhook.url)"

// buildNotify turns notify into the daemon's NotifyConfig, reading the
// webhook's secret and its URL from a file or a variable when the scope
// reads the remote's secrets (the URL also, as far as it can be read,
// with the shop's: a verb that changes state queues for the webhook).
func (c *File) buildNotify(s *Settings, getenv func(string) string, scope Scope) error {
	n, w := c.Notify, c.Notify.Webhook
	secrets := scope&RemoteSecrets != 0
	if w.Secret != "" {
		return errors.New("notify.webhook.secret: a secret must not be written in the YAML; use notify.webhook.secret_file (e.g. ${CREDENTIALS_DIRECTORY}/webhook-secret) or secret_env")
	}
	hasSecret := w.SecretFile != "" || w.SecretEnv != ""
	urls := len(slices.DeleteFunc([]string{w.URL, w.URLFile, w.URLEnv}, func(v string) bool { return v == "" }))
	switch {
	case urls > 1:
		return errors.New("notify.webhook.url, url_file and url_env: set one (url_file or url_env keep the URL's key out of the YAML)")
	case w.SecretHeader != "" && !hasSecret:
		return errors.New("notify.webhook.secret_header: set notify.webhook.secret_file or secret_env for its value")
	case w.SecretHeader == "" && hasSecret:
		return errors.New("notify.webhook.secret_file/secret_env: set notify.webhook.secret_header, the header that carries it (e.g. Authorization)")
	case w.SecretHeader != "" && urls == 0:
		return errors.New("notify.webhook.secret_header: set notify.webhook.url_file (or url_env, or url) too, or remove the webhook's keys")
	}
	url := w.URL
	switch {
	case w.URL != "":
		s.WebhookURLFrom = WebhookURLInYAML
	case w.URLFile != "":
		s.WebhookURLFrom = "file " + w.URLFile
	case w.URLEnv != "":
		s.WebhookURLFrom = "environment variable " + w.URLEnv
	}
	if w.URLFile != "" || w.URLEnv != "" {
		switch v, err := readSecret("notify.webhook.url", w.URLFile, w.URLEnv, getenv, false); {
		case secrets && err != nil:
			return err
		case secrets || scope&ShopSecrets != 0 && err == nil:
			url = v
		}
		if p, err := expandPath("notify.webhook.url_file", w.URLFile, getenv); w.URLFile != "" && err == nil {
			s.WebhookURLFrom = "file " + p
		}
	}
	if hasSecret || w.URLFile != "" || w.URLEnv != "" {
		// A secret header, or a key the URL carries (why it is kept out
		// of the YAML), must not cross the network in clear.
		if err := inClearURL(url, "the webhook's secret"); err != nil {
			return fmt.Errorf("notify.webhook.url: %w", err)
		}
	}
	cfg := qsync.NotifyConfig{
		Events:        n.Events,
		ExpiryWarning: n.ExpiryWarning,
		Webhook:       qsync.WebhookConfig{URL: url, Timeout: w.Timeout, Header: w.SecretHeader},
		Command:       qsync.CommandConfig{Path: n.Command.Path, Args: n.Command.Args, Timeout: n.Command.Timeout},
	}
	if hasSecret {
		s.WebhookSecretFrom = "environment variable " + w.SecretEnv
		if w.SecretFile != "" {
			s.WebhookSecretFrom = "file " + w.SecretFile
		}
		if secrets {
			v, err := readSecret("notify.webhook.secret", w.SecretFile, w.SecretEnv, getenv, false)
			if err != nil {
				return err
			}
			cfg.Webhook.Secret = v
		}
	}
	s.Daemon.Notify = cfg
	return cfg.Validate()
}
