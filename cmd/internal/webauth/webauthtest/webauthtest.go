// Package webauthtest makes what the tests of the listener's login need:
// a users file and a self-signed certificate, written to files.
package webauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"maps"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
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

// WriteCert writes a self-signed certificate for 127.0.0.1, ::1 and
// localhost, valid for a day, and its key, into dir as NAME.pem and
// NAME-key.pem.
func WriteCert(tb testing.TB, dir, name string) Cert {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "quotesync test " + name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	c := Cert{CertFile: filepath.Join(dir, name+".pem"), KeyFile: filepath.Join(dir, name+"-key.pem"), Serial: serial}
	if err := os.WriteFile(c.CertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(c.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		tb.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	c.Pool = x509.NewCertPool()
	c.Pool.AddCert(leaf)
	return c
}
