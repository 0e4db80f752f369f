// Package check tests a tunnel once: the checks a health monitor runs.
//
// A [Checker] returns nil when the tunnel works and an error naming what
// failed otherwise ("tcp 10.0.0.1:443: dial: connection refused"); [Func]
// makes one of any function. The built-in checks, one file each, go from
// the lightest to the most complete:
//
//   - [ICMP]: one echo and its reply;
//   - [DNSQuery]: one DNS query over UDP, answered NOERROR or NXDOMAIN;
//   - [DNS]: a name resolved through a given server;
//   - [TCP]: a completed handshake;
//   - [TLS]: a handshake verified against the system's or given roots;
//   - [HTTP]: a GET answered 200 to 399.
//
// Each dials through a [Dialer]: the host network by default, a WireGuard
// netstack, a SOCKS5 proxy, or a [BoundDialer] that keeps its sockets on
// the tunnel's interface. [AnyOf], [AllOf], [RoundRobin] and [Fallback]
// combine checks over several targets. [CanOpen] tells whether a check can
// work here at all, without sending anything.
//
// Every built-in check ends when its context does, and closes whatever it
// opened before returning; a combined check that panics is reported as a
// failure wrapping [ErrPanicked]. Every check is safe for concurrent use;
// only [RoundRobin] and [Fallback] keep state between calls (whose turn it
// is, and whether the fallback took over). A built-in check names itself
// as its errors do (its String: "tls 10.0.0.1:443").
//
// Package middleware runs checks on a schedule and on demand and serves the
// state; package middleware/target reads the text syntax of a check target
// into these checks.
package check
