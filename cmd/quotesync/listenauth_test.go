package main

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/webauth"
	"github.com/quotesync/quotesync/cmd/internal/webauth/webauthtest"
)

// The users of the listener tests; distinctive, so that a test can prove
// no output holds them.
const (
	deskPassword   = "pw-DESK-3f9a61"
	scrapePassword = "pw-SCRAPE-88c2d4"
)

// nonLoopbackIP is an IPv4 address of this machine beyond loopback, or
// "" when it has none.
func nonLoopbackIP() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// nonLoopbackListens are the listen addresses beyond loopback the tests
// try: every address, and one of this machine's own when it has one.
func nonLoopbackListens(t *testing.T) []string {
	out := []string{"0.0.0.0:0"}
	if ip := nonLoopbackIP(); ip != "" {
		out = append(out, net.JoinHostPort(ip, "0"))
	} else {
		t.Log("this machine has no non-loopback IPv4 address: 0.0.0.0:0 (every address) is the one beyond loopback")
	}
	return out
}

// TestListenerRefusesOpenNetwork: `run` refuses (exit 2, before the
// database) a listener beyond loopback with neither metrics.users_file
// nor metrics.auth: none, naming both fixes; check fails the config file
// with the same words. metrics.allow_non_loopback: true, from older
// files, still starts, open, with a warning.
func TestListenerRefusesOpenNetwork(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, nil)
	for _, addr := range nonLoopbackListens(t) {
		e.writeConfig(func(fc *config.File) { fc.Metrics.Listen = addr })
		r := e.run("run", "--config", e.Conf)
		if r.Code != exitUsage {
			t.Fatalf("run with %s and no login: %s", addr, r)
		}
		for _, want := range []string{"metrics.listen", "is not a loopback address", "metrics.users_file", "quotesync passwd", "metrics.auth: none"} {
			if !strings.Contains(r.Stderr, want) {
				t.Errorf("run with %s: the refusal lacks %q:\n%s", addr, want, r.Stderr)
			}
		}
		r = e.run("check", "--config", e.Conf)
		if l := checkLine(r.Stdout, "config file"); r.Code != exitUsage || !strings.HasPrefix(l, "FAIL") || !strings.Contains(l, "metrics.auth: none") {
			t.Errorf("check with %s and no login: line %q\n%s", addr, l, r)
		}
	}

	e.writeConfig(func(fc *config.File) {
		fc.Metrics.Listen, fc.Metrics.AllowNonLoopback = "0.0.0.0:0", true
		fc.Sync.Schedule = "@every 1h"
	})
	d := startDaemon(t, e)
	if logEntry(d.out.String(), msgListenerOpenDeprecated, fieldAuth, config.AuthNone) == nil {
		t.Errorf("no warning that allow_non_loopback is deprecated:\n%s", d.out.String())
	}
	if code, _ := httpGet(t, "http://"+loopbackOf(d.addr)+"/status"); code != 200 {
		t.Errorf("/status under allow_non_loopback: %d, want 200 (open, as before)", code)
	}
	d.stop(t)
}

// loopbackOf is addr (a listener's) with the host 127.0.0.1.
func loopbackOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return net.JoinHostPort("127.0.0.1", port)
}

// loginWorld is a cliEnv whose listener is beyond loopback, behind a
// login of the users file, over TLS.
type loginWorld struct {
	*cliEnv
	users string
	cert  webauthtest.Cert
}

func newLoginWorld(t *testing.T, edit func(fc *config.File)) *loginWorld {
	t.Helper()
	dir := t.TempDir()
	w := &loginWorld{users: filepath.Join(dir, "users"), cert: webauthtest.WriteCert(t, dir, "one")}
	webauthtest.WriteUsers(t, w.users, map[string]string{"frontdesk": deskPassword, "prometheus": scrapePassword})
	w.cliEnv = newCLIEnv(t, func(fc *config.File) {
		fc.Metrics.Listen = "0.0.0.0:0"
		fc.Metrics.UsersFile = w.users
		fc.Metrics.TLSCertFile, fc.Metrics.TLSKeyFile = w.cert.CertFile, w.cert.KeyFile
		if edit != nil {
			edit(fc)
		}
	})
	return w
}

// secrets adds the users' passwords to what no output may hold.
func (w *loginWorld) secrets() []string {
	return append(w.cliEnv.secrets(), deskPassword, scrapePassword)
}

// TestListenerLoginReload runs the daemon (the real binary) on 0.0.0.0
// behind the users file, over TLS, reached through a non-loopback
// address of the machine when it has one: /metrics takes a user by HTTP
// Basic, /status sends a stranger to the login form. A SIGHUP after the
// users file and the certificate were replaced puts both in force in the
// running listener: the removed user is refused, the new one let in, and
// new connections get the new certificate. A broken users file rejects
// the next reload, and the users in force stay.
func TestListenerLoginReload(t *testing.T) {
	t.Parallel()
	w := newLoginWorld(t, func(fc *config.File) { fc.Sync.Schedule = "@every 1h" })
	d := startDaemon(t, w.cliEnv)
	if logEntry(d.out.String(), msgListenerAuth, fieldAuth, config.AuthUsers, fieldScrapeAuth, config.AuthUsers) == nil {
		t.Errorf("no log line saying who the listener lets in:\n%s", d.out.String())
	}
	host := nonLoopbackIP()
	if host == "" {
		host = "127.0.0.1"
	}
	_, port, _ := net.SplitHostPort(d.addr)
	base := "https://" + net.JoinHostPort(host, port)

	// get fetches path as user over a new connection, and reports the
	// serial of the certificate the listener showed.
	get := func(path, user, password string, cert webauthtest.Cert) (int, string, string) {
		t.Helper()
		cfg := cert.ClientConfig()
		cfg.ServerName = "localhost" // the test certificate names loopback and localhost
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		req, _ := http.NewRequest("GET", base+path, nil)
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s as %q: %v", path, user, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body) + resp.Header.Get("Location"), resp.TLS.PeerCertificates[0].SerialNumber.String()
	}

	if code, body, serial := get("/metrics", "prometheus", scrapePassword, w.cert); code != 200 || !strings.Contains(body, "quotesync_build_info") || serial != w.cert.Serial.String() {
		t.Errorf("/metrics with the scraper's user: %d, certificate %s (want 200 and %s)", code, serial, w.cert.Serial)
	}
	if code, _, _ := get("/metrics", "", "", w.cert); code != http.StatusUnauthorized {
		t.Errorf("/metrics without a user: %d, want 401", code)
	}
	if code, _, _ := get("/healthz", "prometheus", "not-the-password", w.cert); code != http.StatusUnauthorized {
		t.Errorf("/healthz with a wrong password: %d, want 401", code)
	}
	if code, loc, _ := get("/status", "", "", w.cert); code != http.StatusSeeOther || !strings.HasSuffix(loc, "/login?next=%2Fstatus") {
		t.Errorf("/status without a login: %d %q, want 303 to the login form", code, loc)
	}

	// The front desk's user leaves, a new one arrives; a new certificate.
	webauthtest.WriteUsers(t, w.users, map[string]string{"prometheus": scrapePassword, "newdesk": deskPassword})
	two := webauthtest.WriteCert(t, t.TempDir(), "two")
	copyFile(t, two.CertFile, w.cert.CertFile)
	copyFile(t, two.KeyFile, w.cert.KeyFile)
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	d.waitLog(t, "the reload", msgReloaded)
	if code, _, serial := get("/healthz", "newdesk", deskPassword, two); code != 200 || serial != two.Serial.String() {
		t.Errorf("after the reload, the new user: %d, certificate %s; want 200 and the new certificate %s", code, serial, two.Serial)
	}
	if code, _, _ := get("/healthz", "frontdesk", deskPassword, two); code != http.StatusUnauthorized {
		t.Errorf("after the reload, the removed user: %d, want 401", code)
	}

	// A users file broken by hand rejects the reload; the users in force stay.
	if err := os.WriteFile(w.users, []byte("newdesk:"+deskPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	d.waitLog(t, "the rejected reload", msgReloadRejected)
	if e := logEntry(d.out.String(), msgReloadRejected); e == nil || !strings.Contains(e["error"].(string), "metrics.users_file") {
		t.Errorf("the rejection does not name metrics.users_file: %v", e)
	}
	if code, _, _ := get("/healthz", "newdesk", deskPassword, two); code != 200 {
		t.Errorf("after a rejected reload, the user in force: %d, want 200", code)
	}
	d.stop(t)
	for _, s := range w.secrets() {
		if strings.Contains(d.out.String(), s) {
			t.Errorf("the daemon's log holds a secret or a password")
		}
	}
	if e := logEntry(d.out.String(), "login failed", "reason", "wrong_password", "user", "prometheus"); e == nil || e["client"] != host {
		t.Errorf("the wrong password is not logged with its client %s: %v", host, e)
	}
}

// copyFile replaces dst by src's content.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCheckListener: check says who the listener lets in and why, reads
// the users file and the certificate, and warns where the setup leaves
// something open or broken.
func TestCheckListener(t *testing.T) {
	t.Parallel()
	w := newLoginWorld(t, nil)
	// The file at quotesync passwd's cost; newLoginWorld's, at bcrypt's
	// lowest (fast to log in with), is the weak one.
	dir := t.TempDir()
	weak, open := filepath.Join(dir, "weak-users"), filepath.Join(dir, "open-users")
	copyFile(t, w.users, weak)
	webauthtest.WriteUsersAtCost(t, w.users, map[string]string{"frontdesk": deskPassword, "prometheus": scrapePassword}, webauth.GoodCost)
	copyFile(t, w.users, open)
	if err := os.Chmod(open, 0o640); err != nil {
		t.Fatal(err)
	}
	openKey := filepath.Join(dir, "open-key.pem")
	copyFile(t, w.cert.KeyFile, openKey)
	if err := os.Chmod(openKey, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		edit   func(fc *config.File)
		status string
		want   []string
	}{
		{"UsersTLS", nil, "ok", []string{"0.0.0.0:0 (beyond loopback)", "needs a login of a user of " + w.users,
			"2 users", "certificate valid until"}},
		{"NoTLS", func(fc *config.File) { fc.Metrics.TLSCertFile, fc.Metrics.TLSKeyFile = "", "" }, "warn",
			[]string{"cross the network in clear", "Prometheus cannot scrape /metrics"}},
		{"OpenScrape", func(fc *config.File) { fc.Metrics.ScrapeAuth = config.AuthNone }, "warn",
			[]string{"/metrics and /healthz are open to everyone on the network"}},
		{"AuthNone", func(fc *config.File) { fc.Metrics.UsersFile, fc.Metrics.Auth = "", config.AuthNone }, "warn",
			[]string{"no login (metrics.auth: none): everyone on the network"}},
		{"Loopback", func(fc *config.File) {
			fc.Metrics.Listen, fc.Metrics.UsersFile, fc.Metrics.TLSCertFile, fc.Metrics.TLSKeyFile = "127.0.0.1:0", "", "", ""
		}, "ok", []string{"loopback: only this machine reaches it", "no login"}},
		{"MissingUsers", func(fc *config.File) { fc.Metrics.UsersFile = w.users + ".gone" }, "FAIL",
			[]string{"metrics.users_file", "no such file"}},
		{"WeakHashes", func(fc *config.File) { fc.Metrics.UsersFile = weak }, "warn",
			[]string{"2 users of " + weak + " (frontdesk, prometheus) have a bcrypt hash below cost 10", "htpasswd -B -C 10"}},
		{"UsersFileOpen", func(fc *config.File) { fc.Metrics.UsersFile = open }, "warn",
			[]string{open + " is readable by others (mode 0640): chmod 600 " + open}},
		{"KeyReadable", func(fc *config.File) { fc.Metrics.TLSKeyFile = openKey }, "FAIL",
			[]string{"metrics.tls_cert_file, tls_key_file", openKey, "readable by every user of this machine (mode 0644)", "chmod 600 " + openKey}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w.writeConfig(func(fc *config.File) {
				fc.Metrics.Listen, fc.Metrics.UsersFile = "0.0.0.0:0", w.users
				fc.Metrics.TLSCertFile, fc.Metrics.TLSKeyFile = w.cert.CertFile, w.cert.KeyFile
				if tt.edit != nil {
					tt.edit(fc)
				}
			})
			r := w.run("check", "--config", w.Conf)
			block := checkBlock(r.Stdout, "listener")
			if !strings.HasPrefix(block, tt.status+" ") {
				t.Errorf("listener: %q, want %s\n%s", block, tt.status, r)
			}
			for _, s := range tt.want {
				if !strings.Contains(block, s) {
					t.Errorf("listener lacks %q:\n%s", s, block)
				}
			}
		})
	}
}

// checkBlock is one check's line and its continuation lines.
func checkBlock(out, name string) string {
	first := checkLine(out, name)
	if first == "" {
		return ""
	}
	rest := out[strings.Index(out, first)+len(first):]
	var b strings.Builder
	b.WriteString(first)
	for _, l := range strings.Split(rest, "\n")[1:] {
		if !strings.HasPrefix(l, "      ") {
			break
		}
		b.WriteString("\n" + strings.TrimSpace(l))
	}
	return b.String()
}
