package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/webauth"
)

// scrapePaths are the listener's paths for machines, which
// metrics.scrape_auth governs; every other path is the page's.
func scrapePaths() []string { return []string{"/metrics", "/healthz", "/livez"} }

// listenerAuth is what the listener's login needs from one configuration:
// who it lets in, and the users file and the certificate as read now.
type listenerAuth struct {
	decision config.ListenerAuth
	users    *webauth.Users   // nil when nobody needs to log in
	pair     *tls.Certificate // nil without TLS
}

// loadListenerAuth reads the users file and the certificate that set's
// listener needs. Its errors name the key and the file, never a secret.
func loadListenerAuth(set *config.Settings) (*listenerAuth, error) {
	a := &listenerAuth{decision: set.Listener}
	if a.decision.Listen == "" {
		return a, nil
	}
	var errs []error
	if a.decision.Page == config.AuthUsers || a.decision.Scrape == config.AuthUsers {
		u, err := webauth.LoadUsers(a.decision.UsersFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("metrics.users_file: %w%s", err, readableHint(err, a.decision.UsersFile)))
		}
		a.users = u
	}
	if a.decision.TLS() {
		pair, err := webauth.LoadKeyPair(a.decision.TLSCertFile, a.decision.TLSKeyFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("metrics.tls_cert_file, tls_key_file: %w%s", err, readableHint(err, a.decision.TLSKeyFile)))
		}
		a.pair = pair
	}
	return a, errors.Join(errs...)
}

// readableHint is the fix of a file the daemon may not read.
func readableHint(err error, path string) string {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Sprintf(" (the user quotesync runs as must read it: chown quotesync %s)", path)
	}
	return ""
}

// policy is the Guard's policy of a.
func (a *listenerAuth) policy() webauth.Policy {
	return webauth.Policy{
		Users:           a.users,
		Page:            a.decision.Page == config.AuthUsers,
		Scrape:          a.decision.Scrape == config.AuthUsers,
		SessionLifetime: a.decision.SessionLifetime,
	}
}

// listenerMoved says whether next's listener cannot be running, the one
// prev started: another address, TLS switched on or off, or none running
// (lost in a failed move). The users, the certificate and the rest change
// in the running listener.
func listenerMoved(prev, next *config.Settings, running *obsServer) bool {
	return prev.Metrics.Listen != next.Metrics.Listen || prev.Listener.TLS() != next.Listener.TLS() ||
		(running == nil && next.Metrics.Listen != "")
}

// guarded is h behind the login of a, with the daemon's session key.
func (d *daemon) guarded(h http.Handler, a *listenerAuth) *webauth.Guard {
	return webauth.New(h, a.policy(), webauth.Options{Key: d.sessionKey, Log: d.log.Named(loggerHTTP),
		ScrapePaths: scrapePaths(), Home: "/status"})
}

// logListenerAuth says who the listener lets in, once per start and
// reload; a deprecated or an empty users file is a warning.
func (d *daemon) logListenerAuth(a *listenerAuth) {
	dec := a.decision
	if dec.Listen == "" {
		return
	}
	fields := []zap.Field{zap.String(fieldAddr, dec.Listen), zap.String(fieldAuth, dec.Page),
		zap.String(fieldScrapeAuth, dec.Scrape), zap.Bool(fieldTLS, dec.TLS())}
	if a.users != nil {
		fields = append(fields, zap.String(fieldUsersFile, dec.UsersFile), zap.Int(fieldUsers, a.users.Len()))
	}
	if a.pair != nil {
		fields = append(fields, zap.Time(fieldCertNotAfter, webauth.NotAfter(a.pair)))
	}
	switch {
	case dec.Deprecated:
		d.log.Warn(msgListenerOpenDeprecated, fields...)
	case a.users != nil && a.users.Len() == 0:
		d.log.Warn(msgListenerNoUsers, fields...)
	case a.pair != nil && time.Now().After(webauth.NotAfter(a.pair)):
		d.log.Warn(msgListenerCertExpired, fields...)
	default:
		d.log.Info(msgListenerAuth, fields...)
	}
}
