package config

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/redact"
	qsync "github.com/quotesync/quotesync/sync"
)

// buildRemote checks one remote block, configured under key ("remote",
// "remotes[1]"), and turns it into remote.Config and a token source (when
// secrets is set; an OAuth2 source adds its client secret and tokens to
// set), saying where the token comes from. Every invalid key is reported
// by its name in the file.
func buildRemote(key string, r RemoteSection, getenv func(string) string, secrets bool, userAgent string, set *redact.Secrets) (qsync.Insurer, error) {
	ins := qsync.Insurer{Key: key, Remote: remote.Config{UserAgent: userAgent}}
	copyFields(&ins.Remote, r)
	ins.Remote.DraftUpdate, ins.Remote.StatusMethod = strings.ToLower(r.DraftUpdate), strings.ToUpper(r.StatusMethod)
	// remote.Config.Validate is the authority on its Config: its errors
	// by their keys, but where the file's own words said it already.
	errs := validateRemote(key, r)
	if err, ok := ins.Remote.Validate().(interface{ Unwrap() []error }); ok {
		for _, e := range err.Unwrap() {
			e = remoteConfigError(key, e)
			field, _, _ := strings.Cut(e.Error(), ":")
			if !slices.ContainsFunc(errs, func(x error) bool { return strings.HasPrefix(x.Error(), field+":") }) {
				errs = append(errs, e)
			}
		}
	}
	tokens, from, err := buildToken(key, r.Token, getenv, secrets, set)
	errs = append(errs, err)
	ins.Tokens, ins.TokenFrom = tokens, from
	return ins, errors.Join(errs...)
}

// validateRemote checks what remote.New cannot say in the file's words:
// base_url, the backoff's order, rate_limit and booking_date_layout.
func validateRemote(key string, r RemoteSection) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(key+"."+format, args...)) }
	if r.BaseURL == "" {
		add("base_url: required, e.g. https://api.insurer.example")
	} else if u, err := url.Parse(r.BaseURL); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		add("base_url: %q must be an http(s) URL such as https://api.insurer.example", redactURL(r.BaseURL))
	} else if u.User != nil {
		add("base_url: %q must not hold a user or password; the token comes from %s.token", u.Redacted(), key)
	} else if u.RawQuery != "" || u.Fragment != "" {
		add("base_url: %q must have no query (?…) or fragment (#…)", u.Redacted())
	} else if err := inClear(u, "the token"); err != nil {
		add("base_url: %w", err)
	}
	initial, maxWait := cmp.Or(r.BackoffInitial, remote.DefaultBackoffInitial), cmp.Or(r.BackoffMax, remote.DefaultBackoffMax)
	if r.BackoffInitial >= 0 && r.BackoffMax >= 0 && maxWait < initial {
		add("backoff_max: %s is shorter than %s.backoff_initial (%s); raise backoff_max or lower backoff_initial", maxWait, key, initial)
	}
	if math.IsNaN(r.RateLimit) {
		add("rate_limit: must be a number of calls per second (negative: unlimited; 0 or no key: the default, %d)", remote.DefaultRateLimit)
	}
	if err := validateDateLayout(r.BookingDateLayout); err != nil {
		add("%w", err)
	}
	return errs
}

// inClear refuses an http:// URL to a host beyond loopback: what goes
// there (what, e.g. "the token") would cross the network in clear.
func inClear(u *url.URL, what string) error {
	if u.Scheme != "http" || loopbackHost(u.Hostname()) {
		return nil
	}
	return fmt.Errorf("%q is plain http: %s would cross the network in clear; use https://%s (http:// only to loopback: 127.0.0.1, ::1, localhost)",
		u.Redacted(), what, u.Host+u.EscapedPath())
}

// inClearURL is inClear of a URL whose path and query may be secret (a
// webhook's): it names the host only. One that does not parse is left to
// the check that names it.
func inClearURL(raw, what string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || loopbackHost(u.Hostname()) {
		return nil
	}
	return fmt.Errorf("plain http to %s: %s would cross the network in clear; use https:// (http:// only to loopback: 127.0.0.1, ::1, localhost)", u.Host, what)
}

func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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
		return fmt.Errorf("booking_date_layout: %q is not a Go time layout of a whole date (year, month and day); write it with Go's reference date, e.g. 2006-01-02 (the default) or 02/01/2006", layout)
	}
	return nil
}

// remoteConfigError names the key of the field an error of remote.New is
// about, in the remote block configured under key.
func remoteConfigError(key string, err error) error {
	if ce, ok := errors.AsType[*remote.ConfigError](err); ok {
		// The fields of remote.Config the file sets are RemoteSection's.
		if f, ok := reflect.TypeFor[RemoteSection]().FieldByName(ce.Field); ok {
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			return fmt.Errorf("%s.%s: %w", key, name, ce.Err)
		}
	}
	return fmt.Errorf("%s: %w", key, err)
}

// redactURL hides the user information of a URL that does not parse well
// enough for url.Redacted.
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

// buildToken checks the token section of the remote block configured
// under key and, when secrets is set, makes the token source.
func buildToken(key string, t TokenSection, getenv func(string) string, secrets bool, set *redact.Secrets) (remote.TokenSource, string, error) {
	key += ".token"
	if t.Value != "" {
		return nil, "", fmt.Errorf("%s.value: the token must not be written in the YAML; put it in a file (%s.file, e.g. ${CREDENTIALS_DIRECTORY}/token) or an environment variable (%s.env)", key, key, key)
	}
	if n := len(slices.DeleteFunc([]bool{t.File != "", t.Env != "", t.OAuth2 != nil}, func(set bool) bool { return !set })); n != 1 {
		return nil, "", fmt.Errorf("%s: set exactly one of file (e.g. ${CREDENTIALS_DIRECTORY}/token), env (a variable name) or oauth2", key)
	}
	switch {
	case t.File != "":
		if !secrets {
			return nil, "file " + t.File, nil
		}
		path, err := expandPath(key+".file", t.File, getenv)
		if err != nil {
			return nil, "", err
		}
		return remote.FileToken(path), "file " + path, nil
	case t.Env != "":
		return remote.EnvToken(t.Env, getenv), "environment variable " + t.Env, nil
	}
	o := t.OAuth2
	key += ".oauth2"
	if o.ClientSecret != "" {
		return nil, "", fmt.Errorf("%s.client_secret: the secret must not be written in the YAML; use client_secret_file (e.g. ${CREDENTIALS_DIRECTORY}/token) or client_secret_env", key)
	}
	var errs []error
	if u, err := url.Parse(o.TokenURL); o.TokenURL == "" || err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		errs = append(errs, fmt.Errorf("%s.token_url: %q must be the https URL of the token endpoint", key, redactURL(o.TokenURL)))
	} else if err := inClear(u, "the client secret and the token"); err != nil {
		errs = append(errs, fmt.Errorf("%s.token_url: %w", key, err))
	}
	if o.ClientID == "" {
		errs = append(errs, fmt.Errorf("%s.client_id: required", key))
	}
	if (o.ClientSecretFile == "") == (o.ClientSecretEnv == "") {
		errs = append(errs, fmt.Errorf("%s: set one of client_secret_file and client_secret_env", key))
	}
	if o.ExpiryLeeway < 0 {
		errs = append(errs, fmt.Errorf("%s.expiry_leeway: must not be negative", key))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, "", err
	}
	from := "oauth2 client credentials at " + o.TokenURL
	if !secrets {
		return nil, from, nil
	}
	secret, err := readSecret(key+".client_secret", o.ClientSecretFile, o.ClientSecretEnv, getenv, false)
	if err != nil {
		return nil, "", err
	}
	params := url.Values{}
	for k, v := range o.EndpointParams {
		params.Set(k, v)
	}
	cc := remote.ClientCredentialsConfig{
		TokenURL: o.TokenURL, ClientID: o.ClientID, ClientSecret: secret,
		Scopes: o.Scopes, EndpointParams: params, ExpiryLeeway: o.ExpiryLeeway, Secrets: set,
	}
	if o.ClientSecretFile != "" {
		// Read at every fetch: one fixed on disk is used without a reload.
		cc.SecretFunc = func() (string, error) {
			return readSecret(key+".client_secret", o.ClientSecretFile, "", getenv, false)
		}
	}
	return remote.ClientCredentials(cc), from, nil
}
