package harness

import (
	"context"
	"fmt"
	"net"
	"net/netip"
)

// ResolveUDP returns the UDP address s names: an IP and port as they are,
// or a host name resolved to its first IPv4 address, as a role reaches the
// next one by its container name. ctx bounds the lookup: once it is done,
// a name is not looked up and ResolveUDP returns ctx's error.
func ResolveUDP(ctx context.Context, s string) (netip.AddrPort, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap, nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return netip.AddrPort{}, err
	}
	// The resolver races a done ctx against an answer from /etc/hosts.
	if err := ctx.Err(); err != nil {
		return netip.AddrPort{}, err
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip4", host)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(ips) == 0 {
		return netip.AddrPort{}, fmt.Errorf("resolve %s: no IPv4 address", host)
	}
	// The resolver may answer IPv4 in IPv6's mapped form.
	return netip.ParseAddrPort(net.JoinHostPort(ips[0].Unmap().String(), port))
}
