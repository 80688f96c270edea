package config

import (
	"github.com/quotesync/quotesync/remote/redact"
)

// addSecrets adds to the set (Daemon.Secrets) every secret value the
// file names that can be read now, whatever the scope: the database
// password, the webhook's secret and its URL's path and query, every
// insurer's token from its file or variable and its OAuth2 client secret
// (with the HTTP Basic header that carries it). A value that cannot be
// read now is left out: whoever uses it says why. The tokens a client
// sends later (a rotated file, each OAuth2 token) join as they are sent
// (remote.Config.Secrets, remote.ClientCredentialsConfig.Secrets).
func (c *File) addSecrets(s *Settings, getenv func(string) string) {
	r := s.Daemon.Secrets
	read := func(key, file, env string) string {
		if file == "" && env == "" {
			return ""
		}
		v, err := readSecret(key, file, env, getenv, true)
		if err != nil {
			return ""
		}
		r.Add(v)
		return v
	}
	r.Add(s.Daemon.Shop.Password, s.Daemon.Notify.Webhook.Secret)
	sh, w := c.Shop, c.Notify.Webhook
	read("shop.password", sh.PasswordFile, sh.PasswordEnv)
	read("notify.webhook.secret", w.SecretFile, w.SecretEnv)
	url := s.Daemon.Notify.Webhook.URL
	if url == "" {
		url = read("notify.webhook.url", w.URLFile, w.URLEnv)
	}
	if url != "" {
		r.Add(redact.URL(url)...)
	}
	for _, b := range c.remoteBlocks() {
		switch t := b.r.Token; {
		case t.File != "" || t.Env != "":
			read(b.key+".token", t.File, t.Env)
		case t.OAuth2 != nil:
			if v := read(b.key+".token.oauth2.client_secret", t.OAuth2.ClientSecretFile, t.OAuth2.ClientSecretEnv); v != "" {
				r.Add(redact.BasicAuth(t.OAuth2.ClientID, v)...)
			}
		}
	}
}
