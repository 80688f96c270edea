package config

import (
	"context"

	"github.com/quotesync/quotesync/internal/redact"
	"github.com/quotesync/quotesync/remote"
)

// redactor is the set of the secret values Build could read, for
// Settings.Redact: the database password and the webhook's secret (read
// already), and with remote set every insurer's token from its file or
// variable, or its OAuth2 client secret, also as the client's HTTP Basic
// header carries it. A value that cannot be read now is left out: whoever
// uses it says why.
func (c *File) redactor(s *Settings, getenv func(string) string, remote bool) *redact.Secrets {
	r := redact.New(s.Daemon.Shop.Password, s.Daemon.Notify.Webhook.Secret)
	if !remote {
		return r
	}
	read := func(key, file, env string) string {
		v, err := readSecret(key, file, env, getenv, true)
		if err != nil {
			return ""
		}
		r.Add(v)
		return v
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
	return r
}

// redactFileTokens makes each insurer's token file add every token it
// reads to the redaction set: one rotated while the daemon runs is
// redacted from its first use, not from the next reload. The set is the
// one s.Redact holds when the token is read (run puts the daemon's own
// set there before it opens the daemon of a reload). Only the file: an
// environment variable does not change under a running process, and
// OAuth2 access tokens would pile up, one per expiry.
func (c *File) redactFileTokens(s *Settings) {
	blocks := c.remoteBlocks()
	for i := range s.Daemon.Insurers {
		ins := &s.Daemon.Insurers[i]
		if i >= len(blocks) || blocks[i].r.Token.File == "" || ins.Tokens == nil {
			continue
		}
		ins.Tokens = redactedTokens{TokenSource: ins.Tokens, set: func() *redact.Secrets { return s.Redact }}
	}
}

// redactedTokens adds each token its source hands out to set().
type redactedTokens struct {
	remote.TokenSource
	set func() *redact.Secrets
}

// Token implements remote.TokenSource.
func (r redactedTokens) Token(ctx context.Context) (string, error) {
	tok, err := r.TokenSource.Token(ctx)
	if set := r.set(); err == nil && set != nil {
		set.Add(tok) // a no-op but for a new value
	}
	return tok, err
}
