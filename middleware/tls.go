package middleware

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"

	"github.com/tunnelprobe/tunnelprobe/internal/hostport"
)

// TLSCheck passes when a TLS handshake with Address completes and the
// server's certificate verifies. Unlike a bare TCP dial, this needs the real
// server's answer: a transparent proxy, a captive portal or a stale NAT entry
// in the tunnel can accept TCP but cannot present the right certificate. It
// is the reference's full check: a TCP dial, then a handshake with TLS 1.2 at
// least and SNI set to the host.
//
// Dial and handshake both end when ctx ends: the connection's deadline is
// ctx's deadline, and a cancellation closes the connection at once, so a
// check abandoned by its caller does not keep a socket open in the tunnel.
// A TLSCheck holds no state and is safe for concurrent use.
type TLSCheck struct {
	// Address is "host" or "host:port"; port 443 is assumed when missing.
	Address string
	// ServerName is sent as SNI and verified against the certificate. Empty
	// means the host part of Address; for an IP literal no SNI is sent and
	// the certificate must name the IP.
	ServerName string
	// RootCAs verifies the server; nil means the system roots. See
	// LoadCertPool for a private CA.
	RootCAs *x509.CertPool
	// InsecureSkipVerify accepts any certificate. For labs only: the check
	// then no longer tells the real server from an impostor.
	InsecureSkipVerify bool
	// Dialer opens the connection; nil means a plain net.Dialer.
	Dialer Dialer
}

var _ Checker = TLSCheck{}

// Check dials Address, completes a client handshake and closes the
// connection.
func (c TLSCheck) Check(ctx context.Context) error {
	addr := hostport.WithDefault(c.Address, "443")
	conn, err := dialLive(ctx, c.Dialer, "tcp", addr)
	if err != nil {
		return newStepError(ctx, "tls", addr, "dial", err)
	}
	defer conn.Close()
	// HandshakeContext already closes conn when ctx ends. The deadline
	// also bounds what takes no ctx: the close_notify tc.Close writes.
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}

	serverName := c.ServerName
	if serverName == "" {
		// hostport.WithDefault returned a valid host:port, so this cannot fail.
		serverName, _, _ = net.SplitHostPort(addr)
	}
	tc := tls.Client(conn, &tls.Config{
		// crypto/tls sends no SNI for an IP literal and then verifies
		// the certificate's IP addresses instead of its DNS names.
		ServerName:         serverName,
		RootCAs:            c.RootCAs,
		InsecureSkipVerify: c.InsecureSkipVerify,
		MinVersion:         tls.VersionTLS12,
	})
	if err := tc.HandshakeContext(ctx); err != nil {
		return newStepError(ctx, "tls", addr, "handshake", err)
	}
	// Say goodbye with close_notify so the server does not log a
	// truncated connection; the deferred close covers a failure.
	_ = tc.Close()
	return nil
}

// LoadCertPool reads the PEM CA certificates in pemFile into a new pool for
// TLSCheck.RootCAs or HTTPCheck.RootCAs. The pool holds only those CAs, not
// the system roots: a check against a private server should not also trust
// every public CA. It fails, naming the file, when no certificate parses,
// because an empty pool would make every later check fail with a far less
// helpful "unknown authority".
func LoadCertPool(pemFile string) (*x509.CertPool, error) {
	var f CAFile
	err := f.UnmarshalText([]byte(pemFile))
	return f.Pool, err
}

// CAFile is a file of PEM CA certificates as text, its name: a flag or
// config value that LoadCertPool's rules check when it is set. The zero
// value is no file.
type CAFile struct {
	Name string
	PEM  []byte         // the file's content
	Pool *x509.CertPool // its certificates
}

// MarshalText returns the file's name.
func (f CAFile) MarshalText() ([]byte, error) { return []byte(f.Name), nil }

// UnmarshalText reads the file text names, as LoadCertPool does.
func (f *CAFile) UnmarshalText(text []byte) error {
	name := string(text)
	data, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("load CA certificates: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return fmt.Errorf("load CA certificates from %s: no PEM certificate found", name)
	}
	*f = CAFile{Name: name, PEM: data, Pool: pool}
	return nil
}
