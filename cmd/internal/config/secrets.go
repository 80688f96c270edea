package config

import "github.com/quotesync/quotesync/cmd/internal/redact"

// redactor is the set of the secret values Build could read, for
// Settings.Redact: the database password and the webhook's secret (read
// already), and with remote set every insurer's token from its file or
// variable, or its OAuth2 client secret. A value that cannot be read now
// is left out: whoever uses it says why.
func (c *File) redactor(s *Settings, getenv func(string) string, remote bool) *redact.Secrets {
	r := redact.New(s.Daemon.Shop.Password, s.Daemon.Notify.Webhook.Secret)
	if !remote {
		return r
	}
	read := func(key, file, env string) {
		if v, err := readSecret(key, file, env, getenv, true); err == nil {
			r.Add(v)
		}
	}
	for _, b := range c.remoteBlocks() {
		switch t := b.r.Token; {
		case t.File != "" || t.Env != "":
			read(b.key+".token", t.File, t.Env)
		case t.OAuth2 != nil:
			read(b.key+".token.oauth2.client_secret", t.OAuth2.ClientSecretFile, t.OAuth2.ClientSecretEnv)
		}
	}
	return r
}
