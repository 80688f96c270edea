// Package webauth is the login of quotesync's HTTP listener: users from a
// file of bcrypt hashes (the htpasswd format), a login form that sets a
// signed, expiring session cookie, HTTP Basic over TLS for scrapers such
// as Prometheus, a limit on failed logins per client address, and the
// listener's TLS certificate, swapped in place when it is read again.
package webauth

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Policy is who a Guard lets in. The daemon builds one from its
// configuration and swaps it in on reload (SetPolicy).
type Policy struct {
	// Users may log in; nil means nobody can.
	Users *Users
	// Page says every path but Options.ScrapePaths needs a login; Scrape
	// says Options.ScrapePaths need one.
	Page, Scrape bool
	// SessionLifetime is how long a login lasts; 0 means
	// DefaultSessionLifetime.
	SessionLifetime time.Duration
}

// DefaultSessionLifetime is Policy.SessionLifetime's default.
const DefaultSessionLifetime = 12 * time.Hour

// Options are what stays for the life of a Guard.
type Options struct {
	// Key signs the session cookies (NewKey); required.
	Key []byte
	// Log receives the logins, logouts and failed logins; required.
	Log *zap.Logger
	// ScrapePaths are the paths that Policy.Scrape governs
	// (/metrics, /healthz).
	ScrapePaths []string
	// Home is where a login leads when the login form was not asked for
	// by another page. Default "/".
	Home string
	// FailBurst and FailEvery limit failed logins per client address;
	// defaults DefaultFailBurst and DefaultFailEvery.
	FailBurst int
	FailEvery time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Guard lets a request through to the handler it guards when the policy
// lets it in, and serves /login and /logout itself.
type Guard struct {
	o      Options
	next   http.Handler
	policy atomic.Pointer[Policy]
	limit  *failLimiter
	csrf   *http.CrossOriginProtection
}

// New returns a Guard of next under p.
func New(next http.Handler, p Policy, o Options) *Guard {
	o.Home = cmp.Or(o.Home, "/")
	o.FailBurst = cmp.Or(max(o.FailBurst, 0), DefaultFailBurst)
	o.FailEvery = cmp.Or(max(o.FailEvery, 0), DefaultFailEvery)
	if o.Now == nil {
		o.Now = time.Now
	}
	g := &Guard{o: o, next: next, limit: newFailLimiter(o.FailBurst, o.FailEvery), csrf: http.NewCrossOriginProtection()}
	g.SetPolicy(p)
	return g
}

// SetPolicy puts p in force for the requests that follow.
func (g *Guard) SetPolicy(p Policy) {
	p.SessionLifetime = cmp.Or(max(p.SessionLifetime, 0), DefaultSessionLifetime)
	g.policy.Store(&p)
}

type userKey struct{}

// User is the user a request was let in as; "" when it needed no login.
func User(ctx context.Context) string {
	u, _ := ctx.Value(userKey{}).(string)
	return u
}

// Paths the Guard serves itself.
const (
	LoginPath  = "/login"
	LogoutPath = "/logout"
)

// ServeHTTP implements http.Handler.
func (g *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := g.policy.Load()
	if !p.Page && !p.Scrape {
		g.next.ServeHTTP(w, r)
		return
	}
	switch r.URL.Path {
	case LoginPath:
		g.serveLogin(w, r, p)
		return
	case LogoutPath:
		g.serveLogout(w, r, p)
		return
	}
	scrape := slices.Contains(g.o.ScrapePaths, r.URL.Path)
	if (scrape && !p.Scrape) || (!scrape && !p.Page) {
		g.next.ServeHTTP(w, r)
		return
	}
	if user, ok := g.session(r, p); ok {
		g.pass(w, r, user)
		return
	}
	if _, _, basic := r.BasicAuth(); basic || r.Header.Get("Authorization") != "" {
		g.serveBasic(w, r, p)
		return
	}
	if !scrape && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		http.Redirect(w, r, LoginPath+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	g.refuse(w, r, http.StatusUnauthorized, "log in at "+LoginPath+", or send HTTP Basic credentials over TLS")
}

func (g *Guard) pass(w http.ResponseWriter, r *http.Request, user string) {
	g.next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, user)))
}

// session is the user of the request's session cookie, when it is valid.
func (g *Guard) session(r *http.Request, p *Policy) (string, bool) {
	c, err := r.Cookie(sessionCookieName(r.TLS != nil))
	if err != nil {
		return "", false
	}
	return verify(g.o.Key, c.Value, p.Users, g.o.Now(), p.SessionLifetime)
}

// serveBasic admits a request by its HTTP Basic credentials: only over
// TLS, and from an address that has not used up its failed logins (a
// scraper set up wrong is logged a few times, then refused quietly).
func (g *Guard) serveBasic(w http.ResponseWriter, r *http.Request, p *Policy) {
	if d := g.limit.begin(clientKey(r.RemoteAddr), g.o.Now()); d > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((d+time.Second-1)/time.Second)))
		g.refuse(w, r, http.StatusTooManyRequests, "too many failed logins from this address; try again later")
		return
	}
	user, password, ok := r.BasicAuth()
	switch {
	case r.TLS == nil:
		// The password crossed the network in clear already; it is not
		// even looked at, so that a scraper set up wrong fails loudly.
		g.failed(r, "", reasonBasicWithoutTLS)
		g.refuse(w, r, http.StatusUnauthorized, "HTTP Basic credentials are accepted only over TLS (metrics.tls_cert_file); browsers log in at "+LoginPath)
		return
	case !ok:
		g.failed(r, "", reasonMalformed)
		g.refuse(w, r, http.StatusUnauthorized, "malformed Authorization header")
		return
	}
	if known, good := p.Users.Check(user, password); !good {
		g.failedCheck(r, user, known)
		g.refuse(w, r, http.StatusUnauthorized, "wrong user name or password")
		return
	}
	g.succeeded(r)
	g.o.Log.Debug(msgBasicAccepted, zap.String(fieldClient, clientIP(r)), zap.String(fieldUser, user))
	g.pass(w, r, user)
}

// refuse answers code and why; a 401 over TLS asks for HTTP Basic
// credentials (over plain HTTP, none are taken).
func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, code int, why string) {
	if r.TLS != nil && code == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", `Basic realm="quotesync", charset="UTF-8"`)
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, why, code)
}

// failed ends a login attempt that the limit admitted (begin) as a
// failure, counted and logged: the client, the user when the name is a
// user's (another might be a password typed in the wrong box), why.
func (g *Guard) failed(r *http.Request, user, reason string) {
	key, now := clientKey(r.RemoteAddr), g.o.Now()
	limited := g.limit.end(key, now, true)
	fields := []zap.Field{zap.String(fieldClient, clientIP(r)), zap.String(fieldReason, reason), zap.String(fieldPath, r.URL.Path)}
	if user != "" {
		fields = append(fields, zap.String(fieldUser, user))
	}
	g.o.Log.Warn(msgLoginFailed, fields...)
	if limited {
		g.o.Log.Warn(msgLoginLimited, zap.String(fieldClient, clientIP(r)), zap.Duration(fieldRetryAfter, g.limit.wait(key, now)))
	}
}

// succeeded ends a login attempt that the limit admitted as a success.
func (g *Guard) succeeded(r *http.Request) {
	g.limit.end(clientKey(r.RemoteAddr), g.o.Now(), false)
}

// failedCheck is failed for a wrong password, naming user only when it
// is a user's name.
func (g *Guard) failedCheck(r *http.Request, user string, known bool) {
	if known {
		g.failed(r, user, reasonWrongPassword)
	} else {
		g.failed(r, "", reasonUnknownUser)
	}
}
