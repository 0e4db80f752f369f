package harness

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.zx2c4.com/wireguard/tun"
	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/link/channel"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv6"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/icmp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/udp"
	"gvisor.dev/gvisor/pkg/waiter"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// This file is wireguard-go's tun/netstack reduced to what the lab needs,
// for two reasons: netstack.CreateNetTUN gives no access to the gVisor
// stack, whose TCP buffer defaults (1 MiB send and receive per connection)
// would let thousands of greedy flows eat gigabytes; and its Close can race
// a pending packet into a closed channel, which a lab that restarts its
// client peer would hit.

// Buffers are the TCP buffer limits of a netstack, in bytes. Both grow by
// auto-tuning from Default up to Max as a connection's window needs it, so
// idle or slow connections stay small and one fast flow can still fill a
// 100 Mbit/s link. The zero value means DefaultBuffers.
type Buffers struct {
	SendDefault, SendMax       int
	ReceiveDefault, ReceiveMax int
}

// DefaultBuffers keep a greedy flow on a slow shared link at about
// 32 KiB of send buffer, so 3,000 of them cost about 100 MiB.
var DefaultBuffers = Buffers{SendDefault: 32 << 10, SendMax: 4 << 20, ReceiveDefault: 64 << 10, ReceiveMax: 4 << 20}

// ManyFlowsBuffers keep a lab's thousands of flows small: a 20 Mbit/s link
// shared by thousands of flows needs far less than DefaultBuffers' 4 MiB
// windows. The scenarios use them (docs/lab.md, "What a connection
// costs").
var ManyFlowsBuffers = Buffers{SendDefault: 16 << 10, SendMax: 256 << 10, ReceiveDefault: 32 << 10, ReceiveMax: 256 << 10}

// MinSendBuffer is the smallest send buffer ceiling BuffersFor gives: about
// three segments, a window that still recovers a loss without a timeout
// now and then.
const MinSendBuffer = 4 << 10

// BuffersFor returns ManyFlowsBuffers with the send buffer's ceiling cut
// to what one of conns greedy flows needs on a link of rate r and one-way
// delay d: its share of the rate over the round trip and a full queue's
// delay (250 ms allowed), twice over, as gVisor's auto-tuning sizes a
// send buffer at twice the congestion window. Auto-tuning grows every
// send buffer to at least 10 segments' worth, twice (28 KiB) however small
// the flow's share: 14,000 greedy flows held 368 MB in their send queues
// (pprof of the default suite); with a ceiling of 4 KiB each holds at most
// that. An unlimited rate (0) or no connections give ManyFlowsBuffers.
func BuffersFor(r Rate, d time.Duration, conns int) Buffers {
	b := ManyFlowsBuffers
	if r <= 0 || conns <= 0 {
		return b
	}
	rtt := 2*d + 250*time.Millisecond
	need := int(2 * float64(r) / 8 / float64(conns) * rtt.Seconds())
	b.SendMax = min(b.SendMax, max(need, MinSendBuffer))
	b.SendDefault = min(b.SendDefault, b.SendMax)
	return b
}

const nicID = 1

// netTUN is a tun.Device whose other side is a gVisor TCP/IP stack.
type netTUN struct {
	ep        *channel.Endpoint
	stack     *stack.Stack
	events    chan tun.Event
	mtu       int
	ctx       context.Context // cancelled by Close: unblocks Read
	cancel    context.CancelFunc
	closeOnce sync.Once
	hosts     map[string]netip.Addr
	// The interface's counters, as a kernel counts a tun device's: the
	// packets the stack sent into the tunnel (tx) and those the tunnel
	// delivered to it (rx).
	rxBytes, txBytes, rxPackets, txPackets atomic.Uint64
	// acks follows the acknowledgements the client's connections get, for
	// the delivery proof; nil on the server's side.
	acks *ackTracker
	// drop holds the kinds of packet the stack drops on arrival, as a far
	// side that filters them does (Server.Drop).
	drop dropFilter
	// sent and received bound the stack's packets and the link's in
	// flight through WireGuard (see maxHeld): Read takes into sent,
	// Write lets out of received.
	sent, received *heldPackets
}

// counters returns the interface's counters.
func (t *netTUN) counters() middleware.Counters {
	return middleware.Counters{
		RxBytes: t.rxBytes.Load(), TxBytes: t.txBytes.Load(),
		RxPackets: t.rxPackets.Load(), TxPackets: t.txPackets.Load(),
	}
}

// newNetTUN creates the stack with one address. hosts maps names to
// in-tunnel addresses for Dial, which resolves them without asking a DNS
// server.
func newNetTUN(addr netip.Addr, mtu int, bufs Buffers, hosts map[string]netip.Addr) (*netTUN, error) {
	if bufs == (Buffers{}) {
		bufs = DefaultBuffers
	}
	s := stack.New(stack.Options{
		NetworkProtocols:   []stack.NetworkProtocolFactory{ipv4.NewProtocol, ipv6.NewProtocol},
		TransportProtocols: []stack.TransportProtocolFactory{tcp.NewProtocol, udp.NewProtocol, icmp.NewProtocol4, icmp.NewProtocol6},
		HandleLocal:        true,
	})
	ctx, cancel := context.WithCancel(context.Background())
	t := &netTUN{
		ep:     channel.New(1024, uint32(mtu), ""),
		stack:  s,
		events: make(chan tun.Event, 1),
		mtu:    mtu,
		ctx:    ctx,
		cancel: cancel,
		hosts:  hosts,
	}
	fail := func(what string, err tcpip.Error) (*netTUN, error) {
		s.Destroy()
		cancel()
		return nil, fmt.Errorf("harness: netstack %s: %v", what, err) // a tcpip.Error is no error
	}
	sack := tcpip.TCPSACKEnabled(true)
	if err := s.SetTransportProtocolOption(tcp.ProtocolNumber, &sack); err != nil {
		return fail("SACK", err)
	}
	cc := tcpip.CongestionControlOption("cubic")
	if err := s.SetTransportProtocolOption(tcp.ProtocolNumber, &cc); err != nil {
		return fail("congestion control", err)
	}
	snd := tcpip.TCPSendBufferSizeRangeOption{Min: 4 << 10, Default: bufs.SendDefault, Max: bufs.SendMax}
	if err := s.SetTransportProtocolOption(tcp.ProtocolNumber, &snd); err != nil {
		return fail("send buffer", err)
	}
	rcv := tcpip.TCPReceiveBufferSizeRangeOption{Min: 4 << 10, Default: bufs.ReceiveDefault, Max: bufs.ReceiveMax}
	if err := s.SetTransportProtocolOption(tcp.ProtocolNumber, &rcv); err != nil {
		return fail("receive buffer", err)
	}
	moderate := tcpip.TCPModerateReceiveBufferOption(true)
	if err := s.SetTransportProtocolOption(tcp.ProtocolNumber, &moderate); err != nil {
		return fail("receive buffer moderation", err)
	}
	if err := s.CreateNIC(nicID, t.ep); err != nil {
		return fail("NIC", err)
	}
	proto := ipv4.ProtocolNumber
	route := header.IPv4EmptySubnet
	if addr.Is6() {
		proto, route = ipv6.ProtocolNumber, header.IPv6EmptySubnet
	}
	pa := tcpip.ProtocolAddress{Protocol: proto, AddressWithPrefix: tcpip.AddrFromSlice(addr.AsSlice()).WithPrefix()}
	if err := s.AddProtocolAddress(nicID, pa, stack.AddressProperties{}); err != nil {
		return fail("address", err)
	}
	s.AddRoute(tcpip.Route{Destination: route, NIC: nicID})
	t.events <- tun.EventUp
	return t, nil
}

func (t *netTUN) File() *os.File           { return nil }
func (t *netTUN) Name() (string, error)    { return "lab", nil }
func (t *netTUN) MTU() (int, error)        { return t.mtu, nil }
func (t *netTUN) Events() <-chan tun.Event { return t.events }

// BatchSize is one packet per Read. WireGuard queues what it reads in
// batches of up to this many packets, each in a buffer of 64 KiB, and
// counts its queues' limits in batches: a client peer with no session (a
// restart during an outage) stages up to 128 batches until its handshake
// completes, which with 16 a batch held 128 MiB a device. The lab's rates
// need no batching: the link relays one packet per system call.
func (t *netTUN) BatchSize() int { return 1 }

// Read blocks for one outbound packet of the stack, then takes whatever
// else is already waiting, up to len(bufs).
func (t *netTUN) Read(bufs [][]byte, sizes []int, offset int) (n int, err error) {
	t.sent.wait()
	defer func() { t.sent.in(n) }()
	pkt := t.ep.ReadContext(t.ctx)
	if pkt == nil {
		return 0, os.ErrClosed
	}
	for {
		view := pkt.ToView()
		pkt.DecRef()
		sizes[n] = copy(bufs[n][offset:], view.AsSlice())
		view.Release()
		t.txPackets.Add(1)
		t.txBytes.Add(uint64(sizes[n]))
		n++
		if n == len(bufs) {
			return n, nil
		}
		if pkt = t.ep.Read(); pkt == nil {
			return n, nil
		}
	}
}

// Write injects decrypted packets into the stack.
func (t *netTUN) Write(bufs [][]byte, offset int) (int, error) {
	t.received.out(len(bufs))
	for _, b := range bufs {
		p := b[offset:]
		if len(p) == 0 {
			continue
		}
		// Counted on arrival, before the stack can act on the packet: a
		// reader it wakes must find it counted.
		t.rxPackets.Add(1)
		t.rxBytes.Add(uint64(len(p)))
		if t.drop.drops(p) {
			continue // filtered without an answer
		}
		if t.acks != nil {
			t.acks.inbound(p, time.Now())
		}
		pkb := stack.NewPacketBuffer(stack.PacketBufferOptions{Payload: buffer.MakeWithData(p)})
		switch p[0] >> 4 {
		case 4:
			t.ep.InjectInbound(header.IPv4ProtocolNumber, pkb)
		case 6:
			t.ep.InjectInbound(header.IPv6ProtocolNumber, pkb)
		default:
			pkb.DecRef()
			return 0, syscall.EAFNOSUPPORT
		}
		pkb.DecRef()
	}
	return len(bufs), nil
}

// Close aborts every connection of the stack and waits for its goroutines.
// WireGuard's device.Close calls it; calling it again is harmless.
func (t *netTUN) Close() error {
	t.closeOnce.Do(func() {
		t.cancel()
		t.ep.Close()
		t.stack.Close()
		t.stack.Wait()
		close(t.events) // ends WireGuard's event reader
	})
	return nil
}

// DialContext dials a TCP or UDP address inside the tunnel, or with network
// "ping4" or "ping6" opens an ICMP echo socket to a host (see dialPing).
// The host is an IP address or one of the lab's names. As net.Dialer does,
// it dials nothing once ctx is done; only a TCP dial has a handshake for
// ctx to cut short.
func (t *netTUN) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	if network == "ping4" || network == "ping6" {
		c, err := t.dialPing(address)
		if err != nil {
			return nil, &net.OpError{Op: "dial", Net: network, Err: err}
		}
		return c, nil
	}
	ap, err := t.resolve(address)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	fa, proto := fullAddr(ap)
	switch network {
	case "tcp", "tcp4", "tcp6":
		return gonet.DialContextTCP(ctx, t.stack, fa, proto)
	case "udp", "udp4", "udp6":
		return gonet.DialUDP(t.stack, nil, &fa, proto)
	}
	return nil, &net.OpError{Op: "dial", Net: network, Err: net.UnknownNetworkError(network)}
}

// dialPing opens an ICMP echo socket connected to host, which behaves as
// Linux's unprivileged ping sockets do: each Write sends one echo request
// (the stack sets its identifier and checksum), each Read returns one echo
// reply to it, ICMP header first.
func (t *netTUN) dialPing(host string) (net.Conn, error) {
	a, err := t.resolveHost(host)
	if err != nil {
		return nil, err
	}
	transport, network := icmp.ProtocolNumber4, ipv4.ProtocolNumber
	if a.Is6() {
		transport, network = icmp.ProtocolNumber6, ipv6.ProtocolNumber
	}
	var wq waiter.Queue
	ep, terr := t.stack.NewEndpoint(transport, network, &wq)
	if terr != nil {
		return nil, fmt.Errorf("ICMP endpoint: %v", terr)
	}
	fa, _ := fullAddr(netip.AddrPortFrom(a, 0))
	if terr := ep.Connect(fa); terr != nil {
		ep.Close()
		return nil, fmt.Errorf("ICMP connect: %v", terr)
	}
	// gonet's datagram conn serves any datagram endpoint, deadlines
	// included.
	return gonet.NewUDPConn(&wq, ep), nil
}

func (t *netTUN) resolve(address string) (netip.AddrPort, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return netip.AddrPort{}, err
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("bad port %q", port)
	}
	a, err := t.resolveHost(host)
	return netip.AddrPortFrom(a, uint16(p)), err
}

// resolveHost returns the address of host: an IP address, or one of the
// lab's names.
func (t *netTUN) resolveHost(host string) (netip.Addr, error) {
	a, err := netip.ParseAddr(host)
	if err != nil {
		var ok bool
		if a, ok = t.hosts[host]; !ok {
			return netip.Addr{}, &net.DNSError{Err: "no such host in the lab", Name: host, IsNotFound: true}
		}
	}
	return a.Unmap(), nil
}

// ListenTCP listens inside the tunnel. Its connections are sink.Drainers
// (see drainListener).
func (t *netTUN) ListenTCP(ap netip.AddrPort) (net.Listener, error) {
	fa, proto := fullAddr(ap)
	return listenDrainTCP(t.stack, fa, proto)
}

// ListenUDP opens a UDP socket inside the tunnel.
func (t *netTUN) ListenUDP(ap netip.AddrPort) (net.PacketConn, error) {
	fa, proto := fullAddr(ap)
	return gonet.DialUDP(t.stack, &fa, nil, proto)
}

func fullAddr(ap netip.AddrPort) (tcpip.FullAddress, tcpip.NetworkProtocolNumber) {
	proto := ipv4.ProtocolNumber
	if ap.Addr().Is6() {
		proto = ipv6.ProtocolNumber
	}
	fa := tcpip.FullAddress{NIC: nicID, Port: ap.Port()}
	if ap.Addr().IsValid() && !ap.Addr().IsUnspecified() {
		fa.Addr = tcpip.AddrFromSlice(ap.Addr().AsSlice())
	}
	return fa, proto
}
