package shopdb

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
)

// A database server with a certificate of its own: MySQL 8 makes one at
// install (ca.pem and server-cert.pem in its data directory), and a shop's
// server on the LAN is often signed by the shop's own CA. shop.tls_ca_file
// names that CA, and the connection then verifies the server's certificate
// against it, and its name: the host of shop.addr, or shop.tls_server_name.
//
// The verification is quotesync's own (VerifyConnection) rather than the
// standard library's, for two reasons: its errors name the key to change
// and what the certificate holds; and MySQL 8's own certificate carries
// its name only as a Common Name ("MySQL_Server_8.0.36_Auto_Generated_
// Server_Certificate"), which Go no longer reads as a host name. Such a
// name is accepted only when it is exactly shop.tls_server_name, and only
// on a certificate without DNS or IP names.

// TLSError says why the server's certificate was refused, naming the
// key to change; Connect errors wrap it.
type TLSError struct {
	Key    string // the key to change: shop.tls_ca_file or shop.tls_server_name
	Reason string // what is wrong and the fix
	Err    error  // the verifier's own error, if any
}

func (e *TLSError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s (%v)", e.Key, e.Reason, e.Err)
	}
	return e.Key + ": " + e.Reason
}

func (e *TLSError) Unwrap() error { return e.Err }

// validateTLS checks shop.tls, shop.tls_ca_file and shop.tls_server_name
// together, and reads the CA file.
func (c Config) validateTLS() error {
	switch c.TLS {
	case "", "false", "true", "skip-verify", "preferred":
	default:
		return fmt.Errorf("shop.tls: %q must be one of false, true, skip-verify, preferred", c.TLS)
	}
	if c.TLSCAFile == "" {
		if c.TLSServerName != "" && c.TLS != "true" {
			return fmt.Errorf("shop.tls_server_name: set only with verified TLS: shop.tls_ca_file (the server's CA), or shop.tls: true (the system's CAs)")
		}
		return nil
	}
	switch c.TLS {
	case "", "true":
	default:
		return fmt.Errorf("shop.tls: %q with shop.tls_ca_file: the CA file is there to verify the server's certificate; remove shop.tls (or write true)", c.TLS)
	}
	_, err := c.caPool()
	return err
}

// caPool reads shop.tls_ca_file.
func (c Config) caPool() (*x509.CertPool, error) {
	pem, err := os.ReadFile(c.TLSCAFile)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("shop.tls_ca_file: read %s: %w", c.TLSCAFile, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("shop.tls_ca_file: %s holds no PEM certificate (-----BEGIN CERTIFICATE-----); give the CA's certificate, e.g. ca.pem of a MySQL 8 data directory", c.TLSCAFile)
	}
	return pool, nil
}

// tlsConfig is the connection's TLS when shop.tls_ca_file is set (nil
// when it is not: shop.tls then says what the driver does).
func (c Config) tlsConfig() (*tls.Config, error) {
	if c.TLSCAFile == "" {
		if c.TLS == "true" && c.TLSServerName != "" {
			return &tls.Config{ServerName: c.TLSServerName, MinVersion: tls.VersionTLS12}, nil
		}
		return nil, nil
	}
	pool, err := c.caPool()
	if err != nil {
		return nil, err
	}
	name := c.TLSServerName
	if name == "" {
		host, _, err := net.SplitHostPort(c.Addr)
		if err != nil {
			host = c.Addr
		}
		name = host
	}
	v := verifier{roots: pool, name: name, byKey: c.TLSServerName != "", caFile: c.TLSCAFile}
	cfg := &tls.Config{
		// The chain and the name are verified by VerifyConnection.
		InsecureSkipVerify: true,
		VerifyConnection:   v.verify,
		MinVersion:         tls.VersionTLS12,
	}
	if net.ParseIP(name) == nil && !strings.HasPrefix(name, "/") {
		cfg.ServerName = name // SNI
	}
	return cfg, nil
}

// verifier checks the server's certificate against the CA of
// shop.tls_ca_file and the name it must carry.
type verifier struct {
	roots  *x509.CertPool
	name   string // the host of shop.addr, or shop.tls_server_name
	byKey  bool   // name is shop.tls_server_name
	caFile string
}

func (v verifier) verify(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return &TLSError{Key: "shop.tls_ca_file", Reason: "the server sent no certificate"}
	}
	leaf := cs.PeerCertificates[0]
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: v.roots, Intermediates: inter}); err != nil {
		return &TLSError{Key: "shop.tls_ca_file", Err: err, Reason: fmt.Sprintf(
			"the server's certificate (%s, issued by %s) is not signed by the CA in %s: put the certificate of the CA that signed it there "+
				"(for MySQL 8's own certificate, ca.pem of the server's data directory)", certName(leaf.Subject), certName(leaf.Issuer), v.caFile)}
	}
	if err := leaf.VerifyHostname(v.name); err == nil {
		return nil
	}
	if v.byKey && len(leaf.DNSNames) == 0 && len(leaf.IPAddresses) == 0 && leaf.Subject.CommonName == v.name {
		return nil // MySQL 8's own certificate: its name is its Common Name
	}
	return &TLSError{Key: "shop.tls_server_name", Reason: v.nameFix(leaf)}
}

// nameFix says which names the certificate carries and what to set.
func (v verifier) nameFix(leaf *x509.Certificate) string {
	names := slices.Clone(leaf.DNSNames)
	for _, ip := range leaf.IPAddresses {
		names = append(names, ip.String())
	}
	var fix string
	switch {
	case len(names) > 0:
		fix = "set shop.tls_server_name to one of them (or shop.addr to that host name)"
	case leaf.Subject.CommonName != "":
		names = []string{leaf.Subject.CommonName + " (its Common Name only, as MySQL 8's own certificate has)"}
		fix = fmt.Sprintf("set shop.tls_server_name: %s", leaf.Subject.CommonName)
	default:
		return fmt.Sprintf("the server's certificate names no server at all, so it cannot be told from another signed by the same CA: give the server a certificate that names %s", v.name)
	}
	what := "the host of shop.addr"
	if v.byKey {
		what = "shop.tls_server_name"
	}
	slices.Sort(names)
	return fmt.Sprintf("the server's certificate is for %s, not %s (%s): %s", strings.Join(names, ", "), v.name, what, fix)
}

// certName is a certificate's subject or issuer, by its Common Name when
// it has one.
func certName(n pkix.Name) string {
	if n.CommonName != "" {
		return "CN=" + n.CommonName
	}
	return n.String()
}
