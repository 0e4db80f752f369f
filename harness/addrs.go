package harness

import "net/netip"

// In-tunnel addresses and ports. They exist only inside the two netstacks:
// no packet to or from them ever reaches the host's network.
var (
	ServerTunnelAddr = netip.MustParseAddr("10.99.0.1")
	ClientTunnelAddr = netip.MustParseAddr("10.99.0.2")
)

// The server peer's in-tunnel service ports, and the lab's names.
const (
	TLSPort  = 443
	SinkPort = 9  // discard
	EchoPort = 7  // echo
	DNSPort  = 53 // the lab's names, over UDP
	// DefaultMTU is the tunnel MTU, WireGuard's usual 1420.
	DefaultMTU = 1420
	// TLSHost and SinkHost are names the client's Dial resolves to the
	// server's in-tunnel address by itself, asking no DNS server; the
	// server's DNS server answers them too, for DNS checks.
	TLSHost  = "tls.lab"
	SinkHost = "sink.lab"
)

func labHosts(server netip.Addr) map[string]netip.Addr {
	return map[string]netip.Addr{TLSHost: server, SinkHost: server}
}
