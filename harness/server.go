package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
)

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
	cfg  ServerConfig
	ca   *CA
	peer *peer
	svc  services
	// staleGrace is clientGone's grace: staleGrace, or none in tests.
	staleGrace time.Duration
}

// NewServer returns a Server; it starts nothing until Start.
func NewServer(cfg ServerConfig) *Server {
	cfg.Addr = cmp.Or(cfg.Addr, ServerTunnelAddr)
	cfg.ClientAddr = cmp.Or(cfg.ClientAddr, ClientTunnelAddr)
	cfg.MTU = cmp.Or(cfg.MTU, DefaultMTU)
	return &Server{cfg: cfg, staleGrace: staleGrace}
}

// Start generates the CA (and the key if none was given), brings the
// device up and starts the services. ctx bounds the start only: once ctx
// is done, Start brings nothing more up and returns ctx's error; the
// services it started run until Close. On error everything started is
// closed again.
func (s *Server) Start(ctx context.Context) (err error) {
	if s.peer != nil {
		return errors.New("harness: server already started")
	}
	if s.cfg.ClientPublicKey == (Key{}) {
		return errors.New("harness: server needs the client's public key")
	}
	if err := ctx.Err(); err != nil {
		return err
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
	// Generating the CA takes a while; a caller who gave up meanwhile
	// gets no device.
	if err := ctx.Err(); err != nil {
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
	if err := s.svc.start(s.peer.tun, s.cfg.Addr, cert); err != nil {
		s.Close()
		return err
	}
	return nil
}

// Close stops the services and the device and waits for their goroutines.
func (s *Server) Close() error {
	if s.peer == nil {
		return nil
	}
	err := s.svc.close()
	s.peer.close()
	s.peer = nil
	return err
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

// Drop makes the server's side drop, without an answer, every packet of
// the kinds given that reaches it through the tunnel (DropICMP, DropDNS,
// DropTCP), until the next Drop; none drops nothing. It is the far side
// that starts filtering what a light probe sends (a new server that drops
// ICMP, a provider that blocks third-party DNS) while the tunnel works;
// the client's restarts leave it as it is.
func (s *Server) Drop(kinds ...string) error {
	if s.peer == nil || s.peer.tun == nil {
		return errors.New("harness: drop: the server peer has no netstack (not started, or on a kernel device)")
	}
	return s.peer.tun.drop.set(kinds)
}

// staleGrace is how long the sinks still read the connections of a client
// device that has gone before ending them: what had arrived is counted.
const staleGrace = 5 * time.Second

// clientGone ends, s.staleGrace from now, the sinks' connections from the
// client devices closed before now. Nothing would end them otherwise: an
// upload's sink never sends, so never learns that its client is gone (a
// real server would, through TCP keepalive, minutes later), and a restarted
// client peer would leave thousands of connections open on the server, and
// their memory, for the rest of a run. They carry nothing more: a restart
// aborted the client's side.
func (s *Server) clientGone() {
	now := time.Now()
	s.svc.sink.Expire(now, s.staleGrace)
	s.svc.echo.Expire(now, s.staleGrace)
}

// SinkStats are the counters of the discarding sink.
func (s *Server) SinkStats() sink.Stats { return s.svc.sink.Stats() }
