package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"golang.zx2c4.com/wireguard/device"

	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// In-tunnel addresses and ports. They exist only inside the two netstacks:
// no packet to or from them ever reaches the host's network.
var (
	ServerTunnelAddr = netip.MustParseAddr("10.99.0.1")
	ClientTunnelAddr = netip.MustParseAddr("10.99.0.2")
)

const (
	TLSPort  = 443
	SinkPort = 9  // discard
	EchoPort = 7  // echo
	DNSPort  = 53 // the lab's names, over UDP
	// DefaultMTU is the tunnel MTU, WireGuard's usual 1420.
	DefaultMTU = 1420
	// TLSHost and SinkHost are names the client's Dial resolves to the
	// server's in-tunnel address (the lab has no DNS).
	TLSHost  = "tls.lab"
	SinkHost = "sink.lab"
)

func labHosts(server netip.Addr) map[string]netip.Addr {
	return map[string]netip.Addr{TLSHost: server, SinkHost: server}
}

// peer is one WireGuard device on its own netstack.
type peer struct {
	dev  *device.Device
	tun  *netTUN
	bind *udpBind
}

type peerConfig struct {
	priv    Key
	listen  string // UDP host:port
	addr    netip.Addr
	mtu     int
	bufs    Buffers
	hosts   map[string]netip.Addr
	peerCfg string // the UAPI lines of the one peer
	log     *slog.Logger
}

func startPeer(c peerConfig) (*peer, error) {
	host, port, err := splitListen(c.listen)
	if err != nil {
		return nil, err
	}
	t, err := newNetTUN(c.addr, c.mtu, c.bufs, c.hosts)
	if err != nil {
		return nil, err
	}
	logger := device.NewLogger(device.LogLevelSilent, "")
	if c.log != nil {
		l := c.log
		logger.Errorf = func(format string, args ...any) { l.Debug(fmt.Sprintf(format, args...)) }
		logger.Verbosef = func(format string, args ...any) { l.Debug(fmt.Sprintf(format, args...)) }
	}
	b := &udpBind{host: host}
	dev := device.NewDevice(t, b, logger) // takes ownership of t
	uapi := fmt.Sprintf("private_key=%s\nlisten_port=%d\nreplace_peers=true\n%s", c.priv.hex(), port, c.peerCfg)
	if err := dev.IpcSet(uapi); err != nil {
		dev.Close()
		return nil, fmt.Errorf("harness: configure WireGuard: %w", err)
	}
	if err := dev.Up(); err != nil {
		dev.Close()
		return nil, fmt.Errorf("harness: WireGuard up: %w", err)
	}
	return &peer{dev: dev, tun: t, bind: b}, nil
}

func splitListen(s string) (string, uint16, error) {
	if s == "" {
		return "127.0.0.1", 0, nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, fmt.Errorf("harness: UDP listen address %q: %w", s, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("harness: UDP listen address %q: bad port", s)
	}
	return host, uint16(p), nil
}

// udpAddr is the peer's UDP address; unspecified hosts read as loopback.
func (p *peer) udpAddr() netip.AddrPort {
	p.bind.mu.Lock()
	defer p.bind.mu.Unlock()
	if p.bind.c == nil {
		return netip.AddrPort{}
	}
	ap := p.bind.c.LocalAddr().(*net.UDPAddr).AddrPort()
	if ap.Addr().IsUnspecified() {
		ap = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), ap.Port())
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// close closes the device, which closes the netstack (aborting its
// connections) and the socket, and waits for the device's goroutines.
func (p *peer) close() { p.dev.Close() }

// ServerConfig configures the server peer. Zero fields take the defaults
// in their comments.
type ServerConfig struct {
	// PrivateKey is the server's key; zero generates one.
	PrivateKey Key
	// ClientPublicKey is the only peer allowed. Required.
	ClientPublicKey Key
	// Listen is the UDP address; default "127.0.0.1:0" (a free port).
	Listen string
	// Addr is the in-tunnel address; default ServerTunnelAddr.
	Addr netip.Addr
	// ClientAddr is the client's in-tunnel address; default ClientTunnelAddr.
	ClientAddr netip.Addr
	// MTU defaults to DefaultMTU.
	MTU int
	// Buffers are the netstack's TCP buffers; zero means DefaultBuffers.
	Buffers Buffers
	// Keepalive, when positive, is WireGuard's persistent keepalive
	// towards the client: the server then sends keepalives on its own,
	// whether or not it hears the client. Zero: none, as VPN servers
	// usually have. WireGuard counts it in whole seconds: rounded up.
	Keepalive time.Duration
	// Log receives WireGuard's errors at debug level; nil discards them.
	Log *slog.Logger
}

// Server is the server peer: a WireGuard device whose netstack hosts the TLS
// target on TLSPort, a discarding sink on SinkPort, an echoing sink on
// EchoPort and a DNS server for the lab's names on DNSPort (UDP); the
// netstack answers ICMP echo requests to its address.
type Server struct {
	cfg    ServerConfig
	ca     *CA
	peer   *peer
	target *TLSTarget
	// The sinks speak the load generator's protocol (package
	// loadgen/sink), so a load through the lab can ask for downloads.
	sink, echo   sink.Server
	stopSinks    context.CancelFunc
	sinksStopped sync.WaitGroup
	dns          net.PacketConn
}

// NewServer returns a Server; it starts nothing until Start.
func NewServer(cfg ServerConfig) *Server {
	if !cfg.Addr.IsValid() {
		cfg.Addr = ServerTunnelAddr
	}
	if !cfg.ClientAddr.IsValid() {
		cfg.ClientAddr = ClientTunnelAddr
	}
	if cfg.MTU == 0 {
		cfg.MTU = DefaultMTU
	}
	s := &Server{cfg: cfg}
	s.echo.Echo = true
	return s
}

// Start generates the CA (and the key if none was given), brings the
// device up and starts the services. On error everything started is
// closed again.
func (s *Server) Start(ctx context.Context) (err error) {
	if s.peer != nil {
		return errors.New("harness: server already started")
	}
	if s.cfg.ClientPublicKey == (Key{}) {
		return errors.New("harness: server needs the client's public key")
	}
	if s.cfg.PrivateKey == (Key{}) {
		if s.cfg.PrivateKey, err = GenerateKey(); err != nil {
			return err
		}
	}
	if s.ca, err = NewCA(); err != nil {
		return err
	}
	cert, err := s.ca.Issue(TLSHost, s.cfg.Addr.String())
	if err != nil {
		return err
	}
	p, err := startPeer(peerConfig{
		priv:   s.cfg.PrivateKey,
		listen: s.cfg.Listen,
		addr:   s.cfg.Addr,
		mtu:    s.cfg.MTU,
		bufs:   s.cfg.Buffers,
		peerCfg: fmt.Sprintf("public_key=%s\nallowed_ip=%s\npersistent_keepalive_interval=%d\n",
			s.cfg.ClientPublicKey.hex(), netip.PrefixFrom(s.cfg.ClientAddr, s.cfg.ClientAddr.BitLen()), keepaliveSeconds(s.cfg.Keepalive)),
		log: s.cfg.Log,
	})
	if err != nil {
		return err
	}
	s.peer = p
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	tl, err := p.tun.ListenTCP(netip.AddrPortFrom(s.cfg.Addr, TLSPort))
	if err != nil {
		return fmt.Errorf("harness: TLS target listen: %w", err)
	}
	s.target = StartTLSTarget(tl, cert)
	sinkCtx, stop := context.WithCancel(context.Background())
	s.stopSinks = stop
	for _, x := range []struct {
		sink *sink.Server
		port uint16
	}{{&s.sink, SinkPort}, {&s.echo, EchoPort}} {
		ln, err := p.tun.ListenTCP(netip.AddrPortFrom(s.cfg.Addr, x.port))
		if err != nil {
			return fmt.Errorf("harness: sink listen: %w", err)
		}
		s.sinksStopped.Go(func() { _ = x.sink.Serve(sinkCtx, ln) })
	}
	if s.dns, err = p.tun.ListenUDP(s.DNSAddr()); err != nil {
		return fmt.Errorf("harness: DNS listen: %w", err)
	}
	s.sinksStopped.Go(func() { serveDNS(s.dns, labHosts(s.cfg.Addr)) })
	return nil
}

// Close stops the services and the device and waits for their goroutines.
func (s *Server) Close() error {
	if s.peer == nil {
		return nil
	}
	var errs []error
	if s.target != nil {
		errs = append(errs, s.target.Close())
	}
	if s.dns != nil {
		s.dns.Close() // ends serveDNS
	}
	if s.stopSinks != nil {
		s.stopSinks()
	}
	s.sinksStopped.Wait()
	s.peer.close()
	s.peer = nil
	return errors.Join(errs...)
}

// PublicKey is the server's public key (valid after Start).
func (s *Server) PublicKey() Key { return s.cfg.PrivateKey.Public() }

// UDPAddr is the server's WireGuard UDP address.
func (s *Server) UDPAddr() netip.AddrPort { return s.peer.udpAddr() }

// CA is the CA that issued the TLS target's certificate.
func (s *Server) CA() *CA { return s.ca }

// TLSAddr, SinkAddr and EchoAddr are the in-tunnel service addresses.
func (s *Server) TLSAddr() netip.AddrPort  { return netip.AddrPortFrom(s.cfg.Addr, TLSPort) }
func (s *Server) SinkAddr() netip.AddrPort { return netip.AddrPortFrom(s.cfg.Addr, SinkPort) }
func (s *Server) EchoAddr() netip.AddrPort { return netip.AddrPortFrom(s.cfg.Addr, EchoPort) }

// DNSAddr is the in-tunnel address of the DNS server (UDP).
func (s *Server) DNSAddr() netip.AddrPort { return netip.AddrPortFrom(s.cfg.Addr, DNSPort) }

// SinkStats are the counters of the discarding sink.
func (s *Server) SinkStats() sink.Stats { return s.sink.Stats() }

// ClientConfig configures the client peer. Zero fields take the defaults
// in their comments.
type ClientConfig struct {
	// PrivateKey is the client's key; zero generates one.
	PrivateKey Key
	// ServerPublicKey is the server's key. Required.
	ServerPublicKey Key
	// Endpoint is where the client sends: the link, or the server itself.
	// Required.
	Endpoint netip.AddrPort
	// Listen is the UDP address; default "127.0.0.1:0" (a free port, a new
	// one after each restart, as a restarted VPN client would get).
	Listen string
	// Addr is the in-tunnel address; default ClientTunnelAddr.
	Addr netip.Addr
	// ServerAddr is the server's in-tunnel address, for the lab's host
	// names; default ServerTunnelAddr.
	ServerAddr netip.Addr
	// MTU defaults to DefaultMTU.
	MTU int
	// Buffers are the netstack's TCP buffers; zero means DefaultBuffers.
	Buffers Buffers
	// Keepalive is WireGuard's persistent keepalive; default 25s. It also
	// makes the client start its handshake as soon as it is up.
	Keepalive time.Duration
	// Log receives WireGuard's errors at debug level; nil discards them.
	Log *slog.Logger
}

// Client is the client peer. Dial opens connections inside the tunnel.
type Client struct {
	cfg ClientConfig

	mu     sync.RWMutex // guards peer and downAt; Down and Up hold it to swap devices
	peer   *peer
	downAt time.Time // when Down last closed a device
}

// NewClient returns a Client; it starts nothing until Start.
func NewClient(cfg ClientConfig) *Client {
	if !cfg.Addr.IsValid() {
		cfg.Addr = ClientTunnelAddr
	}
	if !cfg.ServerAddr.IsValid() {
		cfg.ServerAddr = ServerTunnelAddr
	}
	if cfg.MTU == 0 {
		cfg.MTU = DefaultMTU
	}
	if cfg.Keepalive == 0 {
		cfg.Keepalive = 25 * time.Second
	}
	return &Client{cfg: cfg}
}

// PublicKey is the client's public key (valid after Start, or at once when
// a private key was configured).
func (c *Client) PublicKey() Key { return c.cfg.PrivateKey.Public() }

// Start brings the device up. The first handshake follows at once.
func (c *Client) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.peer != nil {
		return errors.New("harness: client already started")
	}
	if c.cfg.ServerPublicKey == (Key{}) || !c.cfg.Endpoint.IsValid() {
		return errors.New("harness: client needs the server's public key and an endpoint")
	}
	if c.cfg.PrivateKey == (Key{}) {
		k, err := GenerateKey()
		if err != nil {
			return err
		}
		c.cfg.PrivateKey = k
	}
	p, err := c.start()
	if err != nil {
		return err
	}
	c.peer = p
	return nil
}

func (c *Client) start() (*peer, error) {
	all := "0.0.0.0/0"
	if c.cfg.ServerAddr.Is6() {
		all = "::/0"
	}
	return startPeer(peerConfig{
		priv:   c.cfg.PrivateKey,
		listen: c.cfg.Listen,
		addr:   c.cfg.Addr,
		mtu:    c.cfg.MTU,
		bufs:   c.cfg.Buffers,
		hosts:  labHosts(c.cfg.ServerAddr),
		peerCfg: fmt.Sprintf("public_key=%s\nendpoint=%s\nallowed_ip=%s\npersistent_keepalive_interval=%d\n",
			c.cfg.ServerPublicKey.hex(), c.cfg.Endpoint, all, keepaliveSeconds(c.cfg.Keepalive)),
		log: c.cfg.Log,
	})
}

const restartPause = 20 * time.Millisecond

// ErrClientDown is returned by Dial while the client peer is closed.
var ErrClientDown = errors.New("harness: client peer is down")

// DialContext connects to address inside the tunnel; network is tcp or udp,
// the host an IP address or TLSHost/SinkHost; or with network ping4 or
// ping6 it opens an ICMP echo socket to a host (address without a port):
// each Write sends one echo request, each Read returns one reply. A Client
// is a middleware.Dialer, for every check in package middleware.
func (c *Client) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c.mu.RLock()
	p := c.peer
	c.mu.RUnlock()
	if p == nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: ErrClientDown}
	}
	// A restart during the dial closes p's stack, which fails the dial as
	// a real interface going away would.
	return p.tun.DialContext(ctx, network, address)
}

// ReadCounters returns the counters of the client's tunnel interface, as a
// kernel counts a wg0 or tun0: the packets and bytes that went into the
// tunnel (tx) and came out of it (rx); WireGuard's handshakes and
// keepalives are not among them. A Client is a middleware.CounterSource,
// for proof of life. Each device counts from zero, as an interface made
// anew by a VPN restart does, and a client that is down has no counters.
func (c *Client) ReadCounters() (middleware.Counters, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.peer == nil {
		return middleware.Counters{}, ErrClientDown
	}
	return c.peer.tun.counters(), nil
}

// Restart takes the client device down and brings a new one up with the
// same keys, as a heal or a VPN restart does: every connection through the
// old device is aborted, and new ones work once the new handshake
// completes. A client that is down is brought up.
//
// ctx can only stop a restart that has not begun: once the old device is
// closed, the new one is brought up whatever happens to ctx, so that a
// caller who gives up cannot leave the tunnel down. Concurrent restarts run
// one after the other.
func (c *Client) Restart(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.downLocked()
	return c.upLocked(context.WithoutCancel(ctx))
}

// Down takes the client device down, as a stopped VPN container does: flows
// through it break, and Dial fails with ErrClientDown until Up.
func (c *Client) Down() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.peer == nil {
		return ErrClientDown
	}
	c.downLocked()
	return nil
}

func (c *Client) downLocked() {
	if c.peer == nil {
		return
	}
	c.peer.close()
	c.peer = nil
	c.downAt = time.Now()
}

// Up brings a new client device up after Down; the first handshake follows
// at once.
func (c *Client) Up(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.peer != nil {
		return errors.New("harness: client is up already")
	}
	return c.upLocked(ctx)
}

func (c *Client) upLocked(ctx context.Context) error {
	// WireGuard whitens handshake timestamps to 2^24 ns (~17 ms): a new
	// device's first initiation within that of the old one's last is
	// rejected by the server as a replay, and retried only after 5 s. A real
	// restart is never that fast, so pausing costs no realism.
	if wait := restartPause - time.Since(c.downAt); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	p, err := c.start()
	if err != nil {
		return err
	}
	c.peer = p
	return nil
}

// UDPAddr is the client's current WireGuard UDP address.
func (c *Client) UDPAddr() netip.AddrPort {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.peer == nil {
		return netip.AddrPort{}
	}
	return c.peer.udpAddr()
}

// Close takes the device down and waits for its goroutines.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.peer != nil {
		c.peer.close()
		c.peer = nil
	}
	return nil
}

// keepaliveSeconds is d in WireGuard's whole seconds, rounded up: a
// keepalive asked for must not turn into none (0).
func keepaliveSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Second - 1) / time.Second)
}
