package shopdb

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestExplainMySQL8Logins: the driver's errors for a login MySQL 8
// refuses by its authentication plugins come with what to set. The
// driver (go-sql-driver/mysql v1.10) asks a caching_sha2_password server
// for its RSA key over plain TCP; a server that has none answers with an
// error packet, which the driver reports in the words of its auth.go,
// copied here.
func TestExplainMySQL8Logins(t *testing.T) {
	cfg := Config{User: "quotesync", Database: "shop", Addr: "db.workshop.lan:3306"}
	for _, tc := range []struct {
		name string
		err  error
		want []string
	}{
		{"NoRSAKey", fmt.Errorf("unexpected resp from server for caching_sha2_password, perform full authentication"),
			[]string{"caching_sha2_password", "shop.tls: true", "shop.tls_ca_file", "unix socket", "caching_sha2_password_auto_generate_rsa_keys"}},
		{"UnknownPlugin", mysql.ErrUnknownPlugin, []string{"caching_sha2_password", "shop.tls: true"}},
		{"NativeOff", &mysql.MySQLError{Number: 1524, Message: "Plugin 'mysql_native_password' is not loaded"},
			[]string{"MySQL 8.4", "IDENTIFIED WITH caching_sha2_password"}},
		{"NoTLSOnServer", mysql.ErrNoTLS, []string{"offers no TLS", "shop.tls: preferred"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := explainConnect(tc.err, cfg)
			if !errors.Is(got, tc.err) {
				t.Errorf("the explanation lost the driver's error: %v", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got.Error(), w) {
					t.Errorf("the explanation does not say %q:\n%v", w, got)
				}
			}
		})
	}
	if h := authPluginHint(&mysql.MySQLError{Number: 1045, Message: "Access denied"}, "x"); h != "" {
		t.Errorf("a refused password is explained as a plugin's refusal: %s", h)
	}
}
