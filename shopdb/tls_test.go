package shopdb_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// TestTLSWithTheServersOwnCA: against a MariaDB started with TLS on and
// a certificate of a CA made here, shop.tls_ca_file connects over TLS
// with the right CA and the name the certificate carries (the host of
// addr, or shop.tls_server_name), and refuses a wrong CA and a wrong
// name with an error that names the key and the fix. The same server,
// given a certificate that carries its name only as a Common Name (as
// MySQL 8's own does), is verified through shop.tls_server_name.
func TestTLSWithTheServersOwnCA(t *testing.T) {
	t.Parallel() // it waits mostly on its own server's start
	srv := shopdbtest.StartTLSServer(t, "db.workshop.lan", "db.workshop.lan", "127.0.0.1")
	caFile, otherFile, ca := srv.CAFile, srv.OtherCAFile, srv.CA
	d := srv.NewSampleShop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	connects := func(t *testing.T, edit func(c *shopdb.Config)) {
		t.Helper()
		cfg := d.Config()
		edit(&cfg)
		db, err := shopdb.Open(ctx, cfg)
		if err != nil {
			t.Fatalf("open with %s, server name %q: %v", filepath.Base(cfg.TLSCAFile), cfg.TLSServerName, err)
		}
		defer db.Close()
		if v := db.SessionStatus(t, ctx, "Ssl_version"); !strings.HasPrefix(v, "TLS") {
			t.Errorf("connected, but the session's Ssl_version is %q: not TLS", v)
		}
	}
	refused := func(t *testing.T, edit func(c *shopdb.Config), key string, wants ...string) {
		t.Helper()
		cfg := d.Config()
		edit(&cfg)
		db, err := shopdb.Open(ctx, cfg)
		if err == nil {
			db.Close()
			t.Fatalf("open with %s, server name %q: connected, want refused", filepath.Base(cfg.TLSCAFile), cfg.TLSServerName)
		}
		var te *shopdb.TLSError
		if !errors.As(err, &te) || te.Key != key {
			t.Errorf("open refused with %v; want a TLS error naming %s", err, key)
		}
		for _, w := range append(wants, key) {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("the error does not say %q:\n%v", w, err)
			}
		}
	}

	t.Run("RightCA", func(t *testing.T) {
		connects(t, func(c *shopdb.Config) { c.TLSCAFile = caFile })
		connects(t, func(c *shopdb.Config) { c.TLSCAFile, c.TLS = caFile, "true" })
		connects(t, func(c *shopdb.Config) { c.TLSCAFile, c.TLSServerName = caFile, "db.workshop.lan" })
	})
	t.Run("WrongCA", func(t *testing.T) {
		refused(t, func(c *shopdb.Config) { c.TLSCAFile = otherFile }, "shop.tls_ca_file",
			"not signed by the CA in "+otherFile, "issued by CN=Workshop LAN CA", "put the certificate of the CA that signed it there")
	})
	t.Run("WrongName", func(t *testing.T) {
		refused(t, func(c *shopdb.Config) { c.TLSCAFile, c.TLSServerName = caFile, "mail.workshop.lan" }, "shop.tls_server_name",
			"is for 127.0.0.1, db.workshop.lan, not mail.workshop.lan", "set shop.tls_server_name to one of them")
	})
	t.Run("SystemCAs", func(t *testing.T) {
		// tls: true trusts only the system's CAs: the server's own CA is
		// unknown to them, and the error says which key takes it.
		cfg := d.Config()
		cfg.TLS = "true"
		db, err := shopdb.Open(ctx, cfg)
		if err == nil {
			db.Close()
			t.Fatal("tls: true against a certificate of a private CA connected")
		}
		if !strings.Contains(err.Error(), "shop.tls_ca_file") {
			t.Errorf("the error does not name shop.tls_ca_file:\n%v", err)
		}
	})

	// MySQL 8's own certificate: no DNS or IP name, its name a Common
	// Name. The server reads its new certificate at FLUSH SSL.
	const mysql8 = "MySQL_Server_8.0.36_Auto_Generated_Server_Certificate"
	ca.Issue(t, mysql8, nil, srv.CertFile, srv.KeyFile)
	if _, err := srv.SQL(t).ExecContext(ctx, "FLUSH SSL"); err != nil {
		t.Fatal(err)
	}
	t.Run("CommonNameOnly", func(t *testing.T) {
		refused(t, func(c *shopdb.Config) { c.TLSCAFile = caFile }, "shop.tls_server_name",
			"its Common Name only", "set shop.tls_server_name: "+mysql8)
		refused(t, func(c *shopdb.Config) { c.TLSCAFile, c.TLSServerName = caFile, "db.workshop.lan" }, "shop.tls_server_name",
			"set shop.tls_server_name: "+mysql8)
		connects(t, func(c *shopdb.Config) { c.TLSCAFile, c.TLSServerName = caFile, mysql8 })
	})
}

// TestConfigValidateTLS: shop.tls, tls_ca_file and tls_server_name are
// checked together, and the CA file is read, each problem naming its key.
func TestConfigValidateTLS(t *testing.T) {
	dir := t.TempDir()
	ca, notPEM := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca.der")
	shopdbtest.WriteFile(t, ca, shopdbtest.NewCA(t, "Workshop LAN CA").PEM)
	shopdbtest.WriteFile(t, notPEM, []byte("not a certificate"))
	for _, tc := range []struct {
		name string
		edit func(c *shopdb.Config)
		want string // "" = valid; else the start of the error
	}{
		{"CA", func(c *shopdb.Config) { c.TLSCAFile = ca }, ""},
		{"CAAndTrue", func(c *shopdb.Config) { c.TLSCAFile, c.TLS = ca, "true" }, ""},
		{"CAAndName", func(c *shopdb.Config) { c.TLSCAFile, c.TLSServerName = ca, "db.workshop.lan" }, ""},
		{"TrueAndName", func(c *shopdb.Config) { c.TLS, c.TLSServerName = "true", "db.workshop.lan" }, ""},
		{"CAAndSkipVerify", func(c *shopdb.Config) { c.TLSCAFile, c.TLS = ca, "skip-verify" },
			`shop.tls: "skip-verify" with shop.tls_ca_file: the CA file is there to verify`},
		{"CAAndOff", func(c *shopdb.Config) { c.TLSCAFile, c.TLS = ca, "false" }, `shop.tls: "false" with shop.tls_ca_file`},
		{"CAMissing", func(c *shopdb.Config) { c.TLSCAFile = filepath.Join(dir, "nope.pem") },
			"shop.tls_ca_file: read " + filepath.Join(dir, "nope.pem") + ": no such file or directory"},
		{"CANotPEM", func(c *shopdb.Config) { c.TLSCAFile = notPEM }, "shop.tls_ca_file: " + notPEM + " holds no PEM certificate"},
		{"NameWithoutTLS", func(c *shopdb.Config) { c.TLSServerName = "db.workshop.lan" }, "shop.tls_server_name: set only with verified TLS"},
		{"NameWithSkipVerify", func(c *shopdb.Config) { c.TLS, c.TLSServerName = "skip-verify", "db.workshop.lan" }, "shop.tls_server_name:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := validConfig()
			tc.edit(&cfg)
			err := cfg.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v, want valid", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Errorf("Validate: %v, want %q…", err, tc.want)
			}
		})
	}
}
