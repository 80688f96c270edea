package webauth

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Cert is the listener's certificate, swapped in place when it is read
// again (on SIGHUP): connections made after the swap get the new one.
type Cert struct {
	cur atomic.Pointer[tls.Certificate]
}

// LoadKeyPair reads a PEM certificate (chain) and its key, and parses the
// leaf; its errors name the files, never the key.
func LoadKeyPair(certFile, keyFile string) (*tls.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load TLS certificate %s and key %s: %w", certFile, keyFile, unwrapPath(err))
	}
	if pair.Leaf == nil {
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, fmt.Errorf("parse TLS certificate %s: %w", certFile, err)
		}
	}
	return &pair, nil
}

// Store makes pair the certificate of the next connections.
func (c *Cert) Store(pair *tls.Certificate) { c.cur.Store(pair) }

// GetCertificate is tls.Config.GetCertificate: the current pair.
func (c *Cert) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if p := c.cur.Load(); p != nil {
		return p, nil
	}
	return nil, errors.New("no TLS certificate loaded")
}

// TLSConfig is the listener's TLS configuration: TLS 1.2 or later, the
// current certificate.
func (c *Cert) TLSConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: c.GetCertificate}
}

// NotAfter is when pair's leaf expires.
func NotAfter(pair *tls.Certificate) time.Time {
	if pair == nil || pair.Leaf == nil {
		return time.Time{}
	}
	return pair.Leaf.NotAfter
}
