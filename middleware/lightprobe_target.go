package middleware

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// ErrProvesNothing is wrapped by a light probe's error when no answer
// could prove the tunnel alive: its target is answered by this host itself
// (loopback, an address of one of its interfaces, the tunnel's own
// address), cannot be one host (unspecified, multicast, broadcast), or is
// not routed through the tunnel's interface (check.ErrNoRouteThrough); or
// when the answer that came proves nothing: a DNS rcode that any resolver
// on the way gives whatever the path beyond it (SERVFAIL, REFUSED:
// check.ErrAnswerProvesNothing). Such a probe is neither an answer nor a
// loss: it decides nothing, and the status says why.
var ErrProvesNothing = errors.New("the light probe proves nothing")

// probeTarget is a built-in light probe's destination, checked before
// every probe: where the local kernel would answer it, the probe is not
// sent.
type probeTarget struct {
	kind string
	host string // as given: an address, or a name
	port string // for udp-dns and tcp
	d    check.Dialer
	// lookup resolves a name on this host; nil: net.DefaultResolver's
	// LookupNetIP. Tests give names the addresses they need.
	lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// lightProbe returns the light probe of t, named target, with a probe of
// the path MTU when its kind can size one and its dialer names the
// interface whose MTU it starts at.
func (t probeTarget) lightProbe(target string) LightProbe {
	p := LightProbe{Kind: t.kind, Target: target, Check: t}
	if t.kind != probeTCP {
		p.Sized = t.sized
	}
	if iface, ok := check.BoundInterface(t.d); ok {
		p.MTU = func() (int, error) {
			ifc, err := net.InterfaceByName(iface)
			if err != nil {
				return 0, err
			}
			return ifc.MTU, nil
		}
	}
	return p
}

// Check resolves the target (a name to its IPv4 addresses, the family its
// socket was judged in: see ChooseLightProbe), refuses an address that
// proves nothing, and sends the probe to the address.
func (t probeTarget) Check(ctx context.Context) error { return t.sized(ctx, 0) }

// sized is Check with a probe whose IP packet is size bytes (0: small).
func (t probeTarget) sized(ctx context.Context, size int) error {
	addr, err := t.resolve(ctx)
	if err != nil {
		return err
	}
	if why := provesNothing(addr, check.OnHost(t.d)); why != "" {
		return fmt.Errorf("%w: %s %s is %s", ErrProvesNothing, t.kind, addr, why)
	}
	err = t.checker(addr, size).Check(ctx)
	if errors.Is(err, check.ErrNoRouteThrough) || errors.Is(err, check.ErrAnswerProvesNothing) {
		return fmt.Errorf("%w: %w", ErrProvesNothing, err)
	}
	return err
}

// resolve returns the target's address: a name is resolved here, on this
// host's resolver, when the dialer's sockets are this host's; through any
// other dialer (a netstack) the dialer resolves it, and only an address
// given as such is checked.
func (t probeTarget) resolve(ctx context.Context) (string, error) {
	if ip, err := netip.ParseAddr(t.host); err == nil || !check.OnHost(t.d) {
		if err == nil {
			return ip.Unmap().String(), nil
		}
		return t.host, nil
	}
	lookup := t.lookup
	if lookup == nil {
		lookup = net.DefaultResolver.LookupNetIP
	}
	ips, err := lookup(ctx, "ip4", t.host)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", t.kind, t.host, err)
	}
	return ips[0].String(), nil // LookupNetIP returns an error rather than no address
}

// checker returns the probe of this kind to addr, of size bytes (0:
// small; tcp ignores it).
func (t probeTarget) checker(addr string, size int) check.Checker {
	switch t.kind {
	case probeUDPDNS:
		return check.DNSQuery{Server: net.JoinHostPort(addr, t.port), Dialer: t.d, FreshLabel: true, Size: size}
	case probeTCP:
		return check.TCP{Address: net.JoinHostPort(addr, t.port), Dialer: t.d}
	}
	return check.ICMP{Address: addr, Dialer: t.d, Size: size}
}

// provesNothing says why an answer from addr could not prove a tunnel
// alive, or "" when it could. A name (through a dialer that resolves it)
// passes. onHost: the probe's sockets are this host's, whose interfaces'
// addresses its own kernel answers.
func provesNothing(addr string, onHost bool) string {
	ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"))
	if err != nil {
		return ""
	}
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return "a loopback address, answered by the local kernel"
	case ip.IsUnspecified():
		return "the unspecified address, which the local kernel answers as its own"
	case ip.IsMulticast():
		return "a multicast address, which no one host answers for the tunnel"
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "the broadcast address"
	}
	if !onHost {
		return ""
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		return ""
	}
	for _, ifc := range ifaces {
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			p, ok := netip.AddrFromSlice(n.IP)
			if !ok {
				continue
			}
			ones, _ := n.Mask.Size()
			prefix := netip.PrefixFrom(p.Unmap(), ones)
			switch {
			case prefix.Addr() == ip:
				return "an address of this host's interface " + ifc.Name + ", answered by its own kernel whatever the tunnel does"
			case ip.Is4() && ones < 31 && broadcastOf(prefix) == ip:
				return "the broadcast address of this host's interface " + ifc.Name
			}
		}
	}
	return ""
}

// broadcastOf returns the broadcast address of the IPv4 prefix p.
func broadcastOf(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	for i := range 4 {
		b[3-i] |= byte(host >> (8 * i))
	}
	return netip.AddrFrom4(b)
}
