package webauth

import (
	"bytes"
	"embed"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Log messages and field keys of the Guard: stable, operators filter on
// them.
const (
	msgLoggedIn      = "logged in"
	msgLoggedOut     = "logged out"
	msgLoginFailed   = "login failed"
	msgLoginLimited  = "logins refused for a while: too many failures from one address"
	msgCrossOrigin   = "login form refused: cross-origin request"
	msgBasicAccepted = "basic auth accepted"

	fieldClient     = "client"      // the client's IP address
	fieldUser       = "user"        // a user of the users file, never an unknown name
	fieldReason     = "reason"      // one of the reason values below
	fieldPath       = "path"        // the path asked for
	fieldRetryAfter = "retry_after" // how long the address waits
	fieldExpires    = "expires"     // when a session ends
)

// Values of fieldReason.
const (
	reasonWrongPassword   = "wrong_password"
	reasonUnknownUser     = "unknown_user"
	reasonBasicWithoutTLS = "basic_without_tls"
	reasonMalformed       = "malformed"
)

// maxFormBytes caps a login form's body.
const maxFormBytes = 8 << 10

//go:embed templates/login.html
var templates embed.FS

var loginPage = template.Must(template.ParseFS(templates, "templates/login.html"))

// loginView is what the login form shows.
type loginView struct {
	Message string // why the form is shown again; "" the first time
	Next    string // where a login leads
	TLS     bool
}

// serveLogin shows the login form (GET) or logs in (POST).
func (g *Guard) serveLogin(w http.ResponseWriter, r *http.Request, p *Policy) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		next := g.nextPath(r.URL.Query().Get("next"))
		if _, ok := g.session(r, p); ok {
			http.Redirect(w, r, next, http.StatusSeeOther)
			return
		}
		g.form(w, r, http.StatusOK, loginView{Next: next})
	case http.MethodPost:
		g.login(w, r, p)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		g.refuse(w, r, http.StatusMethodNotAllowed, "GET shows the login form, POST logs in")
	}
}

// login checks the form's user and password and sets the session cookie.
// Cross-site requests are refused twice: by net/http's
// CrossOriginProtection, and by the cookie's SameSite=Strict.
func (g *Guard) login(w http.ResponseWriter, r *http.Request, p *Policy) {
	if !g.sameOrigin(w, r) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		g.refuse(w, r, http.StatusBadRequest, "read the login form: "+err.Error())
		return
	}
	next := g.nextPath(r.PostForm.Get("next"))
	view := loginView{Next: next}
	now := g.o.Now()
	if d := g.limit.begin(clientKey(r.RemoteAddr), now); d > 0 {
		secs := int((d + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		view.Message = "Too many failed logins from this computer: try again in " + strconv.Itoa(secs) + " seconds."
		g.form(w, r, http.StatusTooManyRequests, view)
		return
	}
	user, password := r.PostForm.Get("user"), r.PostForm.Get("password")
	if known, ok := p.Users.Check(user, password); !ok {
		g.failedCheck(r, user, known)
		view.Message = "Wrong user name or password."
		g.form(w, r, http.StatusUnauthorized, view)
		return
	}
	g.succeeded(r)
	expires := now.Add(p.SessionLifetime)
	tls := r.TLS != nil
	http.SetCookie(w, sessionCookie(tls, sign(g.o.Key, user, p.Users.hash(user), now, expires), expires, now))
	g.o.Log.Info(msgLoggedIn, zap.String(fieldClient, clientIP(r)), zap.String(fieldUser, user), zap.Time(fieldExpires, expires))
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// serveLogout ends the browser's session (POST).
func (g *Guard) serveLogout(w http.ResponseWriter, r *http.Request, p *Policy) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		g.refuse(w, r, http.StatusMethodNotAllowed, "POST logs out")
		return
	}
	if !g.sameOrigin(w, r) {
		return
	}
	now := g.o.Now()
	if user, ok := g.session(r, p); ok {
		g.o.Log.Info(msgLoggedOut, zap.String(fieldClient, clientIP(r)), zap.String(fieldUser, user))
	}
	http.SetCookie(w, sessionCookie(r.TLS != nil, "", time.Unix(0, 0), now))
	http.Redirect(w, r, LoginPath, http.StatusSeeOther)
}

// sameOrigin refuses (403, logged) a form posted from another site.
func (g *Guard) sameOrigin(w http.ResponseWriter, r *http.Request) bool {
	if err := g.csrf.Check(r); err != nil {
		g.o.Log.Warn(msgCrossOrigin, zap.String(fieldClient, clientIP(r)), zap.String(fieldPath, r.URL.Path),
			zap.String("origin", r.Header.Get("Origin")))
		g.refuse(w, r, http.StatusForbidden, "this form may only be sent from quotesync's own pages")
		return false
	}
	return true
}

func (g *Guard) form(w http.ResponseWriter, r *http.Request, code int, v loginView) {
	v.TLS = r.TLS != nil
	var buf bytes.Buffer
	if err := loginPage.Execute(&buf, v); err != nil {
		g.refuse(w, r, http.StatusInternalServerError, "render the login form: "+err.Error())
		return
	}
	PageHeaders(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// nextPath is where a login leads: next when it is a path of this site
// ("/status?need=person"), else Home; never another site ("//evil",
// "https://evil", "/\evil").
func (g *Guard) nextPath(next string) string {
	if next == "" || next[0] != '/' || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n\t") ||
		strings.HasPrefix(next, LoginPath) || strings.HasPrefix(next, LogoutPath) {
		return g.o.Home
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return g.o.Home
	}
	return next
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// PageHeaders sets the headers of a page for people (the login form, the
// status page): not kept by caches, not sniffed, sending no referrer, not
// framed, and no script, no outside resource, forms to this site only.
func PageHeaders(h http.Header) {
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
}
