package check

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// CanOpen reports why a check cannot work here, by opening the socket it
// would use through d and sending nothing: network is "icmp" (an [ICMP]
// echo of address, a host), "udp" (a [DNSQuery] to address, host:port) or
// "tcp" (a [TCP]
// dial, whose socket cannot be opened without sending a SYN, so only a
// [BoundDialer]'s permission to bind is tested). A way that is only down
// now (no route, no such interface yet, a name that does not resolve while
// the tunnel that carries DNS is down) is no reason and returns nil: a
// tunnel that is down at start must not change which check is chosen.
func CanOpen(ctx context.Context, network, address string, d Dialer) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if b, ok := d.(boundDialer); ok {
		// Every kind's socket is bound to the interface, tcp's too: a
		// process that may not bind has no kind that works.
		if err := b.canBind(); err != nil && !downOnly(err) {
			return err
		}
	}
	var conn net.Conn
	var err error
	switch network {
	case "icmp":
		host := strings.TrimSuffix(strings.TrimPrefix(address, "["), "]")
		if d == nil {
			ip, perr := netip.ParseAddr(host)
			if perr != nil {
				ip = netip.IPv4Unspecified() // a name: most resolve to IPv4 first
			}
			conn, err = listenHostPing(ip.Unmap(), "")
		} else if conn, _, err = (ICMP{Address: address, Dialer: d}).dial(ctx); err != nil && !downOnly(err) {
			err = fmt.Errorf("the dialer carries no ICMP: %w", err)
		}
	case "udp":
		if conn, err = dialLive(ctx, d, "udp", address); err != nil && !downOnly(err) {
			err = fmt.Errorf("the dialer carries no UDP: %w", err)
		}
	case "tcp":
		return nil
	default:
		return fmt.Errorf("check.CanOpen: unknown network %q: want icmp, udp or tcp", network)
	}
	if conn != nil {
		conn.Close()
	}
	if err != nil && downOnly(err) {
		return nil
	}
	return err
}

// downOnly reports whether err says only that the way is down now, not
// that the check cannot work.
func downOnly(err error) bool {
	if _, ok := errors.AsType[*net.DNSError](err); ok {
		return true
	}
	for _, e := range []error{syscall.ENETUNREACH, syscall.EHOSTUNREACH, syscall.ENODEV, syscall.EADDRNOTAVAIL, ErrNoRouteThrough} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
