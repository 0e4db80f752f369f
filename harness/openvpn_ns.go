package harness

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"

	"github.com/vishvananda/netlink"

	"github.com/tunnelprobe/tunnelprobe/internal/netns"
)

// The underlay between an OpenVPN lab's two namespaces: a veth pair with
// one /30, which only the lab's link (or its TCP carrier) and the server's
// transport use. The tunnel's own network, ServerTunnelAddr's /24, lies
// beyond the tun0 devices.
var (
	underlayClient = netip.MustParsePrefix("10.201.0.1/30")
	underlayServer = netip.MustParsePrefix("10.201.0.2/30")
)

// nsNet opens sockets in a network namespace: the server side's services
// listen there, and the client side's checks and load dial from there.
// With a nil ns it opens them in this process's own, as the OpenVPN roles
// of a container do.
type nsNet struct{ ns *netns.NS }

func (n nsNet) ListenTCP(ap netip.AddrPort) (ln net.Listener, err error) {
	err = inNS(n.ns, func() error { ln, err = net.Listen("tcp", ap.String()); return err })
	return ln, err
}

func (n nsNet) ListenUDP(ap netip.AddrPort) (pc net.PacketConn, err error) {
	err = inNS(n.ns, func() error { pc, err = net.ListenPacket("udp", ap.String()); return err })
	return pc, err
}

func (n nsNet) DialContext(ctx context.Context, network, address string) (c net.Conn, err error) {
	var d net.Dialer
	err = inNS(n.ns, func() error { c, err = d.DialContext(ctx, network, address); return err })
	return c, err
}

// inNS runs f in ns, or where this process is if ns is nil.
func inNS(ns *netns.NS, f func() error) error {
	if ns == nil {
		return f()
	}
	return ns.Do(f)
}

// joinUnderlay joins the client and server namespaces with a veth pair
// carrying underlayClient and underlayServer, and lets every group of the
// client's namespace open ICMP echo sockets, as a VPN container's light
// probe needs (net.ipv4.ping_group_range; a new namespace allows none).
func joinUnderlay(client, server *netns.NS) error {
	err := client.Do(func() error {
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "under0"}, PeerName: "under1", PeerNamespace: netlink.NsFd(server.FD())}
		if err := netlink.LinkAdd(veth); err != nil {
			return fmt.Errorf("harness: veth pair: %w", err)
		}
		if err := addrUp("under0", underlayClient); err != nil {
			return err
		}
		return os.WriteFile("/proc/sys/net/ipv4/ping_group_range", []byte("0 2147483647"), 0o644)
	})
	if err != nil {
		return err
	}
	return server.Do(func() error { return addrUp("under1", underlayServer) })
}

// addrUp gives the device name the address p and brings it up.
func addrUp(name string, p netip.Prefix) error {
	link, err := netlink.LinkByName(name)
	if err != nil {
		return fmt.Errorf("harness: %s: %w", name, err)
	}
	a, err := netlink.ParseAddr(p.String())
	if err != nil {
		return err
	}
	if err := netlink.AddrAdd(link, a); err != nil {
		return fmt.Errorf("harness: address %s on %s: %w", p, name, err)
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return fmt.Errorf("harness: %s up: %w", name, err)
	}
	return nil
}
