package harness

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"sync"

	"golang.zx2c4.com/wireguard/conn"
)

// udpBind is a conn.Bind on one UDP socket bound to a chosen host, unlike
// conn.StdNetBind, which always binds every interface. The lab's peers bind
// loopback unless told otherwise, so nothing is reachable from elsewhere.
// It reads and writes one packet per system call: the shaped rates are far
// below what that costs.
type udpBind struct {
	host string // e.g. "127.0.0.1"; "" means all interfaces
	// sent and received, when set, are the netstack's (netTUN): Send lets
	// out of sent, the receive function takes into received.
	sent, received *heldPackets

	mu sync.Mutex
	c  *net.UDPConn
}

var _ conn.Bind = (*udpBind)(nil)

func (b *udpBind) Open(port uint16) ([]conn.ReceiveFunc, uint16, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.c != nil {
		return nil, 0, conn.ErrBindAlreadyOpen
	}
	c, err := listenUDP(context.Background(), net.JoinHostPort(b.host, strconv.Itoa(int(port))))
	if err != nil {
		return nil, 0, err
	}
	b.c = c
	recv := func(packets [][]byte, sizes []int, eps []conn.Endpoint) (int, error) {
		b.received.wait()
		n, from, err := c.ReadFromUDPAddrPort(packets[0])
		if err != nil {
			return 0, err
		}
		b.received.in(1)
		sizes[0] = n
		eps[0] = udpEndpoint(netip.AddrPortFrom(from.Addr().Unmap(), from.Port()))
		return 1, nil
	}
	return []conn.ReceiveFunc{recv}, uint16(c.LocalAddr().(*net.UDPAddr).Port), nil
}

func (b *udpBind) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.c == nil {
		return nil
	}
	err := b.c.Close()
	b.c = nil
	return err
}

func (b *udpBind) SetMark(uint32) error { return nil }
func (b *udpBind) BatchSize() int       { return 1 }

func (b *udpBind) Send(bufs [][]byte, ep conn.Endpoint) error {
	e, ok := ep.(udpEndpoint)
	if !ok {
		return conn.ErrWrongEndpointType
	}
	b.mu.Lock()
	c := b.c
	b.mu.Unlock()
	if c == nil {
		return net.ErrClosed
	}
	b.sent.out(len(bufs))
	var errs []error
	for _, p := range bufs {
		if _, err := c.WriteToUDPAddrPort(p, netip.AddrPort(e)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (b *udpBind) ParseEndpoint(s string) (conn.Endpoint, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return nil, err
	}
	return udpEndpoint(ap), nil
}

// udpEndpoint is a peer's UDP address.
type udpEndpoint netip.AddrPort

func (e udpEndpoint) ClearSrc()           {}
func (e udpEndpoint) SrcToString() string { return "" }
func (e udpEndpoint) DstToString() string { return netip.AddrPort(e).String() }
func (e udpEndpoint) DstIP() netip.Addr   { return netip.AddrPort(e).Addr() }
func (e udpEndpoint) SrcIP() netip.Addr   { return netip.Addr{} }
func (e udpEndpoint) DstToBytes() []byte {
	b, _ := netip.AddrPort(e).MarshalBinary()
	return b
}
