package config

import (
	"errors"
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
	m := map[string]string{}
	for k, v := range map[string]string{
		shopdb.WriteBackAccepted: w.Accepted, shopdb.WriteBackDraftPushed: w.DraftPushed,
		shopdb.WriteBackSubmitted: w.Submitted, shopdb.WriteBackRejected: w.Rejected,
		shopdb.WriteBackTakenElsewhere: w.TakenElsewhere, shopdb.WriteBackSupplementNeeded: w.SupplementNeeded,
		shopdb.WriteBackGone: w.Gone, shopdb.WriteBackRetried: w.Retried,
	} {
		if v != "" {
			m[k] = v
		}
	}
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
// a file or a variable, never from the YAML.
type WebhookSection struct {
	URL          string        `yaml:"url"`
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

// buildNotify turns notify into the daemon's NotifyConfig, reading the
// webhook's secret when secrets is set.
func (c *File) buildNotify(s *Settings, getenv func(string) string, secrets bool) error {
	n, w := c.Notify, c.Notify.Webhook
	if w.Secret != "" {
		return errors.New("notify.webhook.secret: a secret must not be written in the YAML; use notify.webhook.secret_file (e.g. ${CREDENTIALS_DIRECTORY}/webhook-secret) or secret_env")
	}
	hasSecret := w.SecretFile != "" || w.SecretEnv != ""
	switch {
	case w.SecretHeader != "" && !hasSecret:
		return errors.New("notify.webhook.secret_header: set notify.webhook.secret_file or secret_env for its value")
	case w.SecretHeader == "" && hasSecret:
		return errors.New("notify.webhook.secret_file/secret_env: set notify.webhook.secret_header, the header that carries it (e.g. Authorization)")
	case w.SecretHeader != "" && w.URL == "":
		return errors.New("notify.webhook.secret_header: set notify.webhook.url too, or remove the webhook's keys")
	}
	cfg := qsync.NotifyConfig{
		Events:        n.Events,
		ExpiryWarning: n.ExpiryWarning,
		Webhook:       qsync.WebhookConfig{URL: w.URL, Timeout: w.Timeout, Header: w.SecretHeader},
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
