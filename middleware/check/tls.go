package check

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"

	"github.com/tunnelprobe/tunnelprobe/internal/hostport"
)

// TLS passes when a TLS handshake with Address completes and the
// server's certificate verifies. Unlike a bare TCP dial, this needs the real
// server's answer: a transparent proxy, a captive portal or a stale NAT entry
// in the tunnel can accept TCP but cannot present the right certificate. It
// is the reference's full check: a TCP dial, then a handshake with TLS 1.2 at
// least and SNI set to the host.
//
// Dial and handshake both end when ctx ends: the connection's deadline is
// ctx's deadline, and a cancellation closes the connection at once, so a
// check abandoned by its caller does not keep a socket open in the tunnel.
// A TLS check holds no state and is safe for concurrent use.
type TLS struct {
	// Address is "host" or "host:port"; port 443 is assumed when missing.
	Address string
	// ServerName is sent as SNI and verified against the certificate. Empty
	// means the host part of Address; for an IP literal no SNI is sent and
	// the certificate must name the IP.
	ServerName string
	// RootCAs verifies the server; nil means the system roots. For a
	// private CA, a pool of its certificates alone
	// (x509.CertPool.AppendCertsFromPEM).
	RootCAs *x509.CertPool
	// InsecureSkipVerify accepts any certificate. For labs only: the check
	// then no longer tells the real server from an impostor.
	InsecureSkipVerify bool
	// Dialer opens the connection; nil means a plain net.Dialer.
	Dialer Dialer
}

var _ Checker = TLS{}

// String names the check as its errors do: "tls 10.0.0.1:443".
func (c TLS) String() string { return "tls " + hostport.WithDefault(c.Address, "443") }

// Check dials Address, completes a client handshake and closes the
// connection.
func (c TLS) Check(ctx context.Context) error {
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
