package harness

import (
	"net/netip"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/check/cafile"
	"github.com/tunnelprobe/tunnelprobe/middleware/preset"
)

// TLSCheck returns the health check of the lab's TLS target through its
// tunnel: a dial and a handshake verified with the lab's CA.
func (l *Lab) TLSCheck() check.TLS {
	return check.TLS{Address: l.TLSAddr().String(), ServerName: TLSHost, RootCAs: l.CA().Pool, Dialer: l}
}

// TLSCheck returns the health check of the server peer's TLS target
// through c's tunnel, verified with the CA the server peer writes to caFile
// (a new one at each of its starts, read again whenever it changes).
func (c *Client) TLSCheck(caFile string) check.Checker {
	return cafile.WithRootCAs(check.TLS{
		Address:    netip.AddrPortFrom(ServerTunnelAddr, TLSPort).String(),
		ServerName: TLSHost,
		Dialer:     c,
	}, &cafile.Following{Name: caFile})
}

// SmallCheck returns the upstream VPN client's small check through the
// lab's tunnel (preset.UpstreamSmall): an ICMP echo of the server
// peer, which stands for the upstream's public targets, falling back to a
// DNS query of the server peer's DNS server.
func (l *Lab) SmallCheck() check.Checker { return l.client.SmallCheck() }

// SmallCheck returns the same through c's tunnel.
func (c *Client) SmallCheck() check.Checker {
	return preset.UpstreamSmall(c, netip.AddrPortFrom(c.cfg.ServerAddr, DNSPort).String(), c.cfg.ServerAddr.String())
}

// LightProbe returns the light probe of the lab's tunnel: an ICMP echo of
// the server peer's in-tunnel address, which its netstack answers and the
// link delays, queues and drops like any packet; its probes of the path MTU
// start at the client's tunnel MTU.
func (l *Lab) LightProbe() middleware.LightProbe { return l.client.LightProbe() }

// LightProbe returns the same through c's tunnel.
func (c *Client) LightProbe() middleware.LightProbe {
	p := middleware.ICMPProbe(c.cfg.ServerAddr.String(), c)
	p.MTU = func() (int, error) { return c.cfg.MTU, nil }
	return p
}
