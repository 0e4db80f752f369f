package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
)

// The carrier's two ends: its own small network, on netstacks of its own.
var (
	carrierNear = netip.MustParseAddr("10.98.0.2")
	carrierFar  = netip.MustParseAddr("10.98.0.1")
)

// carrierMTU keeps the carrier's packets, IPv4 and UDP headers included,
// within a 1500-byte path.
const carrierMTU = 1400

// tcpCarrier carries OpenVPN's TCP transport across the shaped Link as a
// real TCP connection: openvpn's client connects to relay (a kernel
// socket in the client's namespace); the carrier opens a connection for it
// from a netstack of its own (near) to another (far), whose IP packets are
// the link's datagrams, and from far to the server's openvpn. The link's
// rate, delay, queue, loss and outages then act on the segments of the one
// TCP connection that carries every flow in the tunnel, which retransmits
// as a real path makes it: TCP over TCP.
type tcpCarrier struct {
	near, far   *netTUN
	nearUDP     *net.UDPConn // the near stack's packets, to and from the link
	farUDP      *net.UDPConn // the far stack's, from and to the link
	link        *Link
	relay, farL net.Listener
	dialServer  func(context.Context) (net.Conn, error)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]bool // the kernel sockets of open connections
}

// startCarrier starts the carrier: linkCfg is the link's (its Server is
// set here), relay where openvpn's client connects, dialServer how the far
// end reaches openvpn's server. On error it cleans up after itself.
func startCarrier(ctx context.Context, linkCfg LinkConfig, relay net.Listener, dialServer func(context.Context) (net.Conn, error)) (c *tcpCarrier, err error) {
	c = &tcpCarrier{relay: relay, dialServer: dialServer, conns: map[net.Conn]bool{}}
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	if c.near, err = newNetTUN(carrierNear, carrierMTU, Buffers{}, nil); err != nil {
		return nil, err
	}
	if c.far, err = newNetTUN(carrierFar, carrierMTU, Buffers{}, nil); err != nil {
		return nil, err
	}
	if c.nearUDP, err = listenUDP(ctx, ""); err != nil {
		return nil, err
	}
	if c.farUDP, err = listenUDP(ctx, ""); err != nil {
		return nil, err
	}
	linkCfg.Server = c.farUDP.LocalAddr().(*net.UDPAddr).AddrPort()
	c.link = NewLink(linkCfg)
	if err := c.link.Start(ctx); err != nil {
		c.link = nil
		return nil, err
	}
	if c.farL, err = c.far.ListenTCP(netip.AddrPortFrom(carrierFar, OpenVPNPort)); err != nil {
		return nil, fmt.Errorf("harness: carrier listen: %w", err)
	}
	linkAddr, serverSide := c.link.Addr(), c.link.ServerSideAddr()
	c.wg.Add(6)
	go c.pumpOut(c.near, c.nearUDP, linkAddr)
	go c.pumpIn(c.nearUDP, c.near)
	go c.pumpOut(c.far, c.farUDP, serverSide)
	go c.pumpIn(c.farUDP, c.far)
	go c.accept(c.relay, func(ctx context.Context) (net.Conn, error) {
		return c.near.DialContext(ctx, "tcp", netip.AddrPortFrom(carrierFar, OpenVPNPort).String())
	})
	go c.accept(c.farL, c.dialServer)
	return c, nil
}

// pumpOut sends the stack's packets to the link until the stack closes.
func (c *tcpCarrier) pumpOut(t *netTUN, out *net.UDPConn, to netip.AddrPort) {
	defer c.wg.Done()
	bufs, sizes := make([][]byte, t.BatchSize()), make([]int, t.BatchSize())
	for i := range bufs {
		bufs[i] = make([]byte, carrierMTU)
	}
	for {
		n, err := t.Read(bufs, sizes, 0)
		if err != nil {
			return
		}
		for i := range n {
			_, _ = out.WriteToUDPAddrPort(bufs[i][:sizes[i]], to)
		}
	}
}

// pumpIn gives the stack the link's packets until the socket closes.
func (c *tcpCarrier) pumpIn(in *net.UDPConn, t *netTUN) {
	defer c.wg.Done()
	buf := make([]byte, 64<<10)
	for {
		n, _, err := in.ReadFromUDPAddrPort(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err == nil {
			_, _ = t.Write([][]byte{buf[:n]}, 0)
		}
	}
}

// accept joins each connection ln accepts to one dial opens, until ln
// closes.
func (c *tcpCarrier) accept(ln net.Listener, dial func(context.Context) (net.Conn, error)) {
	defer c.wg.Done()
	for {
		in, err := ln.Accept()
		if err != nil {
			return
		}
		c.wg.Go(func() { c.join(in, dial) })
	}
}

// join copies between in and a connection dial opens, both ways, until
// either ends; then it closes both.
func (c *tcpCarrier) join(in net.Conn, dial func(context.Context) (net.Conn, error)) {
	if !c.track(in, true) {
		in.Close()
		return
	}
	defer c.track(in, false)
	defer in.Close()
	out, err := dial(c.ctx)
	if err != nil {
		return
	}
	defer out.Close()
	done := make(chan struct{}, 2)
	for _, p := range [][2]net.Conn{{in, out}, {out, in}} {
		c.wg.Go(func() {
			_, _ = io.Copy(p[0], p[1])
			done <- struct{}{}
		})
	}
	select {
	case <-done:
	case <-c.ctx.Done():
	}
	// Closing both ends the other copy too.
}

// track adds or removes a connection to close on close; it adds none once
// the carrier is closing.
func (c *tcpCarrier) track(conn net.Conn, add bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !add {
		delete(c.conns, conn)
		return true
	}
	if c.conns == nil {
		return false
	}
	c.conns[conn] = true
	return true
}

// close stops everything the carrier started and waits for it.
func (c *tcpCarrier) close() error {
	c.cancel()
	var errs []error
	for _, l := range []net.Listener{c.relay, c.farL} {
		if l != nil {
			l.Close()
		}
	}
	c.mu.Lock()
	for conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
	c.mu.Unlock()
	for _, t := range []*netTUN{c.near, c.far} {
		if t != nil {
			t.Close() // aborts the stack's connections, ends pumpOut
		}
	}
	for _, u := range []*net.UDPConn{c.nearUDP, c.farUDP} {
		if u != nil {
			u.Close() // ends pumpIn
		}
	}
	if c.link != nil {
		errs = append(errs, c.link.Close())
	}
	c.wg.Wait()
	return errors.Join(errs...)
}
