package harness

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// CA is a certificate authority generated for one lab run, so that checks
// verify the TLS target for real instead of skipping verification.
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
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
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

// TLSTarget is an HTTPS server: GET / answers 200 "ok", so TCP, TLS and
// HTTP checks all have something to verify.
type TLSTarget struct {
	srv  *http.Server
	wg   sync.WaitGroup
	done bool
}

// StartTLSTarget serves HTTPS with cert on ln until Close.
func StartTLSTarget(ln net.Listener, cert tls.Certificate) *TLSTarget {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok\n")
	})
	t := &TLSTarget{srv: &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 30 * time.Second,
		// Handshakes aborted by an outage or a restart are normal here.
		ErrorLog: log.New(io.Discard, "", 0),
	}}
	tl := tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		_ = t.srv.Serve(tl) // returns http.ErrServerClosed after Close
	}()
	return t
}

// Close closes the listener and every connection and waits for the server
// loop to end.
func (t *TLSTarget) Close() error {
	if t.done {
		return nil
	}
	t.done = true
	err := t.srv.Close()
	t.wg.Wait()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("harness: TLS target: %w", err)
	}
	return nil
}
