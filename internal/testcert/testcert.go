// Package testcert makes throwaway certificates for tests: a CA and one leaf
// it signs, generated in memory on every call of [New] by package pki, as
// the lab's CA is, so no key material lives in the repository and no test
// depends on the system's roots.
//
// Trust the CA with [Bundle.Pool] (or [Bundle.CAPEM] for code that loads a
// file) and serve the leaf with [Bundle.ServerConfig].
package testcert

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/internal/pki"
)

// Bundle is a CA and a leaf certificate signed by it.
type Bundle struct {
	// CAPEM is the CA certificate, PEM encoded.
	CAPEM []byte
	// Pool holds the CA and nothing else.
	Pool *x509.CertPool
	// Certificate is the leaf with its private key, ready for a server.
	Certificate tls.Certificate
}

// New returns a fresh CA and a leaf valid for hosts, each a DNS name or an IP
// literal. With no hosts the leaf is valid for localhost, 127.0.0.1 and ::1.
func New(hosts ...string) (*Bundle, error) {
	if len(hosts) == 0 {
		hosts = []string{"localhost", "127.0.0.1", "::1"}
	}
	ca, err := pki.NewCA()
	if err != nil {
		return nil, fmt.Errorf("testcert: CA: %w", err)
	}
	leaf, err := ca.Issue(hosts...)
	if err != nil {
		return nil, fmt.Errorf("testcert: leaf: %w", err)
	}
	return &Bundle{CAPEM: ca.PEM, Pool: ca.Pool, Certificate: leaf}, nil
}

// ServerConfig returns a new server configuration that serves the leaf, so
// each test may change its copy (MaxVersion, GetConfigForClient...) freely.
func (b *Bundle) ServerConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{b.Certificate}}
}

// Must is New for a test: it fails t when the bundle cannot be made.
func Must(t testing.TB, hosts ...string) *Bundle {
	t.Helper()
	b, err := New(hosts...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
