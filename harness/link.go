package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// LinkConfig configures a Link.
type LinkConfig struct {
	// Settings are the initial link settings.
	Settings Settings
	// Seed seeds the random loss of both directions, so that a run can be
	// repeated.
	Seed uint64
	// Listen is the UDP address the client peer sends to. Empty means
	// 127.0.0.1 on a free port.
	Listen string
	// ServerListen is the local UDP address used towards the server peer.
	// Empty means a free port on 127.0.0.1 when the server is on loopback,
	// else on the local address that routes to the server (a server in
	// another container or host): a plain address, not a dual-stack
	// wildcard, so that the server's packets come back from exactly the
	// address the link was given and the link accepts them.
	ServerListen string
	// Server is the server peer's UDP address. Required.
	Server netip.AddrPort
}

// Link is the shaped link between the two WireGuard peers: a UDP relay that
// carries their encrypted packets through one FIFO queue per direction.
// The client peer sends to Addr; the link forwards to the server peer from
// another socket and returns the server's packets to the client address it
// saw last (as a NAT would, so a restarted client on a new port works).
//
// Settings can be changed at any time, also while traffic flows.
type Link struct {
	cfg LinkConfig

	mu   sync.Mutex // guards set
	set  Settings
	up   *direction // client to server
	down *direction // server to client

	client atomic.Pointer[netip.AddrPort] // last client address seen
	cconn  *net.UDPConn                   // client-facing socket
	sconn  atomic.Pointer[net.UDPConn]    // server-facing socket, one per client address
	// remapMu serialises a new server-facing socket with Close; closed
	// says Close has begun and no socket may open.
	remapMu    sync.Mutex
	closed     bool
	serverAddr string // the server-facing sockets' local address
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	started    bool

	// listen opens the link's sockets; nil is listenUDP. A link in a
	// network namespace opens them there, the server-facing sockets of
	// remap among them.
	listen func(ctx context.Context, addr string) (*net.UDPConn, error)

	// enqueued, when set (by tests, before Start), is called by a reader
	// after each packet it offered to its queue: a point to synchronise on.
	enqueued func(fromClient, accepted bool)
}

// direction is one way of the link: the reader goroutine of its ingress
// socket enqueues, its pacer goroutine delivers.
type direction struct {
	mu   sync.Mutex
	sh   *shaper
	wake chan struct{} // capacity 1: "the shaper changed, look again"
}

// NewLink returns a Link; it opens nothing until Start.
func NewLink(cfg LinkConfig) *Link {
	return &Link{cfg: cfg, set: cfg.Settings}
}

// Start opens the two sockets and starts the relay. It returns an error if
// the settings are invalid, a socket cannot be opened or ctx is done before
// the relay starts; ctx bounds the start only, the relay runs until Close.
func (l *Link) Start(ctx context.Context) error {
	if l.started {
		return errors.New("harness: link already started")
	}
	if err := l.set.Validate(); err != nil {
		return err
	}
	if !l.cfg.Server.IsValid() {
		return errors.New("harness: link needs the server peer's address")
	}
	// Opening a socket on a literal address does not look at ctx.
	if err := ctx.Err(); err != nil {
		return err
	}
	if l.listen == nil {
		l.listen = listenUDP
	}
	cconn, err := l.listen(ctx, l.cfg.Listen)
	if err != nil {
		return fmt.Errorf("harness: link listen: %w", err)
	}
	serverListen, err := l.serverListen()
	if err != nil {
		cconn.Close()
		return fmt.Errorf("harness: link towards server: %w", err)
	}
	sconn, err := l.listen(ctx, serverListen)
	if err != nil {
		cconn.Close()
		return fmt.Errorf("harness: link listen towards server: %w", err)
	}
	l.cconn, l.serverAddr, l.closed = cconn, serverListen, false
	l.sconn.Store(sconn)
	l.mu.Lock() // Update may run concurrently and reads up and down
	l.up = &direction{sh: newShaper(l.set.direction(true), l.cfg.Seed, putPacket), wake: make(chan struct{}, 1)}
	l.down = &direction{sh: newShaper(l.set.direction(false), l.cfg.Seed+1, putPacket), wake: make(chan struct{}, 1)}
	l.mu.Unlock()
	// The relay outlives the Start context: it runs until Close.
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l.cancel = cancel
	l.started = true
	l.wg.Add(4)
	go l.read(cconn, l.up, true)
	go l.read(sconn, l.down, false)
	go l.pace(rctx, l.up, l.sconn.Load, func() (netip.AddrPort, bool) { return l.cfg.Server, true })
	go l.pace(rctx, l.down, func() *net.UDPConn { return cconn }, func() (netip.AddrPort, bool) {
		if a := l.client.Load(); a != nil {
			return *a, true
		}
		return netip.AddrPort{}, false
	})
	return nil
}

func listenUDP(ctx context.Context, addr string) (*net.UDPConn, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var lc net.ListenConfig
	pc, err := lc.ListenPacket(ctx, "udp", addr)
	if err != nil {
		return nil, err
	}
	c := pc.(*net.UDPConn)
	// A larger socket buffer keeps the kernel from adding losses of its own
	// when the reader is briefly descheduled; the kernel caps it.
	_ = c.SetReadBuffer(4 << 20)
	_ = c.SetWriteBuffer(4 << 20)
	return c, nil
}

// Close stops the relay, waits for its goroutines and drops what is queued.
func (l *Link) Close() error {
	if !l.started {
		return nil
	}
	l.started = false
	l.cancel()
	l.remapMu.Lock()
	l.closed = true
	l.remapMu.Unlock()
	// Closing the sockets unblocks the readers.
	err := errors.Join(l.cconn.Close(), l.sconn.Load().Close())
	l.wg.Wait()
	return err
}

// Addr is the UDP address the client peer sends to.
func (l *Link) Addr() netip.AddrPort {
	return l.cconn.LocalAddr().(*net.UDPAddr).AddrPort()
}

// ServerSideAddr is the UDP address the server peer sees the client at.
func (l *Link) ServerSideAddr() netip.AddrPort {
	return l.sconn.Load().LocalAddr().(*net.UDPAddr).AddrPort()
}

// Settings returns the current settings.
func (l *Link) Settings() Settings {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.set
}

// Update changes the settings atomically: f edits a copy, which is
// validated and then applied to both directions at once (each as
// Settings.UplinkDown and DownlinkDown say). Concurrent Updates
// do not lose each other's changes.
func (l *Link) Update(f func(*Settings)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.set
	f(&s)
	if err := s.Validate(); err != nil {
		return err
	}
	l.set = s
	if l.up == nil { // not started: Start picks the settings up
		return nil
	}
	now := time.Now()
	for _, d := range []*direction{l.up, l.down} {
		d.mu.Lock()
		d.sh.settings(now, s.direction(d == l.up))
		d.mu.Unlock()
		d.poke()
	}
	return nil
}

// LinkStats is a snapshot of the settings and both directions' counters.
type LinkStats struct {
	Settings Settings
	// Uplink is client to server, Downlink server to client.
	Uplink, Downlink Counters
}

// Stats returns the current settings and counters.
func (l *Link) Stats() LinkStats {
	l.mu.Lock()
	st := LinkStats{Settings: l.set}
	up, down := l.up, l.down
	l.mu.Unlock()
	if up == nil {
		return st
	}
	up.mu.Lock()
	st.Uplink = up.sh.counters()
	up.mu.Unlock()
	down.mu.Lock()
	st.Downlink = down.sh.counters()
	down.mu.Unlock()
	return st
}

func (d *direction) poke() {
	select {
	case d.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// read feeds one direction from its ingress socket until the socket closes.
func (l *Link) read(c *net.UDPConn, d *direction, fromClient bool) {
	defer l.wg.Done()
	buf := make([]byte, 64<<10)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // e.g. ICMP port unreachable surfacing as ECONNREFUSED
		}
		if fromClient {
			if a := l.client.Load(); a == nil || *a != from {
				l.client.Store(&from)
				if a != nil {
					l.remap()
				}
			}
		} else if from != l.cfg.Server {
			continue // only the server peer may send from this side
		}
		p := getPacket(n)
		copy(p.buf, buf[:n])
		d.mu.Lock()
		ok := d.sh.enqueue(time.Now(), p)
		d.mu.Unlock()
		if ok {
			d.poke()
		}
		if l.enqueued != nil {
			l.enqueued(fromClient, ok)
		}
	}
}

// pace delivers one direction's packets when they are due, until ctx ends.
func (l *Link) pace(ctx context.Context, d *direction, out func() *net.UDPConn, dst func() (netip.AddrPort, bool)) {
	defer l.wg.Done()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		d.mu.Lock()
		p, wait := d.sh.next(time.Now())
		d.mu.Unlock()
		if p != nil {
			if to, ok := dst(); ok {
				_, _ = out().WriteToUDPAddrPort(p.buf[:p.n], to)
			}
			putPacket(p)
			continue
		}
		if wait < 0 {
			select {
			case <-ctx.Done():
				return
			case <-d.wake:
			}
			continue
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-t.C:
		}
	}
}

const pooledPacketSize = 2048 // WireGuard packets fit: MTU 1420 + 32 overhead

var packetPool = sync.Pool{New: func() any { return &packet{buf: make([]byte, pooledPacketSize)} }}

func getPacket(n int) *packet {
	if n > pooledPacketSize {
		return &packet{buf: make([]byte, n), n: n}
	}
	p := packetPool.Get().(*packet)
	p.n = n
	return p
}

func putPacket(p *packet) {
	if cap(p.buf) != pooledPacketSize {
		return
	}
	*p = packet{buf: p.buf[:pooledPacketSize]}
	packetPool.Put(p)
}

// remap gives a client at a new address a new server-facing socket, as a
// NAT gives a new flow a new mapping: the server sees a restarted client
// (a new source port) as a new peer, as it would on a real path. OpenVPN's
// server tells its clients apart by address, and took a restarted
// client from the same address for the old one until that timed out. The
// old socket is closed; what the server still sends to it is lost.
func (l *Link) remap() {
	l.remapMu.Lock()
	defer l.remapMu.Unlock()
	if l.closed {
		return
	}
	c, err := l.listen(context.Background(), l.serverAddr)
	if err != nil {
		return // the old mapping stays
	}
	old := l.sconn.Swap(c)
	l.wg.Add(1)
	go l.read(c, l.down, false)
	old.Close()
}

// serverListen returns the address to listen on towards the server; see
// LinkConfig.ServerListen.
func (l *Link) serverListen() (string, error) {
	if l.cfg.ServerListen != "" || l.cfg.Server.Addr().IsLoopback() {
		return l.cfg.ServerListen, nil
	}
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(l.cfg.Server)) // sends nothing: picks the route
	if err != nil {
		return "", err
	}
	defer c.Close()
	return netip.AddrPortFrom(c.LocalAddr().(*net.UDPAddr).AddrPort().Addr().Unmap(), 0).String(), nil
}
