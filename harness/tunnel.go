package harness

import (
	"context"
	"net"
	"net/netip"

	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// A Tunnel is one kind of tunnel the lab runs over its shaped [Link], as a
// scenario uses it: a client side that starts, stops and restarts as a VPN
// container's does, which checks, probes and loads go through, and a
// server side with the lab's targets. [Lab] is the user-space WireGuard
// kind (both peers on gVisor netstacks, no root); a kernel kind (WireGuard
// on a kernel TUN device, OpenVPN) is the same interface on devices in
// network namespaces of its own.
//
// The methods are those of Lab, documented there; a Tunnel is a
// check.Dialer (its client side's) and a middleware.CounterSource (its
// client interface's counters).
type Tunnel interface {
	// Start starts both sides and the link between them; Close stops them
	// and waits for all they started.
	Start(ctx context.Context) error
	Close() error

	// The client side: restarted as a heal or a container restart does,
	// in one step or two, and what goes through it.
	Restart(ctx context.Context) error
	Down() error
	Up(ctx context.Context) error
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
	ReadCounters() (middleware.Counters, error)
	ReadDelivery() (middleware.Delivery, error)
	LightProbe() middleware.LightProbe
	TLSCheck() check.TLS
	SmallCheck() check.Checker

	// The server side: the sink the load sends to, what it received, and
	// a one-way stream it sends to the client.
	SinkAddr() netip.AddrPort
	SinkStats() sink.Stats
	Stream(ctx context.Context, rate Rate) error
	// Drop makes the server side drop the kinds of packet given without an
	// answer (see Server.Drop).
	Drop(kinds ...string) error

	// Link is the shaped link the two sides' transport crosses.
	Link() *Link
}

var (
	_ Tunnel                    = (*Lab)(nil)
	_ check.Dialer              = Tunnel(nil)
	_ middleware.CounterSource  = Tunnel(nil)
	_ middleware.DeliverySource = Tunnel(nil)
)

// ReadDelivery reads the client peer's connections' delivery (see
// Client.ReadDelivery).
func (l *Lab) ReadDelivery() (middleware.Delivery, error) { return l.client.ReadDelivery() }

// ReadCounters reads the client peer's counters (see Client.ReadCounters).
func (l *Lab) ReadCounters() (middleware.Counters, error) { return l.client.ReadCounters() }

// SinkStats is what the server peer's sink received (see Server.SinkStats).
func (l *Lab) SinkStats() sink.Stats { return l.server.SinkStats() }

// Drop makes the server peer drop packets of those kinds (see
// Server.Drop).
func (l *Lab) Drop(kinds ...string) error { return l.server.Drop(kinds...) }

// Stream sends a one-way UDP stream from the server peer to the client
// (see Server.Stream).
func (l *Lab) Stream(ctx context.Context, rate Rate) error { return l.server.Stream(ctx, rate) }
