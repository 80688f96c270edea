// Package webauthtest makes what the tests of the listener's login need:
// a users file and a self-signed certificate, written to files.
package webauthtest

import (
	"crypto/tls"
	"crypto/x509"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// WriteUsers writes a users file of users (name to password) at path,
// hashed at bcrypt's lowest cost to keep tests fast.
func WriteUsers(tb testing.TB, path string, users map[string]string) {
	tb.Helper()
	WriteUsersAtCost(tb, path, users, bcrypt.MinCost)
}

// WriteUsersAtCost is WriteUsers with hashes of the given bcrypt cost.
func WriteUsersAtCost(tb testing.TB, path string, users map[string]string, cost int) {
	tb.Helper()
	var b strings.Builder
	for _, n := range slices.Sorted(maps.Keys(users)) {
		h, err := bcrypt.GenerateFromPassword([]byte(users[n]), cost)
		if err != nil {
			tb.Fatal(err)
		}
		b.WriteString(n + ":" + string(h) + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// Cert is a certificate written by WriteCert.
type Cert struct {
	CertFile, KeyFile string
	// Pool trusts the certificate, for a client.
	Pool *x509.CertPool
	// Serial tells this certificate from another.
	Serial *big.Int
}

// ClientConfig is a TLS client configuration that trusts c.
func (c Cert) ClientConfig() *tls.Config {
	return &tls.Config{RootCAs: c.Pool, MinVersion: tls.VersionTLS12}
}

// WriteCert writes a certificate for 127.0.0.1, ::1 and localhost,
// valid for a day and signed by a CA of its own (which Pool trusts), and
// its key, into dir as NAME.pem and NAME-key.pem.
func WriteCert(tb testing.TB, dir, name string) Cert {
	tb.Helper()
	ca := shopdbtest.NewCA(tb, "quotesync test CA "+name)
	c := Cert{CertFile: filepath.Join(dir, name+".pem"), KeyFile: filepath.Join(dir, name+"-key.pem"), Pool: x509.NewCertPool()}
	ca.Issue(tb, "quotesync test "+name, []string{"127.0.0.1", "::1", "localhost"}, c.CertFile, c.KeyFile)
	pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		tb.Fatal(err)
	}
	c.Pool.AppendCertsFromPEM(ca.PEM)
	c.Serial = pair.Leaf.SerialNumber
	return c
}
