package harness

import (
	"context"
	"errors"
	"net"
	"net/netip"

	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/preset"
	"github.com/tunnelprobe/tunnelprobe/middleware/sockdiag"
)

// Restart stops the client's openvpn and starts a new one, as a heal or
// the VPN container's loop does (see OpenVPNClient.Restart).
func (o *OpenVPN) Restart(ctx context.Context) error { return o.cl.Restart(ctx) }

// Down stops the client's openvpn, as a stopped VPN container does.
func (o *OpenVPN) Down() error { return o.cl.Down() }

// Up starts a new client openvpn after Down (or after it exited); it
// returns once the process runs, as a container's start does.
func (o *OpenVPN) Up(ctx context.Context) error { return o.cl.Up(ctx) }

// Exits receives an error each time the client's openvpn exits of its own
// accord (see OpenVPNClient.Exits). The client is down until Up.
func (o *OpenVPN) Exits() <-chan error { return o.cl.Exits() }

// ServerExits receives an error if the server's openvpn exits of its own
// accord: the lab's far side is gone for good, and what is measured
// after that is no measurement.
func (o *OpenVPN) ServerExits() <-chan error { return o.srv.Exits() }

// ClientPID is the process ID of the client's openvpn, 0 while it is down.
func (o *OpenVPN) ClientPID() int { return o.cl.PID() }

// DialContext dials from the client's namespace, bound to its tun0 (see
// check.BoundDialer): a dial never leaves the tunnel another way, and
// fails while the device is gone. An OpenVPN lab is a check.Dialer.
func (o *OpenVPN) DialContext(ctx context.Context, network, address string) (c net.Conn, err error) {
	if ap, perr := netip.ParseAddrPort(address); perr == nil && ap.Addr().Is4() && (network == "tcp" || network == "tcp4") {
		return o.dialTCP4(ctx, ap)
	}
	err = o.client.Do(func() error {
		c, err = check.BoundDialer(OpenVPNDevice).DialContext(ctx, network, address)
		return err
	})
	return c, err
}

// ReadCounters reads the client's tun0 counters, as the VPN container's
// health server would.
func (o *OpenVPN) ReadCounters() (c middleware.Counters, err error) {
	err = o.client.Do(func() error {
		c, err = middleware.InterfaceCounters(OpenVPNDevice).ReadCounters()
		return err
	})
	return c, err
}

// ReadDelivery reads the delivery of the TCP connections through the
// client's tun0 from the kernel's socket table (package sockdiag).
func (o *OpenVPN) ReadDelivery() (d middleware.Delivery, err error) {
	err = o.client.Do(func() error {
		d, err = sockdiag.Delivery{Interface: OpenVPNDevice}.ReadDelivery()
		return err
	})
	return d, err
}

// LightProbe is an ICMP echo of the server's in-tunnel address, which the
// server's kernel answers; its path MTU probes start at the tunnel's MTU.
func (o *OpenVPN) LightProbe() middleware.LightProbe {
	p := middleware.ICMPProbe(ServerTunnelAddr.String(), o)
	p.MTU = func() (int, error) { return OpenVPNMTU, nil }
	return p
}

// TLSCheck is the health check of the server's TLS target through the
// tunnel, verified with the lab's CA.
func (o *OpenVPN) TLSCheck() check.TLS {
	return check.TLS{Address: o.TLSAddr().String(), ServerName: TLSHost, RootCAs: o.ca.Pool, Dialer: o}
}

// SmallCheck is the upstream VPN client's small check through the tunnel
// (see Lab.SmallCheck).
func (o *OpenVPN) SmallCheck() check.Checker {
	return preset.UpstreamSmall(o, netip.AddrPortFrom(ServerTunnelAddr, DNSPort).String(), ServerTunnelAddr.String())
}

// CA is the CA of the TLS target (and of openvpn's certificates).
func (o *OpenVPN) CA() *CA { return o.ca }

// TLSAddr and SinkAddr are the in-tunnel service addresses.
func (o *OpenVPN) TLSAddr() netip.AddrPort  { return netip.AddrPortFrom(ServerTunnelAddr, TLSPort) }
func (o *OpenVPN) SinkAddr() netip.AddrPort { return netip.AddrPortFrom(ServerTunnelAddr, SinkPort) }

// SinkStats is what the server's sink received.
func (o *OpenVPN) SinkStats() sink.Stats { return o.srv.SinkStats() }

// Stream sends a one-way UDP stream from the server's namespace to the
// client's StreamPort (see Server.Stream); the client's kernel drops it.
func (o *OpenVPN) Stream(ctx context.Context, rate Rate) error {
	if rate <= 0 {
		return errors.New("harness: stream rate must be positive")
	}
	conn, err := nsNet{o.server}.DialContext(ctx, "udp", netip.AddrPortFrom(ClientTunnelAddr, StreamPort).String())
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	return stream(ctx, conn, rate)
}

// ErrNoDrop is returned by Drop of a tunnel whose server side cannot
// filter what reaches it.
var ErrNoDrop = errors.New("harness: this tunnel's server side cannot drop packets by kind (only the WireGuard lab's netstack can)")

// Drop is not supported on OpenVPN: the server's kernel has no filter of
// the lab's (no nftables is assumed); none drops nothing.
func (o *OpenVPN) Drop(kinds ...string) error {
	if len(kinds) == 0 {
		return nil
	}
	return ErrNoDrop
}

// Link is the shaped link the transport crosses.
func (o *OpenVPN) Link() *Link { return o.link }
