package webauth

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync/atomic"
	"time"
)

// Cert is the listener's certificate, swapped in place when it is read
// again (on SIGHUP): connections made after the swap get the new one.
type Cert struct {
	cur atomic.Pointer[tls.Certificate]
}

// LoadKeyPair reads a PEM certificate (chain) and its key, and parses the
// leaf; its errors name the files, never the key. A key file that every
// user may read is refused, with the fix: whoever reads it can pose as the
// listener (the group may: that is how the service is given the key).
func LoadKeyPair(certFile, keyFile string) (*tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("load TLS certificate %s: %w", certFile, unwrapPath(err))
	}
	keyPEM, err := readPrivate(keyFile)
	if err != nil {
		return nil, fmt.Errorf("load TLS key %s: %w", keyFile, err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("load TLS certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return &pair, nil // Leaf parsed by X509KeyPair (Go 1.23+)
}

var errKeyReadable = errors.New("readable by every user of this machine")

// readPrivate reads the key file at path, refusing it (errKeyReadable,
// its mode and the fix) when its mode lets every user read it.
func readPrivate(path string) ([]byte, error) {
	data, _, err := readSmall(path, maxKeyBytes, func(perm fs.FileMode) error {
		if perm&0o004 != 0 {
			return fmt.Errorf("%w (mode %04o): chmod 600 %s (or 640 with the group of the user quotesync runs as), then reload", errKeyReadable, perm, path)
		}
		return nil
	})
	return data, err
}

// maxKeyBytes caps a key file: a PEM key is a few kilobytes.
const maxKeyBytes = 1 << 20

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
