package config

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote"
)

// remoteYAML is baseYAML with a token and the remote keys of lines, which
// may replace base_url.
func remoteYAML(lines string) string {
	base := baseYAML
	if strings.Contains(lines, "base_url:") {
		base = strings.Replace(base, "  base_url: https://api.insurer.example\n", "", 1)
	}
	return base + "  token: {env: T}\n" + lines
}

// TestRemoteSettingsInvalid: every invalid remote.* value stops build,
// named by its key in the file (never by the Go field), with the fix.
// remoteToo marks the values remote.New refuses as well: build must agree
// with the client it configures.
func TestRemoteSettingsInvalid(t *testing.T) {
	const secret = "pw-SECRET-url-77c1"
	tests := []struct {
		name      string
		lines     string // remote keys, indented two spaces
		want      []string
		remoteToo bool
	}{
		{"DraftUpdate", "  draft_update: patch\n", []string{`remote.draft_update: "patch" must be repost or put`}, true},
		{"StatusMethod", "  status_method: GET\n", []string{`remote.status_method: "GET" must be PUT or POST`}, true},
		{"StatusPath", "  status_path: /jobs/{jobId}/status\n", []string{`remote.status_path: "/jobs/{jobId}/status" must be one of`, "auto"}, true},
		{"NegativeTimeout", "  timeout: -1s\n", []string{"remote.timeout: -1s must not be negative", "30s"}, true},
		{"NegativeBackoffInitial", "  backoff_initial: -5ms\n", []string{"remote.backoff_initial: -5ms must not be negative"}, true},
		{"BackoffMaxBelowDefaultInitial", "  backoff_max: 100ms\n", []string{"remote.backoff_max: 100ms is shorter than remote.backoff_initial (500ms)"}, true},
		{"BackoffMaxBelowInitial", "  backoff_initial: 2s\n  backoff_max: 1s\n", []string{"remote.backoff_max: 1s is shorter than remote.backoff_initial (2s)"}, true},
		{"NegativeMaxAttempts", "  max_attempts: -1\n", []string{"remote.max_attempts: -1 must not be negative"}, true},
		{"NegativeBurst", "  burst: -2\n", []string{"remote.burst: -2 must not be negative"}, true},
		{"NegativeMaxBodyBytes", "  max_body_bytes: -1\n", []string{"remote.max_body_bytes: -1 must not be negative"}, true},
		{"RateLimitNaN", "  rate_limit: .nan\n", []string{"remote.rate_limit: must be a number"}, false},
		{"LayoutWithoutYear", "  booking_date_layout: 02 Jan\n", []string{`remote.booking_date_layout: "02 Jan" is not a Go time layout of a whole date`}, false},
		{"LayoutNotALayout", "  booking_date_layout: dd/mm/yyyy\n", []string{`remote.booking_date_layout: "dd/mm/yyyy"`, "2006-01-02"}, false},
		{"BaseURLCredentials", "  base_url: https://user:" + secret + "@api.insurer.example\n", []string{"remote.base_url:", "must not hold a user or password"}, true},
		{"BaseURLQuery", "  base_url: https://api.insurer.example/?x=1\n", []string{"remote.base_url:", "no query"}, true},
		{"BaseURLInClear", "  base_url: http://api.insurer.example/v1\n", []string{`remote.base_url: "http://api.insurer.example/v1" is plain http`,
			"the token would cross the network in clear", "use https://api.insurer.example/v1"}, false},
		{"BaseURLInClearToLAN", "  base_url: http://192.168.1.20:8080\n", []string{"remote.base_url:", "plain http", "only to loopback"}, false},
		{"Several", "  draft_update: PATCH\n  status_method: get\n", []string{"remote.draft_update:", "remote.status_method:"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc, err := Parse(strings.NewReader(remoteYAML(tt.lines)))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			_, err = fc.Build(BuildOptions{Getenv: func(string) string { return "" }, Scope: NoSecrets})
			if err == nil {
				t.Fatalf("build accepted:\n%s", tt.lines)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, f := range reflect.VisibleFields(reflect.TypeFor[RemoteSection]()) {
				if strings.Contains(err.Error(), f.Name+":") {
					t.Errorf("error %q names the Go field %s, not the key %s", err, f.Name, f.Tag.Get("yaml"))
				}
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q shows the password of the URL", err)
			}
			if !tt.remoteToo {
				return
			}
			ins, _ := buildRemote("remote", fc.Remote, func(string) string { return "" }, false, "", nil)
			if _, err := remote.New(ins.Remote, remote.StaticToken("t")); err == nil {
				t.Errorf("remote.New accepts what build refuses: %+v", ins.Remote)
			}
		})
	}
}

// TestRemoteSettingsValid: the valid corners pass build and remote.New.
func TestRemoteSettingsValid(t *testing.T) {
	tests := []struct{ name, lines string }{
		{"Defaults", ""},
		{"PutUpperCase", "  draft_update: PUT\n  status_method: post\n"},
		{"AutoPath", "  status_path: auto\n"},
		{"SingularPath", "  status_path: /jobs/{jobId}/quote/status/{status}\n"},
		{"Unlimited", "  rate_limit: -1\n"},
		{"NoRetry", "  max_attempts: 1\n"},
		{"BackoffEqual", "  backoff_initial: 1s\n  backoff_max: 1s\n"},
		{"BritishDate", "  booking_date_layout: 02/01/2006\n"},
		{"DateTime", "  booking_date_layout: \"2006-01-02T15:04:05Z07:00\"\n"},
		{"PlainHTTPWithPath", "  base_url: http://127.0.0.1:8080/insurer/\n"},
		{"PlainHTTPLoopbackNet", "  base_url: http://127.8.0.1:8080\n"},
		{"PlainHTTPLocalhost", "  base_url: http://LocalHost:8080\n"},
		{"PlainHTTPIPv6Loopback", "  base_url: http://[::1]:8080\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc, err := Parse(strings.NewReader(remoteYAML(tt.lines)))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			set, err := fc.Build(BuildOptions{Getenv: func(string) string { return "" }, Scope: NoSecrets})
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			if _, err := remote.New(set.Daemon.Insurers[0].Remote, remote.StaticToken("t")); err != nil {
				t.Errorf("remote.New refuses what build accepts: %v", err)
			}
		})
	}
}

// TestRemoteConfigErrorNamesKeys: an error of remote.New about any field
// the file sets reads with the file's key, so that a check remote adds
// later still names the key.
func TestRemoteConfigErrorNamesKeys(t *testing.T) {
	base := remote.Config{BaseURL: "https://api.insurer.example"}
	tests := []struct {
		key  string
		edit func(*remote.Config)
	}{
		{"remote.base_url", func(c *remote.Config) { c.BaseURL = "ftp://x" }},
		{"remote.timeout", func(c *remote.Config) { c.Timeout = -time.Second }},
		{"remote.backoff_initial", func(c *remote.Config) { c.BackoffInitial = -time.Second }},
		{"remote.backoff_max", func(c *remote.Config) { c.BackoffMax = time.Millisecond }},
		{"remote.max_attempts", func(c *remote.Config) { c.MaxAttempts = -1 }},
		{"remote.burst", func(c *remote.Config) { c.Burst = -1 }},
		{"remote.max_body_bytes", func(c *remote.Config) { c.MaxBodyBytes = -1 }},
		{"remote.draft_update", func(c *remote.Config) { c.DraftUpdate = "patch" }},
		{"remote.status_method", func(c *remote.Config) { c.StatusMethod = "GET" }},
		{"remote.status_path", func(c *remote.Config) { c.StatusPath = "/x" }},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			cfg := base
			tt.edit(&cfg)
			_, err := remote.New(cfg, remote.StaticToken("t"))
			if err == nil {
				t.Fatalf("remote.New accepted %+v", cfg)
			}
			got := remoteConfigError("remote", err).Error()
			if !strings.HasPrefix(got, tt.key+": ") {
				t.Errorf("remoteConfigError(%q) = %q, want it to start with %q", err, got, tt.key+": ")
			}
		})
	}
}

// TestRemoteConfigErrorByField: the key comes from the typed error's field,
// not from the shape of its message, and every mapped field is a field of
// remote.Config.
func TestRemoteConfigErrorByField(t *testing.T) {
	err := fmt.Errorf("open the client again: %w", &remote.ConfigError{Field: "DraftUpdate", Err: errors.New("must be repost or put")})
	if got, want := remoteConfigError("remote", err).Error(), "remote.draft_update: must be repost or put"; got != want {
		t.Errorf("remoteConfigError = %q, want %q", got, want)
	}
	if got, want := remoteConfigError("remote", errors.New("something else")).Error(), "remote: something else"; got != want {
		t.Errorf("remoteConfigError of an untyped error = %q, want %q", got, want)
	}
	fields := reflect.TypeFor[remote.Config]()
	for _, f := range reflect.VisibleFields(reflect.TypeFor[RemoteSection]()) {
		if rf, ok := fields.FieldByName(f.Name); f.Name != "Token" && (!ok || rf.Type != f.Type) {
			t.Errorf("RemoteSection's %s is not a field of remote.Config of the same type", f.Name)
		}
	}
}
