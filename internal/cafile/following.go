package cafile

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
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
