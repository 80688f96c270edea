package shopdbtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority made for a test, to sign the
// certificate of a Server of its own.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA's certificate, as a client's CA file holds it.
	PEM []byte
}

// NewCA makes a CA named name, valid for a day.
func NewCA(tb testing.TB, name string) *CA {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	return &CA{cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Issue writes a server certificate signed by ca to certFile, and its
// key to keyFile: for the names given (IP addresses or DNS names), or,
// with none, for its Common Name cn only, as MySQL 8's own certificate.
func (ca *CA) Issue(tb testing.TB, cn string, names []string, certFile, keyFile string) {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		tb.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	WriteFile(tb, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	WriteFile(tb, keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}))
}

// WriteFile writes b to path (mode 0600) or fails the test.
func WriteFile(tb testing.TB, path string, b []byte) {
	tb.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// TLSServer is a Server with TLS on, its certificate signed by a CA made
// for the test.
type TLSServer struct {
	*Server
	// CA signed the server's certificate; CAFile holds it, OtherCAFile
	// another CA's (that did not sign it).
	CA                  *CA
	CAFile, OtherCAFile string
	// CertFile and KeyFile are the server's: write a new certificate
	// there with CA.Issue and FLUSH SSL to have the server use it.
	CertFile, KeyFile string
}

// StartTLSServer starts a Server with TLS on, its certificate for cn and
// names (as CA.Issue), signed by a CA named "Workshop LAN CA".
func StartTLSServer(tb testing.TB, cn string, names ...string) *TLSServer {
	tb.Helper()
	dir := tb.TempDir()
	s := &TLSServer{CA: NewCA(tb, "Workshop LAN CA"), CAFile: filepath.Join(dir, "ca.pem"), OtherCAFile: filepath.Join(dir, "other-ca.pem"),
		CertFile: filepath.Join(dir, "server-cert.pem"), KeyFile: filepath.Join(dir, "server-key.pem")}
	WriteFile(tb, s.CAFile, s.CA.PEM)
	WriteFile(tb, s.OtherCAFile, NewCA(tb, "Someone Else's CA").PEM)
	s.CA.Issue(tb, cn, names, s.CertFile, s.KeyFile)
	s.Server = StartServer(tb, ServerOptions{TLSCert: s.CertFile, TLSKey: s.KeyFile, TLSCA: s.CAFile})
	return s
}
