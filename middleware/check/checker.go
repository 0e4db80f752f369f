package check

import (
	"context"
	"errors"
	"net"
)

// A Checker tests whether the tunnel works. Check returns nil when it does
// and an error naming what failed otherwise. Check must return once ctx ends:
// every built-in checker passes ctx to its dial, handshake and request.
type Checker interface {
	Check(ctx context.Context) error
}

// Func adapts an ordinary function to a [Checker].
type Func func(ctx context.Context) error

// Check calls f(ctx).
func (f Func) Check(ctx context.Context) error { return f(ctx) }

var _ Checker = Func(nil)

// A Dialer opens connections for a check. *net.Dialer, a WireGuard netstack
// (*netstack.Net) and golang.org/x/net/proxy's SOCKS5 dialer all qualify, so
// the same check runs over the host network, inside a tunnel or through a
// proxy.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// DialerFunc adapts an ordinary function to a [Dialer].
type DialerFunc func(ctx context.Context, network, address string) (net.Conn, error)

// DialContext calls f(ctx, network, address).
func (f DialerFunc) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return f(ctx, network, address)
}

var (
	_ Dialer = DialerFunc(nil)
	_ Dialer = (*net.Dialer)(nil)
)

// ErrPanicked is wrapped by the error reported for a check that panicked.
var ErrPanicked = errors.New("check panicked")

// dialerOrDefault returns d, or a plain *net.Dialer when d is nil.
func dialerOrDefault(d Dialer) Dialer {
	if d == nil {
		return &net.Dialer{}
	}
	return d
}
