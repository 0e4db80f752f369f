package check

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
)

// BoundDialer returns a Dialer whose sockets are bound to the network
// interface iface (Linux's SO_BINDTODEVICE): what it sends leaves through
// that interface or not at all, and only to a destination the kernel
// routes through that interface, as it routes the users' traffic (else the
// dial fails with an error wrapping ErrNoRouteThrough). Give it to the
// light probe and the checks of a tunnel whose interface the process sees
// (a VPN's wg0 or tun0): without it, a tunnel whose routes went away would
// let the probe out by the host's own uplink, and the answer would prove a
// dead tunnel alive; with the binding alone, a socket bound to wg0 for a
// destination with no route is sent on-link, and answered, while every
// application gets "no route". It dials "tcp",
// "udp" and, for ICMP, "ping4" and "ping6" (an unprivileged ICMP
// socket, as the ICMP check's host socket). An interface that does not exist
// (yet) fails each dial, as a tunnel that is down does. Linux only;
// elsewhere every dial fails.
func BoundDialer(iface string) Dialer { return boundDialer{iface: iface} }

type boundDialer struct{ iface string }

// ErrNoRouteThrough is wrapped by a BoundDialer's error for a destination
// the kernel's routes do not send through its interface: what the dial
// would prove is not what the tunnel's users get.
var ErrNoRouteThrough = errors.New("no route through")

// ErrBindNotPermitted is wrapped by a BoundDialer's errors when this
// process may not bind a socket to an interface.
var ErrBindNotPermitted = errors.New("binding a socket to an interface is not permitted")

func (d boundDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	switch network {
	case "ping4", "ping6":
		ip, err := resolveOne(ctx, network, address)
		if err != nil {
			return nil, &net.OpError{Op: "dial", Net: network, Err: err}
		}
		return listenHostPing(ip, d.iface)
	}
	nd := net.Dialer{Control: bindControl(d.iface)}
	return nd.DialContext(ctx, network, address)
}

// resolveOne returns an address of host for ping4 (IPv4) or ping6.
func resolveOne(ctx context.Context, network, host string) (netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.Unmap(), nil
	}
	family := "ip4"
	if network == "ping6" {
		family = "ip6"
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, family, host)
	if err != nil {
		return netip.Addr{}, err
	}
	if len(ips) == 0 {
		return netip.Addr{}, fmt.Errorf("no %s address for %s", family, host)
	}
	return ips[0].Unmap(), nil
}

// BoundInterface returns the interface d binds its sockets to, when d is a
// BoundDialer.
func BoundInterface(d Dialer) (string, bool) {
	b, ok := d.(boundDialer)
	return b.iface, ok
}

// OnHost reports whether d's sockets are this host's own: nil (the host
// network) or a BoundDialer. What this host's kernel answers itself (its
// interfaces' addresses) is then answered through such a dialer whatever
// any tunnel does.
func OnHost(d Dialer) bool {
	if d == nil {
		return true
	}
	_, ok := d.(boundDialer)
	return ok
}
