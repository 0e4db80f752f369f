package harness

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"time"

	"golang.zx2c4.com/wireguard/device"
	"golang.zx2c4.com/wireguard/tun"
)

// peer is one WireGuard device on its own netstack, or on a kernel TUN
// device.
type peer struct {
	dev    *device.Device
	tun    *netTUN // nil on a kernel device
	kernel string  // the kernel device's name, if any
	bind   *udpBind
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
	// kernel, when set, names a kernel TUN device to run on instead of a
	// netstack, with kernelNet as its address and the tunnel's network.
	kernel    string
	kernelNet netip.Prefix
	// trackAcks follows the netstack's connections' acknowledgements, for
	// the delivery proof of a client (see ackTracker).
	trackAcks bool
}

func startPeer(c peerConfig) (*peer, error) {
	host, port, err := splitListen(c.listen)
	if err != nil {
		return nil, err
	}
	var td tun.Device
	var nt *netTUN
	if c.kernel != "" {
		td, err = createKernelTUN(c.kernel, c.mtu)
	} else {
		nt, err = newNetTUN(c.addr, c.mtu, c.bufs, c.hosts)
		td = nt
		if err == nil && c.trackAcks {
			nt.acks = newAckTracker()
		}
	}
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
	if nt != nil {
		nt.sent, nt.received = newHeldPackets(), newHeldPackets()
		b.sent, b.received = nt.sent, nt.received
	}
	dev := device.NewDevice(td, b, logger) // takes ownership of td
	uapi := fmt.Sprintf("private_key=%s\nlisten_port=%d\nreplace_peers=true\n%s", c.priv.hex(), port, c.peerCfg)
	if err := dev.IpcSet(uapi); err != nil {
		dev.Close()
		return nil, fmt.Errorf("harness: configure WireGuard: %w", err)
	}
	// A kernel device gets its address and comes up first: wireguard-go
	// follows the device's link state, and bringing it up after Up would
	// take the device down and up again, losing the first handshake.
	if c.kernel != "" {
		if err := configureKernelTUN(c.kernel, c.kernelNet); err != nil {
			dev.Close()
			return nil, err
		}
	}
	if err := dev.Up(); err != nil {
		dev.Close()
		return nil, fmt.Errorf("harness: WireGuard up: %w", err)
	}
	return &peer{dev: dev, tun: nt, kernel: c.kernel, bind: b}, nil
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

// keepaliveSeconds is d in WireGuard's whole seconds, rounded up: a
// keepalive asked for must not turn into none (0).
func keepaliveSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Second - 1) / time.Second)
}
