package middleware

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/tunnelprobe/tunnelprobe/internal/hostport"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// The kinds of light probe, in the order [ChooseLightProbe] tries them.
const (
	probeICMP   = "icmp"
	probeUDPDNS = "udp-dns"
	probeTCP    = "tcp"
)

// A LightProbe is the monitor's own proof of life (Evidence.Probe): one
// small round trip through the tunnel, which only a tunnel that carries
// packets both ways can answer. Its Check returns nil only for an answer to
// the probe it sent:
//
//   - icmp: an echo reply with the request's sequence number and data;
//   - udp-dns: a DNS response with the query's ID and question, for a
//     name never asked before, answered NOERROR or NXDOMAIN: the name was
//     looked up beyond any cache (SERVFAIL, REFUSED and the other rcodes,
//     which any resolver on the way gives whatever the path beyond it,
//     prove nothing: the probe decides nothing, see ErrProvesNothing);
//   - tcp: a completed handshake (SYN-ACK).
//
// Error answers prove nothing and fail the probe: an ICMP unreachable is
// what a VPN server with a dead uplink, or a router without a route, sends
// back for a packet it could not deliver; for TCP the socket API reports a
// reset and an ICMP port unreachable alike ("connection refused"), so a
// refused connection counts as no answer and a tcp probe needs a port that
// accepts.
type LightProbe struct {
	// Kind is "icmp", "udp-dns" or "tcp" for the built-in probes, or any
	// short name: it names the probe in the status, the logs and the
	// metrics.
	Kind string
	// Target is what the probe is sent to, for the same.
	Target string
	// Check sends one probe and waits for its answer until ctx ends.
	Check check.Checker
	// Sized, when set, sends one probe whose IP packet is size bytes,
	// not fragmented, and waits for its answer until ctx ends: a probe
	// of the path MTU (Evidence.MTUProbeEvery). The built-in icmp and
	// udp-dns probes have one; tcp's SYN cannot be sized.
	Sized func(ctx context.Context, size int) error
	// MTU, when set, returns the tunnel interface's MTU, the size the
	// probes of the path MTU start at. The built-in probes have one
	// through a check.BoundDialer; a dialer of a tunnel of its own (a
	// netstack) must say.
	MTU func() (int, error)
}

// ICMPProbe echoes host (an address, or a name) through d; nil d is the
// host's unprivileged ICMP socket (see [check.ICMP]). Before every echo the
// target is checked: an address the local kernel answers (loopback, an
// address of this host's interfaces) is not sent to, and the probe fails
// with an error wrapping ErrProvesNothing.
func ICMPProbe(host string, d check.Dialer) LightProbe {
	return probeTarget{kind: probeICMP, host: host, d: d}.lightProbe(host)
}

// dnsProbe asks the DNS server at server ("host" or "host:port", port 53
// by default) one query over UDP through d, for a fresh name each time
// (see [check.DNSQuery]).
func dnsProbe(server string, d check.Dialer) LightProbe {
	return hostPortProbe(probeUDPDNS, server, "53", d)
}

// tcpProbe opens a TCP connection to addr ("host" or "host:port", port 443
// by default) through d and closes it (see [check.TCP]).
func tcpProbe(addr string, d check.Dialer) LightProbe {
	return hostPortProbe(probeTCP, addr, "443", d)
}

// hostPortProbe is the probe of kind to addr, defaultPort when it has none.
func hostPortProbe(kind, addr, defaultPort string, d check.Dialer) LightProbe {
	addr = hostport.WithDefault(addr, defaultPort)
	host, port, _ := net.SplitHostPort(addr)
	return probeTarget{kind: kind, host: host, port: port, d: d}.lightProbe(addr)
}

// ErrNoLightProbe is wrapped by ChooseLightProbe's error when no kind of
// light probe can work.
var ErrNoLightProbe = errors.New("no light probe can work here")

// ChooseLightProbe returns the light probe of target that can work here,
// and why the kinds before it cannot. target is "icmp://HOST",
// "udp-dns://HOST[:PORT]" or "tcp://HOST[:PORT]" for one kind, or a bare
// HOST for the first of them that can work, in this order:
//
//  1. icmp, to HOST: the lightest, and what the upstream VPN client sends;
//     it needs an ICMP socket (an unprivileged one on the host, as
//     net.ipv4.ping_group_range allows, or a check.Dialer that carries "ping4"
//     and "ping6", as a WireGuard netstack does);
//  2. udp-dns, to HOST:53: the upstream's fallback where ICMP is not
//     permitted; it needs a UDP socket through the check.Dialer;
//  3. tcp, to HOST:443: a SYN and its SYN-ACK, which any dialer carries.
//
// Whether a kind can work is decided by opening its socket (bound to the
// interface, with a check.BoundDialer), never by sending: a tunnel that is down
// at start (no route, no interface, a name that does not resolve) must not
// change the kind. That socket is judged in IPv4 for a name, so a name is
// probed at its IPv4 addresses. A port is only for udp-dns and tcp. The
// error wraps ErrNoLightProbe when the kind asked for cannot work, and
// names it.
//
// An address whose answer proves nothing is refused: loopback,
// unspecified, multicast and broadcast addresses, and, for a dialer whose
// sockets are this host's (nil or a BoundDialer), an address of any of its
// interfaces (the tunnel's own included), which its own kernel answers
// with the tunnel dead. The same is checked before every probe, of a name's
// address too, as interfaces' addresses change (see ErrProvesNothing).
func ChooseLightProbe(ctx context.Context, target string, d check.Dialer) (LightProbe, []error, error) {
	kind, host, pinned := strings.Cut(target, "://")
	if !pinned {
		kind, host = "", target
	}
	if host == "" {
		return LightProbe{}, nil, fmt.Errorf("light probe %q: no host", target)
	}
	// What cannot be a host would be probed all the same, never answered,
	// and decide nothing: refuse it here.
	if strings.ContainsAny(host, " \t\r\n,/?#") {
		return LightProbe{}, nil, fmt.Errorf("light probe %q: want HOST or HOST:PORT, with no spaces, commas or path", target)
	}
	bare := host
	if h, port, err := net.SplitHostPort(host); err == nil {
		bare = h
		// A port belongs to udp-dns or tcp: an ICMP probe would ask for a
		// host named "HOST:PORT".
		n, perr := strconv.Atoi(port)
		switch {
		case h == "":
			return LightProbe{}, nil, fmt.Errorf("light probe %q: no host", target)
		case perr != nil || n < 1 || n > 65535:
			return LightProbe{}, nil, fmt.Errorf("light probe %q: port %q is not a number from 1 to 65535", target, port)
		case !pinned:
			return LightProbe{}, nil, fmt.Errorf("light probe %q: a port needs its kind: udp-dns://%s or tcp://%s", target, host, host)
		case kind == probeICMP:
			return LightProbe{}, nil, fmt.Errorf("light probe %q: icmp takes a host, no port", target)
		}
	}
	if why := provesNothing(bare, check.OnHost(d)); why != "" {
		return LightProbe{}, nil, fmt.Errorf("light probe %q: %s is %s: give an address beyond the VPN server that answers through the tunnel only",
			target, bare, why)
	}
	candidates := []LightProbe{ICMPProbe(host, d), dnsProbe(host, d), tcpProbe(host, d)}
	var skipped []error
	for _, p := range candidates {
		if pinned && p.Kind != kind {
			continue
		}
		err := p.canWork(ctx, d)
		if err == nil {
			return p, skipped, nil
		}
		skipped = append(skipped, fmt.Errorf("%s %s: %w", p.Kind, p.Target, err))
	}
	if pinned && len(skipped) == 0 {
		return LightProbe{}, nil, fmt.Errorf("light probe %q: unknown kind %q: want icmp, udp-dns or tcp", target, kind)
	}
	return LightProbe{}, skipped, fmt.Errorf("%w: %w", ErrNoLightProbe, errors.Join(skipped...))
}

// canWork reports why the probe cannot work here, without sending it (see
// check.CanOpen).
func (p LightProbe) canWork(ctx context.Context, d check.Dialer) error {
	network := map[string]string{probeICMP: "icmp", probeUDPDNS: "udp", probeTCP: "tcp"}[p.Kind]
	return check.CanOpen(ctx, network, p.Target, d)
}
