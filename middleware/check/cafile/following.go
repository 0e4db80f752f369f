package cafile

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"sync"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// Following is a file of PEM CA certificates that may change while it is
// in use: a CA that is rotated, or the tunnel lab's server peer, which
// issues a new CA each time it restarts and writes it there. Pool reads
// the file at every call and parses it again when its content changed; a
// file that does not parse (half written) or has gone leaves the last good
// CAs in use. Use it by pointer; it is safe for concurrent use.
type Following struct {
	// Name is the PEM file. Required.
	Name string

	mu   sync.Mutex
	last File // the last content that parsed; no Pool before the first
}

// Pool returns the file's CAs, read now, or the last good ones.
func (f *Following) Pool() (*x509.CertPool, error) {
	data, err := os.ReadFile(f.Name)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		if f.last.Pool != nil {
			return f.last.Pool, nil
		}
		return nil, fmt.Errorf("load CA certificates: %w", err)
	}
	if f.last.Pool == nil || !bytes.Equal(data, f.last.PEM) {
		read, err := parse(f.Name, data)
		switch {
		case err == nil:
			f.last = read
		case f.last.Pool == nil:
			return nil, err
		}
	}
	return f.last.Pool, nil
}

// Follow returns a Following of f's file that starts from f's CAs: until
// the file changes, the pool f read at start.
func (f File) Follow() *Following { return &Following{Name: f.Name, last: f} }

// WithRootCAs returns c verifying with ca's CAs as they are at each check,
// for a check.TLS or a check.HTTP, and named as c is; any other checker is
// returned as it is. A check whose file never held a CA fails naming it.
func WithRootCAs(c check.Checker, ca *Following) check.Checker {
	// Each check verifies with a copy of c: checks may run concurrently.
	w := withRootCAs{ca: ca}
	switch c := c.(type) {
	case check.TLS:
		w.name = c.String()
		w.with = func(pool *x509.CertPool) check.Checker { v := c; v.RootCAs = pool; return v }
	case check.HTTP:
		w.name = c.String()
		w.with = func(pool *x509.CertPool) check.Checker { v := c; v.RootCAs = pool; return v }
	default:
		return c
	}
	return w
}

// withRootCAs is WithRootCAs's check.
type withRootCAs struct {
	name string
	ca   *Following
	with func(*x509.CertPool) check.Checker
}

func (w withRootCAs) Check(ctx context.Context) error {
	pool, err := w.ca.Pool()
	if err != nil {
		return err
	}
	return w.with(pool).Check(ctx)
}

func (w withRootCAs) String() string { return w.name }
