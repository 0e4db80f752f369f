// Package pki generates throwaway certificate authorities and the server
// certificates they sign, in memory, for the tunnel lab's TLS target and for
// tests: no key material lives in the repository, and nothing depends on the
// system's roots. It depends on the standard library only, so test helpers
// that need a certificate do not pull in the lab.
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/netip"
	"time"
)

// CA is a certificate authority generated for one run.
type CA struct {
	// PEM is the CA certificate, PEM encoded, for files and other processes.
	PEM []byte
	// Pool holds the CA certificate, for tls.Config.RootCAs.
	Pool *x509.CertPool

	cert *x509.Certificate
	key  crypto.Signer
}

// NewCA generates a CA valid for a week.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "tunnelprobe lab CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{
		PEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Pool: pool,
		cert: cert,
		key:  key,
	}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

// Issue returns a server certificate for hosts (names or IP addresses).
func (ca *CA) Issue(hosts ...string) (tls.Certificate, error) {
	return ca.issue(x509.ExtKeyUsageServerAuth, hosts)
}

// IssueClient returns a client certificate with the common name name, for
// a TLS client that authenticates itself (an OpenVPN client).
func (ca *CA) IssueClient(name string) (tls.Certificate, error) {
	return ca.issue(x509.ExtKeyUsageClientAuth, []string{name})
}

func (ca *CA) issue(usage x509.ExtKeyUsage, hosts []string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: hosts[0]},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     ca.cert.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	for _, h := range hosts {
		if ip, err := netip.ParseAddr(h); err == nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip.AsSlice())
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// PEM returns a certificate issued here and its private key, PEM encoded,
// for files that other programs (openvpn) read.
func PEM(c tls.Certificate) (cert, key []byte, err error) {
	der, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		return nil, nil, err
	}
	for _, b := range c.Certificate {
		cert = append(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b})...)
	}
	return cert, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}
