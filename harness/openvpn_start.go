package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/tunnelprobe/tunnelprobe/internal/netns"
)

// Start makes both namespaces and the underlay between them, writes the
// PKI and the configurations, starts the server's openvpn, its targets,
// the link and the client's openvpn, and waits until both ends say their
// tunnel is up (within StartTimeout). An openvpn that exits or never
// connects fails Start with its last output. ctx bounds the start only; on
// error everything started is closed again.
func (o *OpenVPN) Start(ctx context.Context) (err error) {
	if o.dir != nil {
		return errors.New("harness: OpenVPN lab already started")
	}
	if err := o.cfg.Link.Validate(); err != nil {
		return err
	}
	if o.cfg.Transport != TransportUDP && o.cfg.Transport != TransportTCP {
		return fmt.Errorf("harness: OpenVPN transport %q: want %s or %s", o.cfg.Transport, TransportUDP, TransportTCP)
	}
	if err := OpenVPNAvailable(o.cfg.Binary); err != nil {
		return err
	}
	if o.dir, err = newLabDir(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			o.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, o.cfg.StartTimeout)
	defer cancel()
	if o.server, err = netns.New(); err != nil {
		return err
	}
	if o.client, err = netns.New(); err != nil {
		return err
	}
	if err := joinUnderlay(o.client, o.server); err != nil {
		return err
	}
	if o.ca, err = NewCA(); err != nil {
		return err
	}
	listen := netip.AddrPortFrom(underlayServer.Addr(), OpenVPNPort)
	remote, err := o.startTransport(ctx, listen)
	if err != nil {
		return err
	}
	files, err := writeOpenVPNFiles(o.dir.path, o.ca, OpenVPNFilesConfig{Transport: o.cfg.Transport, Listen: listen, Remote: remote.String(), MTU: OpenVPNMTU})
	if err != nil {
		return err
	}
	o.srv.cfg.Files, o.srv.ns = files, o.server
	if err := o.srv.Start(ctx); err != nil {
		return err
	}
	o.cl.cfg.Conf, o.cl.ns = files.ClientConf(), o.client
	if err := o.cl.Up(ctx); err != nil {
		return err
	}
	if err := o.cl.Ready(ctx); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	return nil
}

// startTransport starts what carries the transport from the client's
// namespace to listen, the server's address, and returns where the client
// connects: the link's address over UDP, the carrier's relay over TCP.
func (o *OpenVPN) startTransport(ctx context.Context, listen netip.AddrPort) (netip.AddrPort, error) {
	cfg := LinkConfig{Settings: o.cfg.Link, Seed: o.cfg.Seed, Server: listen}
	if o.cfg.Transport == TransportUDP {
		link := NewLink(cfg)
		// Its sockets open in the client's namespace and stay there.
		link.listen = func(ctx context.Context, addr string) (c *net.UDPConn, err error) {
			err = o.client.Do(func() error { c, err = listenUDP(ctx, addr); return err })
			return c, err
		}
		if err := o.client.Do(func() error { return link.Start(ctx) }); err != nil {
			return netip.AddrPort{}, err
		}
		o.link = link
		return link.Addr(), nil
	}
	relay, err := nsNet{o.client}.ListenTCP(netip.MustParseAddrPort("127.0.0.1:0"))
	if err != nil {
		return netip.AddrPort{}, err
	}
	o.tcp, err = startCarrier(ctx, cfg, relay, func(ctx context.Context) (net.Conn, error) {
		return nsNet{o.server}.DialContext(ctx, "tcp", listen.String())
	})
	if err != nil {
		relay.Close()
		return netip.AddrPort{}, err
	}
	o.link = o.tcp.link
	return relay.Addr().(*net.TCPAddr).AddrPort(), nil
}

// Close stops both openvpn processes and everything else the lab started,
// waits for them, and removes its files; the namespaces end with them,
// and every device in them.
func (o *OpenVPN) Close() error {
	errs := []error{o.cl.Close()}
	if o.tcp != nil {
		errs = append(errs, o.tcp.close())
	} else if o.link != nil {
		errs = append(errs, o.link.Close())
	}
	errs = append(errs, o.srv.Close())
	for _, ns := range []*netns.NS{o.client, o.server} {
		if ns != nil {
			errs = append(errs, ns.Close())
		}
	}
	if o.dir != nil {
		errs = append(errs, o.dir.remove())
	}
	return errors.Join(errs...)
}
