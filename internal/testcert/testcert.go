// Package testcert makes throwaway certificates for tests: an ECDSA P-256 CA
// and one leaf it signs, both generated in memory on every call of [New], so
// no key material lives in the repository and no test depends on the
// system's roots.
//
// Trust the CA with [Bundle.Pool] (or [Bundle.CAPEM] for code that loads a
// file) and serve the leaf with [Bundle.ServerConfig].
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Bundle is a CA and a leaf certificate signed by it.
type Bundle struct {
	// CAPEM is the CA certificate, PEM encoded.
	CAPEM []byte
	// CA is the parsed CA certificate.
	CA *x509.Certificate
	// Pool holds the CA and nothing else.
	Pool *x509.CertPool
	// Certificate is the leaf with its private key, ready for a server.
	Certificate tls.Certificate
}

// New returns a fresh CA and a leaf valid for hosts, each a DNS name or an IP
// literal. With no hosts the leaf is valid for localhost, 127.0.0.1 and ::1.
// Both certificates are valid from an hour ago to a day from now.
func New(hosts ...string) (*Bundle, error) {
	if len(hosts) == 0 {
		hosts = []string{"localhost", "127.0.0.1", "::1"}
	}
	now := time.Now()

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testcert: CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "testcert CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("testcert: CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("testcert: CA certificate: %w", err)
	}

	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testcert: leaf key: %w", err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: hosts[0]},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			leafTmpl.IPAddresses = append(leafTmpl.IPAddresses, ip)
		} else {
			leafTmpl.DNSNames = append(leafTmpl.DNSNames, h)
		}
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("testcert: leaf certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(leafDER)
	if err != nil {
		return nil, fmt.Errorf("testcert: leaf certificate: %w", err)
	}

	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &Bundle{
		CAPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		CA:    ca,
		Pool:  pool,
		Certificate: tls.Certificate{
			Certificate: [][]byte{leafDER},
			PrivateKey:  leafKey,
			Leaf:        leaf,
		},
	}, nil
}

// ServerConfig returns a new server configuration that serves the leaf, so
// each test may change its copy (MaxVersion, GetConfigForClient...) freely.
func (b *Bundle) ServerConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{b.Certificate}}
}

// serial returns a random 128-bit serial number, as RFC 5280 recommends.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		panic("testcert: crypto/rand failed: " + err.Error())
	}
	return n
}
