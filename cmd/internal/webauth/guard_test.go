package webauth

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/quotesync/quotesync/cmd/internal/webauth/webauthtest"
)

// The users of the tests; the passwords are distinctive, so a test can
// prove they appear in no log and no page.
const (
	alicePassword = "pw-ALICE-7d1e9c"
	bobPassword   = "pw-BOB-42aa0f"
)

// clock is a settable clock.
type clock struct {
	mu  gosync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// testGuard is a Guard over a handler that names the user it serves.
type testGuard struct {
	*Guard
	clock *clock
	logs  *observer.ObservedLogs
	users string // the users file
}

func newTestGuard(t *testing.T, p Policy) *testGuard {
	t.Helper()
	tg := &testGuard{clock: &clock{now: time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC)}}
	tg.users = filepath.Join(t.TempDir(), "users")
	webauthtest.WriteUsers(t, tg.users, map[string]string{"alice": alicePassword, "bob": bobPassword})
	users, err := LoadUsers(tg.users)
	if err != nil {
		t.Fatal(err)
	}
	if p.Page || p.Scrape {
		p.Users = users
	}
	core, logs := observer.New(zapcore.DebugLevel)
	tg.logs = logs
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "served "+r.URL.Path+" to "+User(r.Context())+".")
	})
	tg.Guard = New(next, p, Options{Key: NewKey(), Log: zap.New(core), ScrapePaths: []string{"/metrics", "/healthz"},
		Home: "/status", Now: tg.clock.Now})
	return tg
}

// logText is every log line with its fields, for searching.
func (tg *testGuard) logText() string {
	var b strings.Builder
	for _, e := range tg.logs.All() {
		b.WriteString(e.Message)
		for k, v := range e.ContextMap() {
			b.WriteString(" " + k + "=" + strings.ReplaceAll(toString(v), "\n", " "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case time.Time:
		return v.String()
	case time.Duration:
		return v.String()
	}
	return "?"
}

// serve runs one request through the guard, from addr.
func (tg *testGuard) serve(r *http.Request, addr string) *httptest.ResponseRecorder {
	if addr != "" {
		r.RemoteAddr = addr
	}
	rec := httptest.NewRecorder()
	tg.ServeHTTP(rec, r)
	return rec
}

// postLogin is a same-origin POST of the login form.
func postLogin(user, password, next string) *http.Request {
	form := url.Values{"user": {user}, "password": {password}, "next": {next}}
	r := httptest.NewRequest("POST", "http://quotesync.test/login", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Origin", "http://quotesync.test")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	return r
}

// sessionOf is the session cookie a response sets.
func sessionOf(t *testing.T, rec *httptest.ResponseRecorder) *http.Cookie {
	t.Helper()
	for _, c := range rec.Result().Cookies() {
		if strings.HasSuffix(c.Name, cookieName) {
			return c
		}
	}
	t.Fatalf("no session cookie in %d answer: %v", rec.Code, rec.Header())
	return nil
}

func get(path string, c *http.Cookie) *http.Request {
	r := httptest.NewRequest("GET", "http://quotesync.test"+path, nil)
	if c != nil {
		r.AddCookie(c)
	}
	return r
}

var pagePolicy = Policy{Page: true, Scrape: true, SessionLifetime: 2 * time.Hour}

// TestLoginSession: the page sends a stranger to the form; the form's
// right password sets a session cookie with the attributes a session
// needs and leads back to the page asked for; the cookie then opens the
// page as the user until it expires, and the logout removes it.
func TestLoginSession(t *testing.T) {
	t.Parallel()
	tg := newTestGuard(t, pagePolicy)
	rec := tg.serve(get("/status?need=person", nil), "")
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/login?next=%2Fstatus%3Fneed%3Dperson" {
		t.Fatalf("GET /status without a session: %d to %q, want 303 to the login form", rec.Code, rec.Header().Get("Location"))
	}
	rec = tg.serve(get("/login?next=%2Fstatus%3Fneed%3Dperson", nil), "")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `<input type="hidden" name="next" value="/status?need=person">`) {
		t.Fatalf("the login form: %d\n%s", rec.Code, rec.Body)
	}

	rec = tg.serve(postLogin("alice", alicePassword, "/status?need=person"), "192.0.2.7:5000")
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/status?need=person" {
		t.Fatalf("login: %d to %q, want 303 to the page asked for", rec.Code, rec.Header().Get("Location"))
	}
	c := sessionOf(t, rec)
	if c.Name != cookieName || !c.HttpOnly || c.Secure || c.SameSite != http.SameSiteStrictMode || c.Path != "/" ||
		c.MaxAge != int((2*time.Hour)/time.Second) {
		t.Errorf("cookie over plain HTTP = %s; want %s, HttpOnly, not Secure, SameSite=Strict, Path=/, Max-Age=7200", c.String(), cookieName)
	}
	if strings.Contains(c.Value, alicePassword) {
		t.Error("the cookie holds the password")
	}
	if e := tg.logs.FilterMessage(msgLoggedIn).All(); len(e) != 1 || e[0].ContextMap()[fieldUser] != "alice" ||
		e[0].ContextMap()[fieldClient] != "192.0.2.7" {
		t.Errorf("login log lines: %v", e)
	}

	rec = tg.serve(get("/status", c), "")
	if got, want := rec.Body.String(), "served /status to alice."; got != want {
		t.Errorf("with the cookie: %d %q, want %q", rec.Code, got, want)
	}
	tg.clock.Add(2*time.Hour - time.Second)
	if rec = tg.serve(get("/status", c), ""); rec.Code != 200 {
		t.Errorf("a second before expiry: %d, want 200", rec.Code)
	}
	tg.clock.Add(time.Second)
	if rec = tg.serve(get("/status", c), ""); rec.Code != http.StatusSeeOther {
		t.Errorf("at expiry: %d, want 303 to the login form", rec.Code)
	}

	rec = tg.serve(postLogin("bob", bobPassword, ""), "")
	c = sessionOf(t, rec)
	if loc := rec.Header().Get("Location"); loc != "/status" {
		t.Errorf("login without next leads to %q, want the home /status", loc)
	}
	r := httptest.NewRequest("POST", "http://quotesync.test/logout", nil)
	r.Header.Set("Origin", "http://quotesync.test")
	r.AddCookie(c)
	rec = tg.serve(r, "")
	if out := sessionOf(t, rec); rec.Code != http.StatusSeeOther || out.MaxAge >= 0 || out.Value != "" {
		t.Errorf("logout: %d, cookie %s; want 303 and the cookie removed", rec.Code, out)
	}
	if len(tg.logs.FilterMessage(msgLoggedOut).All()) != 1 {
		t.Error("the logout is not logged")
	}
	if r := get("/logout", c); tg.serve(r, "").Code != http.StatusMethodNotAllowed {
		t.Error("GET /logout logs out; only POST may")
	}
}

// TestLoginCookieTLS: over TLS the cookie is Secure and __Host- prefixed.
func TestLoginCookieTLS(t *testing.T) {
	t.Parallel()
	tg := newTestGuard(t, pagePolicy)
	r := postLogin("alice", alicePassword, "")
	r.TLS = &tls.ConnectionState{}
	c := sessionOf(t, tg.serve(r, ""))
	if c.Name != cookieNameTLS || !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Errorf("cookie over TLS = %s; want %s, Secure, HttpOnly, SameSite=Strict, Path=/", c.String(), cookieNameTLS)
	}
	// The plain-HTTP name is not read over TLS, nor the other way round.
	plain := *c
	plain.Name = cookieName
	r = get("/status", &plain)
	r.TLS = &tls.ConnectionState{}
	if rec := tg.serve(r, ""); rec.Code != http.StatusSeeOther {
		t.Errorf("a session under the plain-HTTP name over TLS: %d, want 303", rec.Code)
	}
}

// TestTamperedSession: a cookie whose user, expiry or signature was
// changed, one signed with another key (another run of the daemon), and
// one of a user whose password changed or who was removed, are refused.
func TestTamperedSession(t *testing.T) {
	t.Parallel()
	tg := newTestGuard(t, pagePolicy)
	good := sessionOf(t, tg.serve(postLogin("bob", bobPassword, ""), "")).Value
	parts := strings.Split(good, ".")
	if len(parts) != 4 {
		t.Fatalf("session value %q: want 4 parts", good)
	}
	aliceB64 := "YWxpY2U" // base64url("alice")
	later := strconv.FormatInt(tg.clock.Now().Add(48*time.Hour).Unix(), 10)
	now := tg.clock.Now()
	other := sign(NewKey(), "bob", tg.policy.Load().Users.hash("bob"), now, now.Add(time.Hour))
	join := func(p ...string) string { return strings.Join(p, ".") }
	flip := func(s string) string {
		b := []byte(s)
		b[len(b)/2] ^= 1
		return string(b)
	}
	for name, v := range map[string]string{
		"OtherUser":     join(aliceB64, parts[1], parts[2], parts[3]),
		"LaterIssue":    join(parts[0], later, parts[2], parts[3]),
		"LaterExpiry":   join(parts[0], parts[1], later, parts[3]),
		"FlippedMAC":    join(parts[0], parts[1], parts[2], flip(parts[3])),
		"FlippedUser":   join(flip(parts[0]), parts[1], parts[2], parts[3]),
		"NoMAC":         join(parts[0], parts[1], parts[2], ""),
		"ThreeParts":    join(parts[0], parts[2], parts[3]),
		"OtherKey":      other,
		"Empty":         "",
		"ExtraDot":      good + ".x",
		"NotBase64User": join("%%%", parts[1], parts[2], parts[3]),
	} {
		t.Run(name, func(t *testing.T) {
			rec := tg.serve(get("/status", &http.Cookie{Name: cookieName, Value: v}), "")
			if rec.Code != http.StatusSeeOther {
				t.Errorf("%q: %d %q, want 303 to the login form", v, rec.Code, rec.Body)
			}
		})
	}
	c := &http.Cookie{Name: cookieName, Value: good}
	if rec := tg.serve(get("/status", c), ""); rec.Code != 200 {
		t.Fatalf("the untouched cookie: %d, want 200", rec.Code)
	}
	t.Run("PasswordChanged", func(t *testing.T) {
		if _, err := SetPassword(tg.users, "bob", []byte("a-new-password-1")); err != nil {
			t.Fatal(err)
		}
		tg.reload(t)
		if rec := tg.serve(get("/status", c), ""); rec.Code != http.StatusSeeOther {
			t.Errorf("bob's old session after a new password: %d, want 303", rec.Code)
		}
	})
	t.Run("UserRemoved", func(t *testing.T) {
		ac := sessionOf(t, tg.serve(postLogin("alice", alicePassword, ""), ""))
		webauthtest.WriteUsers(t, tg.users, map[string]string{"bob": bobPassword})
		tg.reload(t)
		if rec := tg.serve(get("/status", ac), ""); rec.Code != http.StatusSeeOther {
			t.Errorf("a removed user's session: %d, want 303", rec.Code)
		}
	})
}

// reload reads the users file again, as a SIGHUP does.
func (tg *testGuard) reload(t *testing.T) {
	t.Helper()
	users, err := LoadUsers(tg.users)
	if err != nil {
		t.Fatal(err)
	}
	p := *tg.policy.Load()
	p.Users = users
	tg.SetPolicy(p)
}

// TestWrongPassword: a wrong password or an unknown user shows the form
// again with 401; the log names the client, the reason and a known user,
// never the password, nor a name that is no user's (it may be a password
// typed in the wrong box).
func TestWrongPassword(t *testing.T) {
	t.Parallel()
	tg := newTestGuard(t, pagePolicy)
	rec := tg.serve(postLogin("alice", bobPassword, ""), "192.0.2.9:1")
	if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "Wrong user name or password.") {
		t.Errorf("wrong password: %d\n%s", rec.Code, rec.Body)
	}
	if len(rec.Result().Cookies()) != 0 {
		t.Error("a wrong password sets a cookie")
	}
	rec = tg.serve(postLogin(alicePassword, alicePassword, ""), "192.0.2.9:1")
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("unknown user: %d", rec.Code)
	}
	if strings.Contains(rec.Body.String(), alicePassword) {
		t.Error("the form shows what was typed")
	}
	e := tg.logs.FilterMessage(msgLoginFailed).All()
	if len(e) != 2 {
		t.Fatalf("%d failed-login lines, want 2:\n%s", len(e), tg.logText())
	}
	if m := e[0].ContextMap(); m[fieldUser] != "alice" || m[fieldReason] != reasonWrongPassword || m[fieldClient] != "192.0.2.9" {
		t.Errorf("the wrong password's line: %v", m)
	}
	if m := e[1].ContextMap(); m[fieldUser] != nil || m[fieldReason] != reasonUnknownUser {
		t.Errorf("the unknown user's line: %v", m)
	}
	if logs := tg.logText(); strings.Contains(logs, alicePassword) || strings.Contains(logs, bobPassword) {
		t.Errorf("a password in the log:\n%s", logs)
	}
}

// TestRateLimit: after DefaultFailBurst failures an address is refused
// (429, Retry-After) before its password is looked at, the right one
// too, and logged once; another address logs in meanwhile; a minute
// later the address may try again.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	tg := newTestGuard(t, pagePolicy)
	const addr = "198.51.100.4:40000"
	for i := range DefaultFailBurst {
		if rec := tg.serve(postLogin("alice", "wrong-"+strconv.Itoa(i+1), ""), addr); rec.Code != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d, want 401", i+1, rec.Code)
		}
	}
	rec := tg.serve(postLogin("alice", alicePassword, ""), "198.51.100.4:40001")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" || len(rec.Result().Cookies()) != 0 {
		t.Fatalf("after %d failures the right password: %d (Retry-After %q), want 429 and no session",
			DefaultFailBurst, rec.Code, rec.Header().Get("Retry-After"))
	}
	if n := len(tg.logs.FilterMessage(msgLoginLimited).All()); n != 1 {
		t.Errorf("%d lines saying the address is limited, want 1", n)
	}
	// HTTP Basic from that address is refused as well (over TLS).
	r := get("/metrics", nil)
	r.SetBasicAuth("alice", alicePassword)
	r.TLS = &tls.ConnectionState{}
	if rec := tg.serve(r, addr); rec.Code != http.StatusTooManyRequests {
		t.Errorf("basic auth from the limited address: %d, want 429", rec.Code)
	}
	if rec := tg.serve(postLogin("alice", alicePassword, ""), "198.51.100.5:1"); rec.Code != http.StatusSeeOther {
		t.Errorf("another address: %d, want 303 (logged in)", rec.Code)
	}
	tg.clock.Add(DefaultFailEvery)
	if rec := tg.serve(postLogin("alice", alicePassword, ""), addr); rec.Code != http.StatusSeeOther {
		t.Errorf("a minute later: %d, want 303 (logged in)", rec.Code)
	}
	// An IPv6 client counts by its /64: a neighbour address shares it.
	for i := range DefaultFailBurst {
		tg.serve(postLogin("bob", "wrong", ""), "[2001:db8:1:2::"+strconv.Itoa(i+1)+"]:1")
	}
	if rec := tg.serve(postLogin("bob", bobPassword, ""), "[2001:db8:1:2::ff]:1"); rec.Code != http.StatusTooManyRequests {
		t.Errorf("an address of a limited /64: %d, want 429", rec.Code)
	}
}

// TestCrossOrigin: the login and logout forms refuse a post from another
// site (Sec-Fetch-Site or Origin), whatever its password.
func TestCrossOrigin(t *testing.T) {
	t.Parallel()
	tg := newTestGuard(t, pagePolicy)
	for name, set := range map[string]func(*http.Request){
		"SecFetchSite": func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") },
		"Origin":       func(r *http.Request) { r.Header.Del("Sec-Fetch-Site"); r.Header.Set("Origin", "http://evil.example") },
	} {
		t.Run(name, func(t *testing.T) {
			r := postLogin("alice", alicePassword, "")
			set(r)
			rec := tg.serve(r, "")
			if rec.Code != http.StatusForbidden || len(rec.Result().Cookies()) != 0 {
				t.Errorf("cross-site login: %d, cookies %v; want 403 and none", rec.Code, rec.Result().Cookies())
			}
			r = httptest.NewRequest("POST", "http://quotesync.test/logout", nil)
			set(r)
			if rec := tg.serve(r, ""); rec.Code != http.StatusForbidden {
				t.Errorf("cross-site logout: %d, want 403", rec.Code)
			}
		})
	}
	if n := len(tg.logs.FilterMessage(msgCrossOrigin).All()); n != 4 {
		t.Errorf("%d cross-origin lines, want 4", n)
	}
}

// TestNextStaysHome: a login leads only to a path of this site.
func TestNextStaysHome(t *testing.T) {
	t.Parallel()
	g := &Guard{o: Options{Home: "/status"}}
	for next, want := range map[string]string{
		"/status/requests/7?x=1": "/status/requests/7?x=1",
		"":                       "/status",
		"//evil.example/":        "/status",
		"/\\evil.example":        "/status",
		"https://evil.example/":  "/status",
		"javascript:alert(1)":    "/status",
		"status":                 "/status",
		"/login?next=/x":         "/status",
		"/logout":                "/status",
		"/ok\r\nSet-Cookie: x=1": "/status",
	} {
		if got := g.nextPath(next); got != want {
			t.Errorf("nextPath(%q) = %q, want %q", next, got, want)
		}
	}
}

// TestBasicNeedsTLS: HTTP Basic credentials, right ones included, are
// refused over plain HTTP (a real listener), not looked at, and logged;
// over TLS (a real listener with a certificate made here) the right ones
// open /metrics and a wrong one is asked again.
func TestBasicNeedsTLS(t *testing.T) {
	t.Parallel()
	tg := newTestGuard(t, pagePolicy)
	plain := httptest.NewServer(tg)
	t.Cleanup(plain.Close)
	req, _ := http.NewRequest("GET", plain.URL+"/metrics", nil)
	req.SetBasicAuth("alice", alicePassword)
	resp, body := do(t, http.DefaultClient, req)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "only over TLS") || strings.Contains(body, "served") {
		t.Errorf("basic over plain HTTP: %d %q, want 401 saying TLS", resp.StatusCode, body)
	}
	if resp.Header.Get("WWW-Authenticate") != "" {
		t.Error("plain HTTP asks for Basic credentials")
	}
	if e := tg.logs.FilterField(zap.String(fieldReason, reasonBasicWithoutTLS)).All(); len(e) != 1 {
		t.Errorf("basic without TLS logged %d times, want once:\n%s", len(e), tg.logText())
	}
	// A scraper set up so scrapes on: it is logged until its address is
	// limited, then refused quietly.
	for range DefaultFailBurst + 3 {
		resp, _ = do(t, http.DefaultClient, req)
	}
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("basic over plain HTTP, again and again: %d, want 429 in the end", resp.StatusCode)
	}
	if e := tg.logs.FilterField(zap.String(fieldReason, reasonBasicWithoutTLS)).All(); len(e) != DefaultFailBurst {
		t.Errorf("basic without TLS logged %d times, want %d (then limited)", len(e), DefaultFailBurst)
	}
	tg.clock.Add(time.Hour) // the TLS part below comes from the same address

	cert := webauthtest.WriteCert(t, t.TempDir(), "listener")
	pair, err := LoadKeyPair(cert.CertFile, cert.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	var holder Cert
	holder.Store(pair)
	srv := tlsServer(t, tg, &holder)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: cert.ClientConfig()}}
	for _, tt := range []struct {
		user, password string
		code           int
		body           string
	}{
		{"alice", alicePassword, 200, "served /metrics to alice."},
		{"alice", "wrong-password", 401, "wrong user name or password"},
		{"nobody", alicePassword, 401, "wrong user name or password"},
	} {
		req, _ := http.NewRequest("GET", srv.URL+"/metrics", nil)
		req.SetBasicAuth(tt.user, tt.password)
		resp, body := do(t, client, req)
		if resp.StatusCode != tt.code || !strings.Contains(body, tt.body) {
			t.Errorf("basic %s over TLS: %d %q, want %d %q", tt.user, resp.StatusCode, body, tt.code, tt.body)
		}
		if tt.code == 401 && resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("basic %s over TLS: 401 without WWW-Authenticate", tt.user)
		}
	}
	req, _ = http.NewRequest("GET", srv.URL+"/metrics", nil)
	if resp, _ := do(t, client, req); resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
		t.Errorf("no credentials over TLS: %d %q, want 401 asking for Basic", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}

	// A browser over TLS logs in by the form and keeps its session.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Transport: client.Transport}
	form := url.Values{"user": {"bob"}, "password": {bobPassword}, "next": {"/status"}}
	req, _ = http.NewRequest("POST", srv.URL+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", srv.URL)
	if resp, body := do(t, browser, req); resp.StatusCode != 200 || body != "served /status to bob." {
		t.Errorf("form login over TLS: %d %q", resp.StatusCode, body)
	}
	if logs := tg.logText(); strings.Contains(logs, alicePassword) || strings.Contains(logs, bobPassword) {
		t.Errorf("a password in the log:\n%s", logs)
	}
}

// tlsServer serves h over TLS with the certificate of holder, as the
// daemon's listener does (httptest's StartTLS would use its own).
func tlsServer(t *testing.T, h http.Handler, holder *Cert) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = tls.NewListener(srv.Listener, holder.TLSConfig())
	srv.Start()
	srv.URL = strings.Replace(srv.URL, "http://", "https://", 1)
	t.Cleanup(srv.Close)
	return srv
}

func do(t *testing.T, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, strings.TrimSpace(string(b))
}

// TestOpenPaths: a policy opens what it does not guard: /metrics and
// /healthz without Scrape, everything without Page and Scrape.
func TestOpenPaths(t *testing.T) {
	t.Parallel()
	tg := newTestGuard(t, Policy{Page: true, Scrape: false})
	for path, want := range map[string]int{"/metrics": 200, "/healthz": 200, "/status": 303, "/": 303, "/metrics/": 303} {
		if rec := tg.serve(get(path, nil), ""); rec.Code != want {
			t.Errorf("page-only policy, GET %s: %d, want %d", path, rec.Code, want)
		}
	}
	open := newTestGuard(t, Policy{})
	for _, path := range []string{"/metrics", "/status", "/login"} {
		if rec := open.serve(get(path, nil), ""); rec.Code != 200 {
			t.Errorf("open policy, GET %s: %d, want 200 (served)", path, rec.Code)
		}
	}
	if rec := tg.serve(httptest.NewRequest("POST", "http://quotesync.test/status", nil), ""); rec.Code != 401 {
		t.Errorf("POST /status without a session: %d, want 401", rec.Code)
	}
}

// TestSessionLifetimeReload: a reload that shortens the session
// lifetime shortens the sessions already open (counted from their
// login); one that lengthens it applies to new logins only.
func TestSessionLifetimeReload(t *testing.T) {
	t.Parallel()
	tg := newTestGuard(t, pagePolicy) // 2h
	c := sessionOf(t, tg.serve(postLogin("alice", alicePassword, ""), ""))
	setLifetime := func(d time.Duration) {
		p := *tg.policy.Load()
		p.SessionLifetime = d
		tg.SetPolicy(p)
	}
	setLifetime(time.Hour)
	tg.clock.Add(time.Hour - time.Second)
	if rec := tg.serve(get("/status", c), ""); rec.Code != 200 {
		t.Errorf("a second before the new lifetime of 1h ends: %d, want 200", rec.Code)
	}
	tg.clock.Add(time.Second)
	if rec := tg.serve(get("/status", c), ""); rec.Code != http.StatusSeeOther {
		t.Errorf("1h after the login, the lifetime shortened to 1h by a reload: %d, want 303 to the login form", rec.Code)
	}
	setLifetime(3 * time.Hour)
	if rec := tg.serve(get("/status", c), ""); rec.Code != 200 {
		t.Errorf("1h after the login, the lifetime lengthened to 3h: %d, want 200", rec.Code)
	}
	tg.clock.Add(time.Hour)
	if rec := tg.serve(get("/status", c), ""); rec.Code != http.StatusSeeOther {
		t.Errorf("2h after the login, the lifetime at the login: %d, want 303 (the cookie's own expiry)", rec.Code)
	}
}
