package main

import (
	"strings"
	"testing"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// TestCheckDatabaseWithItsOwnCertificate: check against a MariaDB the
// test starts with TLS on, its certificate signed by a CA made here and
// naming db.workshop.lan: with shop.tls_ca_file and tls_server_name right
// the database line says the connection is verified; a wrong CA, or an
// address whose host the certificate does not name, fail that line
// naming the key and the fix; skip-verify beside a CA file is a bad file.
func TestCheckDatabaseWithItsOwnCertificate(t *testing.T) {
	t.Parallel()
	srv := shopdbtest.StartTLSServer(t, "db.workshop.lan", "db.workshop.lan")
	caFile, otherFile := srv.CAFile, srv.OtherCAFile
	e := newCLIEnvOn(t, srv.Server, nil)

	for _, tc := range []struct {
		name       string
		file, tls  string
		serverName string
		code       int
		want       []string
	}{
		{"Verified", caFile, "", "db.workshop.lan", exitOK,
			[]string{"ok    database", "over TLS, the server's certificate verified against " + caFile}},
		{"WrongCA", otherFile, "", "db.workshop.lan", exitFailure,
			[]string{"FAIL  database", "shop.tls_ca_file: the server's certificate (CN=db.workshop.lan, issued by CN=Workshop LAN CA) is not signed by the CA in " + otherFile,
				"put the certificate of the CA that signed it there"}},
		{"NameNotTheHost", caFile, "", "", exitFailure,
			[]string{"FAIL  database", "shop.tls_server_name: the server's certificate is for db.workshop.lan, not 127.0.0.1 (the host of shop.addr)",
				"set shop.tls_server_name to one of them"}},
		{"SkipVerifyWithCA", caFile, "skip-verify", "", exitUsage,
			[]string{`shop.tls: "skip-verify" with shop.tls_ca_file`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.writeConfig(func(fc *config.File) {
				fc.Shop.TLSCAFile, fc.Shop.TLS, fc.Shop.TLSServerName = tc.file, tc.tls, tc.serverName
			})
			r := e.run("check", "--config", e.Conf)
			if r.Code != tc.code {
				t.Errorf("exit %d, want %d", r.Code, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Stdout, w) {
					t.Errorf("check does not say %q:\n%s", w, r)
				}
			}
		})
	}
}
