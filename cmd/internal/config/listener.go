package config

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"time"
)

// Who the metrics listener lets in (metrics.auth, metrics.scrape_auth).
const (
	AuthUsers = "users" // a login of a user of metrics.users_file
	AuthNone  = "none"  // everyone who reaches the listener
)

// Defaults and bounds of the listener's login.
const (
	// DefaultSessionLifetime is metrics.session_lifetime's default: a
	// login lasts a working day.
	DefaultSessionLifetime = 12 * time.Hour
	// DefaultUsersFile is where `quotesync passwd` writes without --file,
	// and the path the example configuration names.
	DefaultUsersFile = "/etc/quotesync/users"

	minSessionLifetime = time.Minute
	maxSessionLifetime = 31 * 24 * time.Hour
)

// ListenerAuth is who the metrics listener lets in, as decided from the
// metrics section by Listener.
type ListenerAuth struct {
	// Listen is metrics.listen; "" means no listener.
	Listen string
	// Loopback says Listen is a loopback address (or localhost).
	Loopback bool
	// Page is AuthUsers or AuthNone for the status page and every other
	// path but /metrics and /healthz.
	Page string
	// Scrape is AuthUsers or AuthNone for /metrics and /healthz.
	Scrape string
	// UsersFile is metrics.users_file ("" when Page and Scrape are none).
	UsersFile string
	// TLSCertFile and TLSKeyFile are both set (TLS) or both empty.
	TLSCertFile, TLSKeyFile string
	// SessionLifetime is how long a login lasts.
	SessionLifetime time.Duration
	// Deprecated says metrics.allow_non_loopback opened the listener:
	// it works as before, and check and the start warn.
	Deprecated bool
	// Exposed says people beyond this machine reach something without a
	// login (metrics.auth: none, or allow_non_loopback, beyond loopback).
	Exposed bool
	// Why is the decision in words, a clause a line, for check.
	Why []string
}

// TLS reports whether the listener serves HTTPS.
func (a ListenerAuth) TLS() bool { return a.TLSCertFile != "" }

// Listener decides who the listener of m lets in: a non-loopback listener
// needs metrics.users_file or an explicit metrics.auth: none (or, as
// before, metrics.allow_non_loopback: true, deprecated); a loopback one
// is open unless users_file is set. /metrics and /healthz are open on
// loopback and follow metrics.auth beyond it, unless metrics.scrape_auth
// says otherwise. The error names every key that is wrong and the fix.
func (m MetricsSection) Listener() (ListenerAuth, error) {
	a := ListenerAuth{Listen: m.Listen, UsersFile: m.UsersFile, TLSCertFile: m.TLSCertFile, TLSKeyFile: m.TLSKeyFile,
		SessionLifetime: cmp.Or(m.SessionLifetime, DefaultSessionLifetime)}
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if a.SessionLifetime < minSessionLifetime || a.SessionLifetime > maxSessionLifetime {
		add("metrics.session_lifetime: %s is out of range; use a duration from %s to %s such as 12h (0 means the default, 12h)",
			m.SessionLifetime, minSessionLifetime, "744h")
	}
	// Slices, not maps: the errors come in the file's order on every run.
	for _, kv := range [][2]string{{"metrics.users_file", m.UsersFile}, {"metrics.tls_cert_file", m.TLSCertFile},
		{"metrics.tls_key_file", m.TLSKeyFile}} {
		if key, p := kv[0], kv[1]; p != "" && !filepath.IsAbs(p) {
			add("%s: %q must be an absolute path such as /etc/quotesync/%s", key, p, filepath.Base(p))
		}
	}
	if (m.TLSCertFile == "") != (m.TLSKeyFile == "") {
		add("metrics.tls_cert_file and metrics.tls_key_file: set both (the listener serves HTTPS) or neither")
	}
	for _, kv := range [][2]string{{"metrics.auth", m.Auth}, {"metrics.scrape_auth", m.ScrapeAuth}} {
		if key, v := kv[0], kv[1]; v != "" && v != AuthUsers && v != AuthNone {
			add("%s: %q is not a mode; use users (a login of a user of metrics.users_file) or none", key, v)
		}
	}
	if m.Auth == AuthNone && m.UsersFile != "" {
		add("metrics.auth: none, yet metrics.users_file is set; remove one (users_file alone means a login)")
	}
	if m.Listen == "" {
		a.Page, a.Scrape, a.Why = AuthNone, AuthNone, []string{"off: metrics.listen is not set"}
		return a, errors.Join(errs...)
	}
	host, port, err := net.SplitHostPort(m.Listen)
	if err != nil || port == "" {
		add("metrics.listen: %q is not host:port; write e.g. 127.0.0.1:9464", m.Listen)
		return a, errors.Join(errs...)
	}
	a.Loopback = loopbackHost(host)

	switch {
	case m.Auth == AuthUsers || m.UsersFile != "":
		a.Page = AuthUsers
		if m.UsersFile == "" {
			add("metrics.auth: users needs metrics.users_file; create it with quotesync passwd --file %s USER", DefaultUsersFile)
		}
	case m.Auth == AuthNone || a.Loopback:
		a.Page = AuthNone
	case m.AllowNonLoopback:
		a.Page, a.Deprecated = AuthNone, true
	default:
		add("metrics.listen: %s is not a loopback address and the listener has no login; set metrics.users_file "+
			"(create it with quotesync passwd --file %s USER), or metrics.auth: none to open the status page and "+
			"/metrics to everyone on the network on purpose, or listen on 127.0.0.1:%s", m.Listen, DefaultUsersFile, port)
		return a, errors.Join(errs...)
	}
	switch {
	case m.ScrapeAuth != "":
		a.Scrape = m.ScrapeAuth
	case a.Loopback:
		a.Scrape = AuthNone
	default:
		a.Scrape = a.Page
	}
	if a.Scrape == AuthUsers && a.Page == AuthNone {
		add("metrics.scrape_auth: users needs metrics.users_file; create it with quotesync passwd --file %s USER", DefaultUsersFile)
	}
	a.Exposed = !a.Loopback && (a.Page == AuthNone || a.Scrape == AuthNone)
	a.Why = a.words()
	return a, errors.Join(errs...)
}

// words says the decision as check prints it, a clause a line.
func (a ListenerAuth) words() []string {
	where := "beyond loopback"
	if a.Loopback {
		where = "loopback: only this machine reaches it"
	}
	out := []string{fmt.Sprintf("%s (%s)", a.Listen, where)}
	switch {
	case a.Page == AuthUsers:
		out = append(out, "the status page needs a login of a user of "+a.UsersFile)
	case a.Deprecated:
		out = append(out, "no login: metrics.allow_non_loopback: true (deprecated) opens it to everyone on the network; "+
			"set metrics.users_file for a login, or write metrics.auth: none instead to keep it open on purpose")
	case a.Loopback:
		out = append(out, "no login (set metrics.users_file for one)")
	default:
		out = append(out, "no login (metrics.auth: none): everyone on the network reads the status page")
	}
	switch {
	case a.Scrape == AuthUsers && a.TLS():
		out = append(out, "/metrics and /healthz need a user too (a login, or HTTP Basic as Prometheus sends it)")
	case a.Scrape == AuthUsers:
		out = append(out, "/metrics and /healthz need a user too, by a login: HTTP Basic (Prometheus) needs TLS")
	case a.Page == AuthNone:
	case a.Loopback:
		out = append(out, "/metrics and /healthz are open (loopback)")
	default:
		out = append(out, "/metrics and /healthz are open to everyone on the network (metrics.scrape_auth: none)")
	}
	switch {
	case a.TLS():
		out = append(out, "HTTPS with "+a.TLSCertFile)
	case a.Page == AuthUsers && !a.Loopback:
		out = append(out, "no TLS: the login and the page cross the network in clear (set metrics.tls_cert_file and tls_key_file)")
	}
	return out
}

// DefaultStatusPage: the status page is served (on the metrics listener,
// when metrics.listen is set) unless metrics.status_page is false.
const DefaultStatusPage = true

// StatusPageOn reports whether the listener serves the status page
// (metrics.status_page, default DefaultStatusPage).
func (m MetricsSection) StatusPageOn() bool { return m.StatusPage == nil || *m.StatusPage }
