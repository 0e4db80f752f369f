package harness

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"time"
)

// Config configures a Lab. The zero value is a working lab on an
// unlimited link with no SOCKS5 ingress.
type Config struct {
	// Link holds the link's initial settings.
	Link Settings
	// Seed seeds the link's random loss.
	Seed uint64
	// SOCKS5 is the loopback address of the SOCKS5 ingress, e.g.
	// "127.0.0.1:1080" or "127.0.0.1:0"; empty means none.
	SOCKS5 string
	// MTU is the tunnel MTU; zero means DefaultMTU.
	MTU int
	// Buffers are both netstacks' TCP buffers; zero means DefaultBuffers.
	Buffers Buffers
	// ServerKeepalive is the server peer's persistent keepalive (see
	// ServerConfig.Keepalive); zero means none.
	ServerKeepalive time.Duration
	// Log receives WireGuard's errors at debug level; nil discards them.
	Log *slog.Logger
}

// Lab is the whole tunnel lab in one process: the server peer with its TLS
// target and sinks, the shaped link, the client peer and, if configured,
// the SOCKS5 ingress. All traffic between the peers is real, encrypted
// WireGuard over UDP on loopback, through the link.
type Lab struct {
	cfg    Config
	server *Server
	link   *Link
	client *Client
	socks  *SOCKS5
}

// New returns a Lab; it starts nothing until Start.
func New(cfg Config) *Lab { return &Lab{cfg: cfg} }

// Start generates keys and a CA and starts every part. ctx bounds the
// start only: once it is done, no further part is started and Start
// returns ctx's error; a started lab runs until Close. On error the parts
// already started are closed. Close stops a started lab.
func (l *Lab) Start(ctx context.Context) (err error) {
	if l.server != nil {
		return errors.New("harness: lab already started")
	}
	if err := l.cfg.Link.Validate(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	skey, err := GenerateKey()
	if err != nil {
		return err
	}
	ckey, err := GenerateKey()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	l.server = NewServer(ServerConfig{PrivateKey: skey, ClientPublicKey: ckey.Public(), MTU: l.cfg.MTU, Buffers: l.cfg.Buffers,
		Keepalive: l.cfg.ServerKeepalive, Log: l.cfg.Log})
	if err := l.server.Start(ctx); err != nil {
		return err
	}
	l.link = NewLink(LinkConfig{Settings: l.cfg.Link, Seed: l.cfg.Seed, Server: l.server.UDPAddr()})
	if err := l.link.Start(ctx); err != nil {
		return err
	}
	l.client = NewClient(ClientConfig{PrivateKey: ckey, ServerPublicKey: skey.Public(), Endpoint: l.link.Addr(), MTU: l.cfg.MTU, Buffers: l.cfg.Buffers, Log: l.cfg.Log,
		OnDown: l.server.clientGone})
	if err := l.client.Start(ctx); err != nil {
		return err
	}
	if l.cfg.SOCKS5 != "" {
		l.socks, err = ListenSOCKS5(ctx, l.cfg.SOCKS5, l.client.DialContext)
	}
	return err
}

// Close stops every part, ingress first, and waits for their goroutines.
func (l *Lab) Close() error {
	var errs []error
	if l.socks != nil {
		errs = append(errs, l.socks.Close())
	}
	if l.client != nil {
		errs = append(errs, l.client.Close())
	}
	if l.link != nil {
		errs = append(errs, l.link.Close())
	}
	if l.server != nil {
		errs = append(errs, l.server.Close())
	}
	return errors.Join(errs...)
}

// DialContext connects through the tunnel (see Client.DialContext), so a
// Lab is a check.Dialer.
func (l *Lab) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return l.client.DialContext(ctx, network, address)
}

// Restart restarts the client peer (see Client.Restart). The server's
// sinks end the old device's connections staleGrace later (see
// Server.clientGone); Down does the same.
func (l *Lab) Restart(ctx context.Context) error { return l.client.Restart(ctx) }

// Down and Up take the client peer down and bring it up again (see
// Client.Down), for a restart that takes time, such as a container's.
func (l *Lab) Down() error                  { return l.client.Down() }
func (l *Lab) Up(ctx context.Context) error { return l.client.Up(ctx) }

// Link is the shaped link, for settings and counters.
func (l *Lab) Link() *Link { return l.link }

// Server and Client are the two peers.
func (l *Lab) Server() *Server { return l.server }
func (l *Lab) Client() *Client { return l.client }

// CA is the CA of the TLS target: CA().Pool for tls.Config.RootCAs,
// CA().PEM for other processes.
func (l *Lab) CA() *CA { return l.server.CA() }

// TLSAddr, SinkAddr, EchoAddr and DNSAddr are the in-tunnel service
// addresses.
func (l *Lab) TLSAddr() netip.AddrPort  { return l.server.TLSAddr() }
func (l *Lab) SinkAddr() netip.AddrPort { return l.server.SinkAddr() }
func (l *Lab) EchoAddr() netip.AddrPort { return l.server.EchoAddr() }
func (l *Lab) DNSAddr() netip.AddrPort  { return l.server.DNSAddr() }

// SOCKS5Addr is the SOCKS5 ingress address, nil without one.
func (l *Lab) SOCKS5Addr() net.Addr {
	if l.socks == nil {
		return nil
	}
	return l.socks.Addr()
}
