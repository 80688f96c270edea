package config

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"go.uber.org/zap/zapcore"

	"github.com/quotesync/quotesync/remote/redact"
	"github.com/quotesync/quotesync/shopdb"
	qsync "github.com/quotesync/quotesync/sync"
)

// Settings are what a configuration file says: each package's configuration
// (Daemon), secrets resolved, and the command's own sections.
type Settings struct {
	Daemon       qsync.Settings // the insurers' Tokens are nil when the remote secrets were not read
	TokenFrom    string         // where the first insurer's token comes from, for check (never the token)
	PasswordFrom string         // where the database password comes from ("" when none)
	LogLevel     zapcore.Level
	LogFormat    string // json or console
	Metrics      MetricsSection
	Listener     ListenerAuth // who the metrics listener lets in
	// WebhookSecretFrom says where notify.webhook's secret comes from, for
	// check (never the secret); "" when none.
	WebhookSecretFrom string
	// WebhookURLFrom says where notify.webhook's URL comes from, for
	// check and config (never its path or query): WebhookURLInYAML, "file
	// PATH" or "environment variable NAME"; "" when there is no webhook.
	WebhookURLFrom string
	Control        ControlSection
	// Site is the site of the template unit the file was read for
	// (File.SetSite); "" for none.
	Site         string
	SingleWriter bool // shop.single_writer: every instance writes to one server of a cluster
}

// Scope says which secrets Build must read, an error when it cannot
// (status and retry need the database password only). The redaction set
// (Daemon.Secrets) gets every secret Build can read, whatever the scope.
type Scope uint8

// Secret scopes of Build.
const (
	NoSecrets     Scope = 0
	RemoteSecrets Scope = 1 << iota // the token, or the OAuth2 client secret
	ShopSecrets                     // the database password
	AllSecrets    = RemoteSecrets | ShopSecrets
)

// BuildOptions say how Build reads the environment.
type BuildOptions struct {
	// Getenv reads environment variables (os.Getenv when nil): secrets
	// named by *_env keys, and ${VAR} in the paths of secret files.
	Getenv func(string) string
	// Scope says which secrets are read.
	Scope Scope
	// UserAgent names quotesync to the remote ("quotesync/<version>").
	UserAgent string
	// Secrets is the set Build adds every secret it can read to, and
	// hands on as Daemon.Secrets (a reload passes the running daemon's);
	// a new one when nil.
	Secrets *redact.Secrets
}

// Build validates the file and turns it into the packages' configs,
// reading the secrets of the scope from files and variables. Its errors
// name the key and where a secret should come from, never a secret. Every
// problem is reported.
func (c *File) Build(o BuildOptions) (*Settings, error) {
	getenv, scope := o.Getenv, o.Scope
	if getenv == nil {
		getenv = os.Getenv
	}
	s := &Settings{Daemon: qsync.Settings{Secrets: o.Secrets}}
	if s.Daemon.Secrets == nil {
		s.Daemon.Secrets = redact.New()
	}
	var errs []error
	add := func(err error) { errs = append(errs, err) } // errors.Join drops the nils

	add(c.buildInsurers(s, getenv, scope&RemoteSecrets != 0, o.UserAgent))
	add(c.buildShop(s, getenv, scope&ShopSecrets != 0))
	add(c.buildSync(s))
	add(c.buildNotify(s, getenv, scope))
	add(c.buildOps(s))
	c.addSecrets(s, getenv)
	s.Daemon.Shop.Redact = s.Daemon.Secrets // also for a verb that opens shopdb alone

	s.LogFormat = cmp.Or(strings.ToLower(c.Log.Format), defaultLogFormat)
	if s.LogFormat != "json" && s.LogFormat != "console" {
		add(fmt.Errorf("log.format: %q is not a format; use json (for journald) or console", c.Log.Format))
	}
	if err := s.LogLevel.UnmarshalText([]byte(strings.ToLower(cmp.Or(c.Log.Level, defaultLogLevel)))); err != nil || s.LogLevel > zapcore.ErrorLevel {
		add(fmt.Errorf("log.level: %q is not a level; use debug, info, warn or error", c.Log.Level))
	}
	s.Metrics = c.Metrics
	var err error
	s.Listener, err = c.Metrics.Listener()
	add(err)
	if s.Metrics.HealthMaxAge < 0 {
		add(errors.New("metrics.health_max_age: must not be negative (0 means three activations of sync.schedule)"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

func (c *File) buildShop(s *Settings, getenv func(string) string, secrets bool) error {
	sh := c.Shop
	if sh.Password != "" {
		return errors.New("shop.password: the password must not be written in the YAML; use shop.password_file (e.g. ${CREDENTIALS_DIRECTORY}/db-password) or shop.password_env")
	}
	if sh.PasswordFile != "" && sh.PasswordEnv != "" {
		return errors.New("shop.password_file and shop.password_env: set one, not both")
	}
	var password string
	switch {
	case sh.PasswordFile != "":
		s.PasswordFrom = "file " + sh.PasswordFile
	case sh.PasswordEnv != "":
		s.PasswordFrom = "environment variable " + sh.PasswordEnv
	}
	if secrets && s.PasswordFrom != "" {
		p, err := readSecret("shop.password", sh.PasswordFile, sh.PasswordEnv, getenv, true)
		if err != nil {
			return err
		}
		password = p
		if sh.PasswordFile != "" {
			path, _ := expandPath("shop.password_file", sh.PasswordFile, getenv) // it expanded in readSecret
			s.PasswordFrom = "file " + path
		}
	}
	copyFields(&s.Daemon.Shop, sh)
	s.Daemon.Shop.Password, s.Daemon.Shop.PasswordFrom = password, s.PasswordFrom
	// Zero values: the defaults; shopdb validates them.
	s.Daemon.Shop.Limits = shopdb.Limits{MaxQuantity: sh.Limits.MaxQuantity.Decimal, MaxPrice: sh.Limits.MaxPrice.Decimal,
		MaxDigits: sh.Limits.MaxDigits}
	s.Daemon.Shop.WriteBack = sh.WriteBack.statements()
	// The same fields in the same order: a query added to one and not the
	// other does not compile.
	s.Daemon.Shop.Queries = shopdb.Queries(sh.Queries)
	return s.Daemon.Shop.Validate()
}

// location is sync.time_zone's; time.Local on error.
func (sy SyncSection) location() (*time.Location, error) {
	if sy.TimeZone == "" {
		return time.Local, nil
	}
	l, err := time.LoadLocation(sy.TimeZone) // "Local" too
	return cmp.Or(l, time.Local), err
}

func (c *File) buildSync(s *Settings) error {
	sy := c.Sync
	loc, err := sy.location()
	if err != nil {
		return fmt.Errorf("sync.time_zone: %q is not a time zone; use an IANA name such as Europe/London, or Local", sy.TimeZone)
	}
	rates := make(map[string]decimal.Decimal, len(c.Quote.Rates))
	for k, v := range c.Quote.Rates {
		rates[k] = v.Decimal
	}
	s.Daemon.Sync = qsync.Config{Location: loc}
	copyFields(&s.Daemon.Sync, sy)
	copyFields(&s.Daemon.Sync.Quote, c.Quote)
	s.Daemon.Sync.Quote.Rates = rates
	return s.Daemon.Sync.Validate()
}

// copyFields sets each field of *dst that src, a section of the file, has
// by the same name and type: the keys a package takes as they are. The
// rest (another type, a value derived) the caller sets.
func copyFields(dst, src any) {
	d, sv := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src)
	for i := range sv.NumField() {
		if f := d.FieldByName(sv.Type().Field(i).Name); f.IsValid() && f.Type() == sv.Field(i).Type() {
			f.Set(sv.Field(i))
		}
	}
}

// readSecret reads a secret from a file (trimmed) or an environment
// variable; key names the setting in errors, which never hold the secret.
// allowEmpty accepts an empty file (a database user that logs in by
// unix_socket has no password, but LoadCredential= needs a file).
func readSecret(key, file, env string, getenv func(string) string, allowEmpty bool) (string, error) {
	switch {
	case file != "" && env != "":
		return "", fmt.Errorf("%s_file and %s_env: set one, not both", key, key)
	case file != "":
		path, err := expandPath(key+"_file", file, getenv)
		if err != nil {
			return "", err
		}
		b, err := readSmall(path, maxSecretFile)
		if errors.Is(err, errTooLarge) {
			return "", fmt.Errorf("%s_file: %s is larger than %d KiB; a secret is one line: is this the right file?", key, path, maxSecretFile>>10)
		}
		if err != nil {
			return "", fmt.Errorf("%s_file: %w", key, err) // the *os.PathError names the path
		}
		v := strings.TrimSpace(string(b))
		if v == "" && !allowEmpty {
			return "", fmt.Errorf("%s_file: %s is empty; write the secret into it", key, path)
		}
		return v, nil
	case env != "":
		v := strings.TrimSpace(getenv(env))
		if v == "" {
			return "", fmt.Errorf("%s_env: the environment variable %s is not set or empty", key, env)
		}
		return v, nil
	}
	return "", fmt.Errorf("%s: set %s_file or %s_env", key, key, key)
}

// maxSecretFile caps the size of a secret file: a secret is one line.
const maxSecretFile = 64 << 10

var errTooLarge = errors.New("file too large")

// readSmall reads a file of at most limit bytes; errTooLarge when it is
// larger (it is not read whole).
func readSmall(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errTooLarge
	}
	return b, nil
}

// expandPath expands ${VAR} in a secret file's path (systemd sets
// CREDENTIALS_DIRECTORY for LoadCredential=).
func expandPath(key, path string, getenv func(string) string) (string, error) {
	out, missing := expand(path, getenv)
	if len(missing) > 0 {
		return "", fmt.Errorf("%s: %q uses ${%s}, which is not set (systemd sets CREDENTIALS_DIRECTORY for LoadCredential=; outside systemd run e.g. CREDENTIALS_DIRECTORY=/etc/quotesync/credentials quotesync …, or write the full path)", key, path, missing[0])
	}
	return out, nil
}

// expand is os.Expand of s by getenv, with the variables it found unset.
func expand(s string, getenv func(string) string) (out string, unset []string) {
	out = os.Expand(s, func(name string) string {
		v := getenv(name)
		if v == "" {
			unset = append(unset, name)
		}
		return v
	})
	return out, unset
}
