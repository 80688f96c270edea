package config

import (
	"strings"
	"testing"
	"time"
)

// TestListenerDecision walks the decision of who the listener lets in:
// loopback is open unless a users file is set; beyond loopback it takes a
// users file or an explicit auth: none (allow_non_loopback still opens
// it, deprecated) and is refused otherwise; /metrics and /healthz are open
// on loopback and follow auth beyond it unless scrape_auth says.
func TestListenerDecision(t *testing.T) {
	const users, cert, key = "/etc/quotesync/users", "/etc/quotesync/tls/cert.pem", "/etc/quotesync/tls/key.pem"
	tests := []struct {
		name         string
		m            MetricsSection
		page, scrape string
		loopback     bool
		exposed      bool
		deprecated   bool
		err          []string // substrings of the error; nil: valid
	}{
		{name: "Off", m: MetricsSection{}, page: AuthNone, scrape: AuthNone},
		{name: "LoopbackV4", m: MetricsSection{Listen: "127.0.0.1:9464"}, page: AuthNone, scrape: AuthNone, loopback: true},
		{name: "LoopbackV6", m: MetricsSection{Listen: "[::1]:9464"}, page: AuthNone, scrape: AuthNone, loopback: true},
		{name: "Localhost", m: MetricsSection{Listen: "localhost:9464"}, page: AuthNone, scrape: AuthNone, loopback: true},
		{name: "LoopbackUsers", m: MetricsSection{Listen: "127.0.0.1:9464", UsersFile: users},
			page: AuthUsers, scrape: AuthNone, loopback: true},
		{name: "LoopbackUsersScrape", m: MetricsSection{Listen: "127.0.0.1:9464", UsersFile: users, ScrapeAuth: AuthUsers},
			page: AuthUsers, scrape: AuthUsers, loopback: true},
		{name: "EveryAddressUsers", m: MetricsSection{Listen: "0.0.0.0:9464", UsersFile: users, TLSCertFile: cert, TLSKeyFile: key},
			page: AuthUsers, scrape: AuthUsers},
		{name: "LANUsersOpenScrape", m: MetricsSection{Listen: "192.168.1.10:9464", UsersFile: users, ScrapeAuth: AuthNone},
			page: AuthUsers, scrape: AuthNone, exposed: true},
		{name: "ExplicitNone", m: MetricsSection{Listen: "0.0.0.0:9464", Auth: AuthNone}, page: AuthNone, scrape: AuthNone, exposed: true},
		{name: "Deprecated", m: MetricsSection{Listen: "0.0.0.0:9464", AllowNonLoopback: true},
			page: AuthNone, scrape: AuthNone, exposed: true, deprecated: true},
		{name: "DeprecatedWithUsers", m: MetricsSection{Listen: "0.0.0.0:9464", AllowNonLoopback: true, UsersFile: users},
			page: AuthUsers, scrape: AuthUsers},
		{name: "RefusedEveryAddress", m: MetricsSection{Listen: "0.0.0.0:9464"},
			err: []string{"metrics.listen: 0.0.0.0:9464 is not a loopback address", "metrics.users_file", "quotesync passwd", "metrics.auth: none", "127.0.0.1:9464"}},
		{name: "RefusedNoHost", m: MetricsSection{Listen: ":9464"}, err: []string{"metrics.listen", "no login"}},
		{name: "RefusedHostName", m: MetricsSection{Listen: "shop-server.lan:9464"}, err: []string{"metrics.listen", "no login"}},
		{name: "UsersWithoutFile", m: MetricsSection{Listen: "0.0.0.0:9464", Auth: AuthUsers},
			err: []string{"metrics.auth: users needs metrics.users_file", "quotesync passwd"}},
		{name: "NoneAndFile", m: MetricsSection{Listen: "0.0.0.0:9464", Auth: AuthNone, UsersFile: users},
			err: []string{"metrics.auth: none, yet metrics.users_file is set"}},
		{name: "BadMode", m: MetricsSection{Listen: "127.0.0.1:9464", Auth: "password"},
			err: []string{`metrics.auth: "password" is not a mode`, "users", "none"}},
		{name: "BadScrapeMode", m: MetricsSection{Listen: "127.0.0.1:9464", ScrapeAuth: "basic"},
			err: []string{`metrics.scrape_auth: "basic" is not a mode`}},
		{name: "ScrapeUsersNoFile", m: MetricsSection{Listen: "127.0.0.1:9464", ScrapeAuth: AuthUsers},
			err: []string{"metrics.scrape_auth: users needs metrics.users_file"}},
		{name: "CertWithoutKey", m: MetricsSection{Listen: "0.0.0.0:9464", UsersFile: users, TLSCertFile: cert},
			err: []string{"metrics.tls_cert_file and metrics.tls_key_file: set both"}},
		{name: "RelativeUsers", m: MetricsSection{Listen: "127.0.0.1:9464", UsersFile: "users"},
			err: []string{`metrics.users_file: "users" must be an absolute path`}},
		{name: "ShortSession", m: MetricsSection{Listen: "127.0.0.1:9464", SessionLifetime: 30 * time.Second},
			err: []string{"metrics.session_lifetime: 30s is out of range"}},
		{name: "NoPort", m: MetricsSection{Listen: "127.0.0.1"}, err: []string{"metrics.listen", "host:port"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := tt.m.Listener()
			if tt.err != nil {
				if err == nil {
					t.Fatalf("no error; decided %+v", a)
				}
				for _, w := range tt.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Page != tt.page || a.Scrape != tt.scrape || a.Loopback != tt.loopback || a.Exposed != tt.exposed || a.Deprecated != tt.deprecated {
				t.Errorf("page %s scrape %s loopback %t exposed %t deprecated %t; want %s %s %t %t %t",
					a.Page, a.Scrape, a.Loopback, a.Exposed, a.Deprecated, tt.page, tt.scrape, tt.loopback, tt.exposed, tt.deprecated)
			}
			if len(a.Why) == 0 {
				t.Error("no words for check")
			}
			if a.SessionLifetime != DefaultSessionLifetime {
				t.Errorf("session lifetime %s, want the default %s", a.SessionLifetime, DefaultSessionLifetime)
			}
		})
	}
}

// TestEffectiveListener: `quotesync config` shows the listener's keys,
// the decided defaults among them, and the TLS key only by where it is.
func TestEffectiveListener(t *testing.T) {
	path := writeFile(t, `
metrics:
  listen: 0.0.0.0:9464
  users_file: /etc/quotesync/users
  tls_cert_file: /etc/quotesync/tls/cert.pem
  tls_key_file: /etc/quotesync/tls/key.pem
`)
	es, err := Effective(path, "", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	got := entryMap(es)
	for key, want := range map[string]Entry{
		"metrics.auth":             {Value: AuthUsers, Origin: OriginDefault},
		"metrics.scrape_auth":      {Value: AuthUsers, Origin: OriginDefault},
		"metrics.session_lifetime": {Value: "12h0m0s", Origin: OriginDefault},
		"metrics.users_file":       {Value: "/etc/quotesync/users", Origin: OriginFile},
		"metrics.tls_cert_file":    {Value: "/etc/quotesync/tls/cert.pem", Origin: OriginFile},
		"metrics.tls_key_file":     {Value: "/etc/quotesync/tls/key.pem", Origin: OriginFile},
		"metrics.tls_key":          {Value: hiddenValue, Origin: OriginSecretFile},
	} {
		if e := got[key]; e.Value != want.Value || e.Origin != want.Origin {
			t.Errorf("%s = %q (%s), want %q (%s)", key, e.Value, e.Origin, want.Value, want.Origin)
		}
	}
	if _, ok := got["metrics.tls_cert"]; ok {
		t.Error("the certificate is listed as a secret")
	}
	es, err = Effective(writeFile(t, "metrics:\n  listen: 127.0.0.1:9464\n"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	got = entryMap(es)
	if e := got["metrics.tls_key_file"]; e.Value != "none (plain HTTP)" || e.Origin != OriginDefault {
		t.Errorf("an unset tls_key_file: %+v, want listed with its default", e)
	}
	if e := got["metrics.auth"]; e.Value != AuthNone {
		t.Errorf("metrics.auth on loopback: %+v, want none", e)
	}
}

// TestListenerErrorsInOrder: several wrong keys are named in the file's
// order, the same on every call (they were read from maps, whose order
// Go varies from run to run).
func TestListenerErrorsInOrder(t *testing.T) {
	m := MetricsSection{Listen: "127.0.0.1:9464", UsersFile: "users", TLSCertFile: "cert.pem", TLSKeyFile: "key.pem",
		Auth: "nobody", ScrapeAuth: "everyone"}
	want := []string{"metrics.users_file:", "metrics.tls_cert_file:", "metrics.tls_key_file:", "metrics.auth:", "metrics.scrape_auth:"}
	for range 20 {
		_, err := m.Listener()
		if err == nil {
			t.Fatal("no error for five wrong keys")
		}
		var got []string
		for line := range strings.Lines(err.Error()) {
			got = append(got, strings.Fields(line)[0])
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("errors name %q, want %q in that order:\n%v", got, want, err)
		}
	}
}
