package middleware

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
)

// CAFileTLSCheck is a [TLSCheck] whose server is verified with the CA
// certificates in a PEM file that may change while the check is in use: a
// CA that is rotated, or the tunnel lab's server peer, which issues a new CA
// each time it restarts and writes it there. The file is read at every
// check and parsed again when its content changed; a file that does not
// parse (half written) or has gone leaves the last good CA in use. Use it
// by pointer; it is safe for concurrent use.
type CAFileTLSCheck struct {
	// TLS is the check; its RootCAs are replaced by the file's.
	TLS TLSCheck
	// CAFile is the PEM file. Required.
	CAFile string

	mu   sync.Mutex
	pem  []byte
	pool *x509.CertPool
}

var _ Checker = (*CAFileTLSCheck)(nil)

// Check verifies the server with the file's CAs, read now.
func (c *CAFileTLSCheck) Check(ctx context.Context) error {
	pool, err := c.roots()
	if err != nil {
		return err
	}
	check := c.TLS
	check.RootCAs = pool
	return check.Check(ctx)
}

func (c *CAFileTLSCheck) roots() (*x509.CertPool, error) {
	b, err := os.ReadFile(c.CAFile)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		if c.pool != nil {
			return c.pool, nil
		}
		return nil, fmt.Errorf("load CA certificates: %w", err)
	}
	if c.pool == nil || !bytes.Equal(b, c.pem) {
		pool := x509.NewCertPool()
		if pool.AppendCertsFromPEM(b) {
			c.pem, c.pool = b, pool
		} else if c.pool == nil {
			return nil, fmt.Errorf("load CA certificates from %s: no PEM certificate found", c.CAFile)
		}
	}
	return c.pool, nil
}
