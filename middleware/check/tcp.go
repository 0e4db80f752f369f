package check

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/hostport"

	"github.com/tunnelprobe/tunnelprobe/internal/ctxend"
)

// TCP passes when a TCP connection to Address opens. A completed
// handshake needs the SYN-ACK to come back, so it proves that packets cross
// the tunnel both ways, at the cost of one round trip and no payload. A
// transparent proxy or a middlebox in the path may complete the handshake
// itself, though; [TLS] rules that out.
//
// The zero Dialer dials the host network; set it to dial inside the tunnel.
// A TCP check holds no state and is safe for concurrent use.
type TCP struct {
	// Address is "host" or "host:port"; port 443 is assumed when missing,
	// as in the reference check, because it is the port a VPN provider is
	// least likely to block.
	Address string
	// Dialer opens the connection; nil means a plain net.Dialer.
	Dialer Dialer
}

var _ Checker = TCP{}

// String names the check as its errors do: "tcp 10.0.0.1:443".
func (c TCP) String() string { return "tcp " + hostport.WithDefault(c.Address, "443") }

// Check dials Address and closes the connection at once.
func (c TCP) Check(ctx context.Context) error {
	addr := hostport.WithDefault(c.Address, "443")
	conn, err := dialLive(ctx, c.Dialer, "tcp", addr)
	if err != nil {
		return newStepError(ctx, "tcp", addr, "dial", err)
	}
	conn.Close()
	return nil
}

// dialLive dials through d (nil: a plain net.Dialer) and returns the
// connection only while ctx is still live. A Dialer that ignores ctx, or one
// that wins the race against a cancellation, may hand back a connection
// after ctx ended; it is closed here at once so that nothing outlives the
// check that asked for it.
func dialLive(ctx context.Context, d Dialer, network, addr string) (net.Conn, error) {
	conn, err := dialerOrDefault(d).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if conn == nil {
		return nil, errors.New("dialer returned neither a connection nor an error")
	}
	if err := ctxend.Err(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// endWithContext makes conn's reads and writes end with ctx: at its
// deadline, or at once when it is cancelled, for a check that waits on conn
// rather than on ctx. Call stop when done with conn.
func endWithContext(ctx context.Context, conn net.Conn) (stop func() bool) {
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	return context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
}

// stepError is the error of a built-in check: "kind target: step: cause",
// e.g. "tcp 127.0.0.1:1: dial: connection refused". The message drops the
// "dial tcp a->b:" prefixes of the net package, which repeat the target, but
// Unwrap still returns the full cause for errors.Is and errors.As.
type stepError struct {
	kind, target, step string
	err                error
	// ctxErr is ctx's error when ctx had ended by the time the step failed
	// but err does not say so. A deadline set on the connection from ctx's
	// deadline, or a connection closed because ctx was cancelled, surface as
	// "i/o timeout" or "use of closed network connection"; keeping ctxErr in
	// the chain lets callers test errors.Is(err, context.DeadlineExceeded)
	// to tell a slow tunnel from a broken one.
	ctxErr error
	// unresolved reports that the step failed because the resolver
	// answered that the name does not exist: a failure of DNS, which a
	// working tunnel shows too when the VPN's DNS settings fail the name.
	unresolved bool
}

// newStepError returns the error for a failed step of a check run with ctx.
func newStepError(ctx context.Context, kind, target, step string, err error) error {
	e := &stepError{kind: kind, target: target, step: step, err: err}
	if dnsErr, ok := errors.AsType[*net.DNSError](err); ok && kind != "dns" && dnsErr.IsNotFound && !strings.Contains(dnsErr.Name, "/") {
		// An answer that the name does not exist came back: the way to
		// the resolver works. A lookup that timed out says no such thing
		// (the tunnel that carries DNS may be down), and "tcp/https" is a
		// port, not a name.
		e.step, e.unresolved = "resolve "+dnsErr.Name, true
	}
	ctxErr := ctxend.Err(ctx)
	if dl, ok := ctx.Deadline(); ok && ctxErr == nil && !time.Now().Before(dl) {
		// A connection deadline set from ctx's deadline can fire a
		// moment before ctx's own timer does.
		ctxErr = context.DeadlineExceeded
	}
	if ctxErr != nil && !errors.Is(err, ctxErr) {
		e.ctxErr = ctxErr
	}
	return e
}

func (e *stepError) Error() string {
	msg := e.kind + " " + e.target + ": " + e.step + ": " + briefCause(e.err)
	if e.unresolved {
		// Say it where the verdict is read: a name that does not resolve
		// (a VPN's DNS or firewall settings) is not a dead tunnel.
		msg += " (name resolution failed, which does not show the tunnel down: target an address to check the tunnel alone)"
	}
	if e.ctxErr != nil {
		msg += " (" + e.ctxErr.Error() + ")"
	}
	return msg
}

func (e *stepError) Unwrap() []error {
	if e.ctxErr == nil {
		return []error{e.err}
	}
	return []error{e.err, e.ctxErr}
}

// briefCause returns the text of err without the wrappers that only repeat
// the operation and the address, which stepError already names.
func briefCause(err error) string {
	for {
		switch e := err.(type) {
		case nil:
			return "<nil>"
		case *url.Error:
			err = e.Err
		case *net.OpError:
			if e.Err == nil || e.Net == "" {
				// No network and address to drop, only an operation
				// worth keeping, such as crypto/tls's "remote error".
				return e.Error()
			}
			err = e.Err
		case *os.SyscallError:
			err = e.Err
		case *net.DNSError:
			// Server would be the resolv.conf address even when DNS
			// sent the query elsewhere, so leave it out.
			return e.Err
		default:
			return err.Error()
		}
	}
}
