package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/sockdiag"
)

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
	// OnDown, when set, is called each time Restart or Down has closed a
	// device, with the client locked: every connection through it is
	// gone. A Lab ends the server's side of them (see Lab.Restart).
	OnDown func()
	// TUN, when set, runs the client on a kernel TUN device of that name
	// instead of a netstack, as a VPN client container does (Linux; it
	// needs CAP_NET_ADMIN and /dev/net/tun). The device gets Addr in the
	// tunnel's network (its /24, or /120 for IPv6), so the kernel routes
	// that network through it for every program in the network namespace;
	// each start makes a new device. Dial then leaves by that device only
	// and resolves no lab names.
	TUN string
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
	cfg.Addr = cmp.Or(cfg.Addr, ClientTunnelAddr)
	cfg.ServerAddr = cmp.Or(cfg.ServerAddr, ServerTunnelAddr)
	cfg.MTU = cmp.Or(cfg.MTU, DefaultMTU)
	cfg.Keepalive = cmp.Or(cfg.Keepalive, 25*time.Second)
	return &Client{cfg: cfg}
}

// PublicKey is the client's public key (valid after Start, or at once when
// a private key was configured).
func (c *Client) PublicKey() Key { return c.cfg.PrivateKey.Public() }

// Start brings the device up. The first handshake follows at once. Once
// ctx is done Start brings nothing up and returns ctx's error; a device it
// brought up runs until Close.
func (c *Client) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.peer != nil {
		return errors.New("harness: client already started")
	}
	if c.cfg.ServerPublicKey == (Key{}) || !c.cfg.Endpoint.IsValid() {
		return errors.New("harness: client needs the server's public key and an endpoint")
	}
	if err := ctx.Err(); err != nil {
		return err
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
		log:       c.cfg.Log,
		kernel:    c.cfg.TUN,
		kernelNet: tunnelNet(c.cfg.Addr),
		trackAcks: true,
	})
}

// ErrClientDown is returned by Dial while the client peer is closed.
var ErrClientDown = errors.New("harness: client peer is down")

// DialContext connects to address inside the tunnel; network is tcp or udp,
// the host an IP address or TLSHost/SinkHost; or with network ping4 or
// ping6 it opens an ICMP echo socket to a host (address without a port):
// each Write sends one echo request, each Read returns one reply. A Client
// is a check.Dialer, for every check in package middleware/check.
func (c *Client) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c.mu.RLock()
	p := c.peer
	c.mu.RUnlock()
	if p == nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: ErrClientDown}
	}
	if p.tun == nil {
		// Bound to the device: a dial must not leave the tunnel another
		// way once the device has gone.
		return check.BoundDialer(p.kernel).DialContext(ctx, network, address)
	}
	// A restart during the dial closes p's stack, which fails the dial as
	// a real interface going away would.
	return p.tun.DialContext(ctx, network, address)
}

// tunnelNet is addr in the tunnel's network: the /24 of an IPv4 address,
// the /120 of an IPv6 one.
func tunnelNet(addr netip.Addr) netip.Prefix {
	return netip.PrefixFrom(addr, addr.BitLen()-8)
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
	if c.peer.tun == nil {
		return middleware.InterfaceCounters(c.peer.kernel).ReadCounters()
	}
	return c.peer.tun.counters(), nil
}

// ReadDelivery reads, for each TCP connection through the client's tunnel,
// how far the far end acknowledged what it sent: from the segments that
// reached the client's netstack, or on a kernel device from the kernel's
// socket table (package middleware/sockdiag). A Client is a
// middleware.DeliverySource, for proof of life; a client that is down has
// no connections.
func (c *Client) ReadDelivery() (middleware.Delivery, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.peer == nil {
		return nil, ErrClientDown
	}
	if c.peer.tun == nil {
		return sockdiag.Delivery{Interface: c.peer.kernel}.ReadDelivery()
	}
	return c.peer.tun.acks.delivery(time.Now()), nil
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
