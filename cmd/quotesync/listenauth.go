package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/webauth"
	qsync "github.com/quotesync/quotesync/sync"
)

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
	// ScrapePaths are those for machines, which metrics.scrape_auth
	// governs; every other path is the page's.
	return webauth.New(h, a.policy(), webauth.Options{Key: d.sessionKey, Log: d.log.Named(loggerHTTP),
		ScrapePaths: []string{"/metrics", "/healthz", "/livez"}, Home: "/status"})
}

// logListenerAuth says who the listener lets in, once per start and
// reload: at warn when it is open beyond loopback without a login, and
// each problem of the login (listenerProblems) on a warn line of its own,
// so that the journal says at every start what check says.
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
	case dec.Exposed:
		d.log.Warn(msgListenerOpen, fields...)
	default:
		d.log.Info(msgListenerAuth, fields...)
	}
	for _, p := range a.problems(time.Now()) {
		d.log.Warn(p.msg, append([]zap.Field{zap.String(fieldAddr, dec.Listen)}, p.fields...)...)
	}
}

// listenerProblem is something about the listener's login to fix: a warn
// line of the daemon's log at each start and reload (msg, fields) and of
// check (words; "" when the decision's own words say it already).
type listenerProblem struct {
	msg    string
	fields []zap.Field
	words  string
}

// problems are the listener's problems as read now: a users file without
// users, readable or writable by others, or with hashes cheaper than
// webauth.GoodCost; a login beyond loopback without TLS; an expired
// certificate.
func (a *listenerAuth) problems(now time.Time) []listenerProblem {
	dec := a.decision
	var out []listenerProblem
	if u := a.users; u != nil {
		file := zap.String(fieldUsersFile, dec.UsersFile)
		if u.Len() == 0 {
			out = append(out, listenerProblem{msgListenerNoUsers, []zap.Field{file},
				fmt.Sprintf("nobody can log in yet: add a user with quotesync passwd --file %s USER", dec.UsersFile)})
		}
		if mode, open := u.OpenToOthers(); open {
			out = append(out, listenerProblem{msgListenerUsersOpen, []zap.Field{file, zap.String(fieldMode, fmt.Sprintf("%04o", mode))},
				fmt.Sprintf("%s is readable by others (mode %04o): chmod 600 %s", dec.UsersFile, mode, dec.UsersFile)})
		}
		if weak := u.Weak(); len(weak) > 0 {
			out = append(out, listenerProblem{msgListenerWeakHashes, []zap.Field{file, zap.Strings(fieldWeakUsers, weak)},
				fmt.Sprintf("%s of %s (%s) %s a bcrypt hash below cost %d, quick to crack from a copy of the file: set the password again with quotesync passwd (cost %d) or htpasswd -B -C %d",
					qsync.Plural(len(weak), "user"), dec.UsersFile, strings.Join(weak, ", "), map[bool]string{true: "has", false: "have"}[len(weak) == 1], webauth.GoodCost, webauth.GoodCost, webauth.GoodCost)})
		}
	}
	if !dec.Loopback && !dec.TLS() && (dec.Page == config.AuthUsers || dec.Scrape == config.AuthUsers) {
		out = append(out, listenerProblem{msg: msgListenerInClear}) // check: the decision's words say it
	}
	if a.pair != nil && now.After(webauth.NotAfter(a.pair)) {
		until := webauth.NotAfter(a.pair)
		out = append(out, listenerProblem{msgListenerCertExpired, []zap.Field{zap.Time(fieldCertNotAfter, until)},
			fmt.Sprintf("the certificate %s expired on %s: browsers refuse it", dec.TLSCertFile, until.Format(time.DateOnly))})
	}
	return out
}

// checkListener adds the line "listener": who the metrics listener lets
// in and why, with the users file and the certificate read as the daemon
// reads them. Nothing when metrics.listen is off. A listener the daemon
// would refuse to start fails the config file line before this one.
func checkListener(cl *checklist, set *config.Settings, now time.Time) {
	dec := set.Listener
	if dec.Listen == "" {
		return
	}
	a, err := loadListenerAuth(set)
	if err != nil {
		cl.add(qsync.CheckFail, "listener", "%s\n%v", strings.Join(dec.Why, "\n"), err)
		return
	}
	status, notes := qsync.CheckOK, slices.Clone(dec.Why)
	warn := func(format string, args ...any) {
		status = qsync.CheckWarn
		notes = append(notes, fmt.Sprintf(format, args...))
	}
	if dec.Exposed {
		status = qsync.CheckWarn // the words say who reaches what
	}
	if a.users != nil {
		notes = append(notes, fmt.Sprintf("%s: %s", dec.UsersFile, qsync.Plural(a.users.Len(), "user")))
	}
	if dec.Scrape == config.AuthUsers && !dec.TLS() {
		warn("Prometheus cannot scrape /metrics: it logs in by HTTP Basic, which quotesync takes only over TLS; set metrics.tls_cert_file and tls_key_file, or metrics.scrape_auth: none")
	}
	if a.pair != nil && !now.After(webauth.NotAfter(a.pair)) {
		notes = append(notes, fmt.Sprintf("certificate valid until %s", webauth.NotAfter(a.pair).Format(time.DateOnly)))
	}
	for _, p := range a.problems(now) {
		status = qsync.CheckWarn
		if p.words != "" {
			notes = append(notes, p.words)
		}
	}
	cl.add(status, "listener", "%s", strings.Join(notes, "\n"))
}
