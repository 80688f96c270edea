package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// ErrNotConfigured marks what Configured finds missing.
var ErrNotConfigured = errors.New("not configured yet")

// Configured tells a configuration that is still the installed example
// from one that is merely wrong: nil when the remote's address is set and
// the token (or the OAuth2 client secret) is in place and not empty, an
// error wrapping ErrNotConfigured that names what is missing otherwise.
// Anything else that is wrong is left to the start, which names it.
func (c *File) Configured(getenv func(string) string) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, b := range c.remoteBlocks() {
		if err := configuredRemote(b.key, b.r, getenv); err != nil {
			return err
		}
	}
	return nil
}

// StillExample reports whether a remote's address is still the installed
// example's: a file that no daemon runs with yet.
func (c *File) StillExample() bool {
	for _, b := range c.remoteBlocks() {
		if exampleURL(b.r.BaseURL) {
			return true
		}
	}
	return false
}

// exampleURL reports whether base is an address under .example.
func exampleURL(base string) bool {
	u, err := url.Parse(base)
	return err == nil && strings.HasSuffix(u.Hostname(), ".example")
}

// configuredRemote is Configured for one remote block, under key.
func configuredRemote(key string, r RemoteSection, getenv func(string) string) error {
	if exampleURL(r.BaseURL) {
		return fmt.Errorf("%w: %s.base_url is still the example's (%s): write the insurer's address", ErrNotConfigured, key, r.BaseURL)
	}
	t := r.Token
	key, file, env := key+".token", t.File, t.Env
	if t.OAuth2 != nil {
		key, file, env = key+".oauth2.client_secret", t.OAuth2.ClientSecretFile, t.OAuth2.ClientSecretEnv
	}
	switch {
	case file != "":
		path, err := expandPath(key+"_file", file, getenv)
		if err != nil {
			return nil // the start names it
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) || (err == nil && strings.TrimSpace(string(b)) == "") {
			return fmt.Errorf("%w: %s (%s) is missing or empty", ErrNotConfigured, path, key)
		}
	case env != "":
		if strings.TrimSpace(getenv(env)) == "" {
			return fmt.Errorf("%w: the environment variable %s (%s) is not set", ErrNotConfigured, env, key)
		}
	}
	return nil
}
