package config

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/quotesync/quotesync/remote"
)

// remoteKeys maps the fields of remote.Config that the file sets to their
// keys, so that an error of remote.New reads in the file's words.
var remoteKeys = map[string]string{
	"BaseURL":           "remote.base_url",
	"Timeout":           "remote.timeout",
	"MaxAttempts":       "remote.max_attempts",
	"BackoffInitial":    "remote.backoff_initial",
	"BackoffMax":        "remote.backoff_max",
	"RateLimit":         "remote.rate_limit",
	"Burst":             "remote.burst",
	"MaxBodyBytes":      "remote.max_body_bytes",
	"DraftUpdate":       "remote.draft_update",
	"StatusMethod":      "remote.status_method",
	"StatusPath":        "remote.status_path",
	"BookingDateLayout": "remote.booking_date_layout",
}

// buildRemote checks the remote section and turns it into remote.Config
// and a token source (when secrets is set). Every invalid key is reported
// by its name in the file, so that a bad value stops every verb with exit
// status 2 before anything is migrated or called.
func (c *File) buildRemote(s *Settings, getenv func(string) string, secrets bool, userAgent string) error {
	r := c.Remote
	s.Daemon.Remote = remote.Config{
		BaseURL:           r.BaseURL,
		UserAgent:         userAgent,
		Timeout:           r.Timeout,
		MaxAttempts:       r.MaxAttempts,
		BackoffInitial:    r.BackoffInitial,
		BackoffMax:        r.BackoffMax,
		RateLimit:         r.RateLimit,
		Burst:             r.Burst,
		MaxBodyBytes:      r.MaxBodyBytes,
		DraftUpdate:       strings.ToLower(r.DraftUpdate),
		StatusMethod:      strings.ToUpper(r.StatusMethod),
		StatusPath:        r.StatusPath,
		BookingDateLayout: r.BookingDateLayout,
	}
	errs := validateRemote(r)
	if len(errs) == 0 {
		// remote.New is the authority on its Config: a check it adds
		// later still stops the file here, in the file's words.
		if _, err := remote.New(s.Daemon.Remote, remote.StaticToken("")); err != nil {
			errs = append(errs, remoteConfigError(err))
		}
	}
	tokens, from, err := buildToken(r.Token, getenv, secrets)
	errs = append(errs, err)
	s.Daemon.Tokens, s.TokenFrom = tokens, from
	return errors.Join(errs...)
}

// validateRemote checks every key of the remote section but the token,
// naming each key and its fix.
func validateRemote(r RemoteSection) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if r.BaseURL == "" {
		add("remote.base_url: required, e.g. https://api.insurer.example")
	} else if u, err := url.Parse(r.BaseURL); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		add("remote.base_url: %q must be an http(s) URL such as https://api.insurer.example", redactURL(r.BaseURL))
	} else if u.User != nil {
		add("remote.base_url: %q must not hold a user or password; the token comes from remote.token", u.Redacted())
	} else if u.RawQuery != "" || u.Fragment != "" {
		add("remote.base_url: %q must have no query (?…) or fragment (#…)", u.Redacted())
	}
	durations := []struct {
		key string
		v   time.Duration
		def time.Duration
	}{
		{"remote.timeout", r.Timeout, remote.DefaultTimeout},
		{"remote.backoff_initial", r.BackoffInitial, remote.DefaultBackoffInitial},
		{"remote.backoff_max", r.BackoffMax, remote.DefaultBackoffMax},
	}
	for _, d := range durations {
		if d.v < 0 {
			add("%s: %s must not be negative; 0 or no key means the default, %s", d.key, d.v, d.def)
		}
	}
	initial, maxWait := cmp.Or(r.BackoffInitial, remote.DefaultBackoffInitial), cmp.Or(r.BackoffMax, remote.DefaultBackoffMax)
	if r.BackoffInitial >= 0 && r.BackoffMax >= 0 && maxWait < initial {
		add("remote.backoff_max: %s is shorter than remote.backoff_initial (%s); raise backoff_max or lower backoff_initial", maxWait, initial)
	}
	if r.MaxAttempts < 0 {
		add("remote.max_attempts: %d must not be negative; 1 means no retry, 0 or no key the default, %d", r.MaxAttempts, remote.DefaultMaxAttempts)
	}
	if math.IsNaN(r.RateLimit) {
		add("remote.rate_limit: must be a number of calls per second (negative: unlimited; 0 or no key: the default, %d)", remote.DefaultRateLimit)
	}
	if r.Burst < 0 {
		add("remote.burst: %d must not be negative; 0 or no key means the default, %d", r.Burst, remote.DefaultBurst)
	}
	if r.MaxBodyBytes < 0 {
		add("remote.max_body_bytes: %d must not be negative; 0 or no key means the default, %d", r.MaxBodyBytes, remote.DefaultMaxBodyBytes)
	}
	switch strings.ToLower(r.DraftUpdate) {
	case "", remote.DraftUpdateRepost, remote.DraftUpdatePut:
	default:
		add("remote.draft_update: %q must be %s or %s", r.DraftUpdate, remote.DraftUpdateRepost, remote.DraftUpdatePut)
	}
	switch strings.ToUpper(r.StatusMethod) {
	case "", "PUT", "POST":
	default:
		add("remote.status_method: %q must be PUT or POST", r.StatusMethod)
	}
	if err := validateStatusPath(r.StatusPath); err != nil {
		errs = append(errs, err)
	}
	if err := validateDateLayout(r.BookingDateLayout); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// statusPaths are the values remote.status_path takes.
var statusPaths = []string{remote.StatusPathQuotesID, remote.StatusPathQuoteID,
	remote.StatusPathQuotesStatus, remote.StatusPathQuoteStatus, remote.StatusPathAuto}

// validateStatusPath checks remote.status_path.
func validateStatusPath(p string) error {
	if p == "" {
		return nil
	}
	for _, ok := range statusPaths {
		if p == ok {
			return nil
		}
	}
	return fmt.Errorf("remote.status_path: %q must be one of %s", p, strings.Join(statusPaths, ", "))
}

// validateDateLayout checks that remote.booking_date_layout writes a whole
// date (year, month and day) that reads back as the same date.
func validateDateLayout(layout string) error {
	if layout == "" {
		return nil
	}
	want := time.Date(2031, time.November, 23, 0, 0, 0, 0, time.UTC)
	got, err := time.Parse(layout, want.Format(layout))
	if err != nil || got.Year() != want.Year() || got.Month() != want.Month() || got.Day() != want.Day() {
		return fmt.Errorf("remote.booking_date_layout: %q is not a Go time layout of a whole date (year, month and day); write it with Go's reference date, e.g. 2006-01-02 (the default) or 02/01/2006", layout)
	}
	return nil
}

// remoteConfigError rewrites an error of remote.New about a field of
// remote.Config (a *remote.ConfigError) to name the field's key.
func remoteConfigError(err error) error {
	var ce *remote.ConfigError
	if errors.As(err, &ce) {
		if key, ok := remoteKeys[ce.Field]; ok {
			return fmt.Errorf("%s: %w", key, ce.Err)
		}
	}
	return fmt.Errorf("remote: %w", err)
}

// redactURL hides the user information of a URL that does not parse well
// enough for url.Redacted: what precedes the last "@" of the authority.
func redactURL(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	authority, path, slash := strings.Cut(rest, "/")
	i := strings.LastIndex(authority, "@")
	if i < 0 {
		return s
	}
	out := scheme + "://xxxxx@" + authority[i+1:]
	if slash {
		out += "/" + path
	}
	return out
}

// buildToken checks the token section and, when secrets is set, makes the
// token source (a file or a variable is read when the token is used).
func buildToken(t TokenSection, getenv func(string) string, secrets bool) (remote.TokenSource, string, error) {
	if t.Value != "" {
		return nil, "", errors.New("remote.token.value: the token must not be written in the YAML; put it in a file (remote.token.file, e.g. ${CREDENTIALS_DIRECTORY}/token) or an environment variable (remote.token.env)")
	}
	n := 0
	for _, set := range []bool{t.File != "", t.Env != "", t.OAuth2 != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, "", errors.New("remote.token: set exactly one of file (e.g. ${CREDENTIALS_DIRECTORY}/token), env (a variable name) or oauth2")
	}
	switch {
	case t.File != "":
		if !secrets {
			return nil, "file " + t.File, nil
		}
		path, err := expandPath("remote.token.file", t.File, getenv)
		if err != nil {
			return nil, "", err
		}
		return remote.FileToken(path), "file " + path, nil
	case t.Env != "":
		return envToken{name: t.Env, getenv: getenv}, "environment variable " + t.Env, nil
	}
	o := t.OAuth2
	if o.ClientSecret != "" {
		return nil, "", errors.New("remote.token.oauth2.client_secret: the secret must not be written in the YAML; use client_secret_file (e.g. ${CREDENTIALS_DIRECTORY}/token) or client_secret_env")
	}
	var errs []error
	if u, err := url.Parse(o.TokenURL); o.TokenURL == "" || err != nil || u.Host == "" {
		errs = append(errs, fmt.Errorf("remote.token.oauth2.token_url: %q must be the URL of the token endpoint", o.TokenURL))
	}
	if o.ClientID == "" {
		errs = append(errs, errors.New("remote.token.oauth2.client_id: required"))
	}
	if (o.ClientSecretFile == "") == (o.ClientSecretEnv == "") {
		errs = append(errs, errors.New("remote.token.oauth2: set one of client_secret_file and client_secret_env"))
	}
	if o.ExpiryLeeway < 0 {
		errs = append(errs, errors.New("remote.token.oauth2.expiry_leeway: must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, "", err
	}
	from := "oauth2 client credentials at " + o.TokenURL
	if !secrets {
		return nil, from, nil
	}
	secret, err := readSecret("remote.token.oauth2.client_secret", o.ClientSecretFile, o.ClientSecretEnv, getenv, false)
	if err != nil {
		return nil, "", err
	}
	params := url.Values{}
	for k, v := range o.EndpointParams {
		params.Set(k, v)
	}
	cc := remote.ClientCredentialsConfig{
		TokenURL: o.TokenURL, ClientID: o.ClientID, ClientSecret: secret,
		Scopes: o.Scopes, EndpointParams: params, ExpiryLeeway: o.ExpiryLeeway,
	}
	if o.ClientSecretFile != "" {
		// Read at every token fetch: a secret fixed on disk after a
		// refusal is used at the next attempt, without a reload.
		cc.SecretFunc = func() (string, error) {
			return readSecret("remote.token.oauth2.client_secret", o.ClientSecretFile, "", getenv, false)
		}
	}
	return remote.ClientCredentials(cc), from, nil
}

// envToken reads the token from an environment variable (through Build's
// Getenv) at every call, trimmed; an unset or empty variable is an error
// naming it, never a token.
type envToken struct {
	name   string
	getenv func(string) string
}

func (e envToken) Token(context.Context) (string, error) {
	if v := strings.TrimSpace(e.getenv(e.name)); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("read token from environment variable %s: unset or empty", e.name)
}

func (envToken) Invalidate() {}
