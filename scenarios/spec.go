package scenarios

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

// Duration is a time.Duration written as "10s" or "1m30s" in specs.
type Duration struct{ time.Duration }

// MarshalJSON writes d as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration such as \"10s\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration such as \"10s\", got %q", s)
	}
	d.Duration = v
	return nil
}

// D is shorthand for a Duration in Go code.
func D(d time.Duration) Duration { return Duration{d} }

// Spec describes one scenario: a link over time, a load, and the health
// configurations to compare on it. Every configuration runs on its own lab
// with the same link and load, side by side.
type Spec struct {
	Name string `json:"name"`
	// Seed makes the run repeatable: the link's loss, the probers' initial
	// jitter.
	Seed uint64 `json:"seed"`
	// Duration is the whole run, ramp and outages included.
	Duration Duration `json:"duration"`
	// Tunnel is the kind of tunnel every configuration's lab runs; the
	// zero value is WireGuard in user space.
	Tunnel    TunnelSpec    `json:"tunnel,omitzero"`
	Link      LinkSpec      `json:"link"`
	Load      LoadSpec      `json:"load"`
	Container ContainerSpec `json:"container"`
	Configs   []ConfigSpec  `json:"configs"`
}

// The kinds of tunnel a spec's labs run (TunnelSpec.Kind).
const (
	TunnelWireGuard = "wireguard"
	TunnelOpenVPN   = "openvpn"
)

// TunnelSpec is the kind of tunnel a scenario's labs run, each over the
// same shaped link.
type TunnelSpec struct {
	// Kind is TunnelWireGuard (the default: wireguard-go on gVisor
	// netstacks, no root) or TunnelOpenVPN (the real openvpn on kernel
	// TUN devices in namespaces of the lab's own: root, /dev/net/tun and
	// the openvpn program; see harness.OpenVPN).
	Kind string `json:"kind,omitempty"`
	// Transport is OpenVPN's: harness.TransportUDP (the default) or
	// harness.TransportTCP.
	Transport string `json:"transport,omitempty"`
}

// String names the tunnel as reports print it: "wireguard",
// "openvpn/udp", "openvpn/tcp".
func (t TunnelSpec) String() string {
	if t.Kind != TunnelOpenVPN {
		return TunnelWireGuard
	}
	if t.Transport == "" {
		return TunnelOpenVPN + "/" + harness.TransportUDP
	}
	return TunnelOpenVPN + "/" + t.Transport
}

// Available reports what this machine lacks to run the tunnel: nil, or
// an error that names it (see harness.OpenVPNAvailable).
func (t TunnelSpec) Available() error {
	if t.Kind == TunnelOpenVPN {
		return harness.OpenVPNAvailable("")
	}
	return nil
}

// LinkSpec is the shaped link at the start and its changes over time.
type LinkSpec struct {
	// Rate is per direction: "20mbit", "5MB/s"; zero (or "unlimited")
	// only delays packets.
	Rate  harness.Rate       `json:"rate"`
	Delay Duration           `json:"delay"` // one way
	Queue harness.QueueLimit `json:"queue"` // "256p", "256KB"; zero: harness.DefaultQueueLimit
	Loss  float64            `json:"loss"`
	// MTU is the largest IP packet the link carries, in bytes, its IPv4
	// and UDP headers counted (harness.Settings.MTU): larger ones are
	// dropped silently. Zero: no limit.
	MTU int `json:"mtu,omitempty"`
	// Changes alter the link at given times after the start.
	Changes []LinkChange `json:"changes,omitempty"`
	// Outages are windows in which the link drops everything, in both
	// directions or, with Direction, in one.
	Outages []Window `json:"outages,omitempty"`
	// Drop lists windows in which the far side drops one kind of packet
	// without an answer while the link works: a probe target that goes
	// quiet (a server that filters ICMP, a provider that blocks the
	// resolver). The link counts as working meanwhile: a restart then is a
	// false one.
	Drop []DropWindow `json:"drop,omitempty"`
	// ServerKeepalive, when set, makes the far side (the server peer)
	// send WireGuard keepalives on its own at this interval, whether or
	// not it hears the client, as a peer with PersistentKeepalive does.
	ServerKeepalive Duration `json:"server_keepalive,omitempty"`
}

// DropWindow is a window in which the far side drops every packet of Kind
// (harness.DropICMP "icmp", DropDNS "dns", DropTCP "tcp") that reaches it,
// from Start for Duration, or to the end of the run without one.
type DropWindow struct {
	Kind     string   `json:"kind"`
	Start    Duration `json:"start"`
	Duration Duration `json:"duration,omitempty"`
}

// holds reports whether w drops at time at.
func (w DropWindow) holds(at time.Duration) bool {
	return at >= w.Start.Duration && (w.Duration.Duration == 0 || at < w.Start.Duration+w.Duration.Duration)
}

// dropsAt returns the kinds the far side drops at time at.
func (l LinkSpec) dropsAt(at time.Duration) []string {
	var kinds []string
	for _, w := range l.Drop {
		if w.holds(at) && !slices.Contains(kinds, w.Kind) {
			kinds = append(kinds, w.Kind)
		}
	}
	return kinds
}

// LinkChange sets the fields it names at At; nil fields stay as they were.
// A change of MTU leaves the link working, as far as the report counts;
// an MTU black hole to detect is an outage with an MTU (Window.MTU).
type LinkChange struct {
	At    Duration            `json:"at"`
	Rate  *harness.Rate       `json:"rate,omitempty"`
	Delay *Duration           `json:"delay,omitempty"`
	Queue *harness.QueueLimit `json:"queue,omitempty"`
	Loss  *float64            `json:"loss,omitempty"`
	MTU   *int                `json:"mtu,omitempty"`
}

// Window is a span of the run: an outage.
type Window struct {
	Start    Duration `json:"start"`
	Duration Duration `json:"duration"`
	// Direction is what the outage drops: both directions (the zero
	// value), or one.
	Direction OutageDirection `json:"direction,omitempty"`
	// Blip marks a short outage the tunnel survives by itself (about
	// 10 s): nothing should act on it. The link still counts as working
	// through it; restarts and heals from its start until BlipGrace
	// after its end are counted apart, as blip actions.
	Blip bool `json:"blip,omitempty"`
	// MTU, when set, makes the outage an MTU black hole: rather than
	// dropping everything, the link's MTU is this (if lower than it
	// would be) from the start to the end, both ways, so that small
	// packets cross (light probes, ACKs, WireGuard's handshakes and
	// keepalives) and the tunnel's full-size ones do not. It must be
	// below MTUBlackHole. It counts as an outage to detect like any other:
	// the tunnel carries none of its users' full-size segments.
	MTU int `json:"mtu,omitempty"`
}

// MTUBlackHole is the least link MTU that carries every packet of a
// scenario's tunnel (harness.DefaultMTU and WireGuard's and the link's
// headers: 1480 bytes); an outage's MTU must be below it.
const MTUBlackHole = harness.DefaultMTU + harness.WireGuardOverhead + harness.LinkHeaders

// BlipGrace is how long after a blip ends a restart or heal is still put
// down to it: a kubelet's three failed probes 10 s apart can act that
// late.
const BlipGrace = 30 * time.Second

// apply sets the outage's direction on set (down or not). An MTU black
// hole sets nothing here: the link's MTU at any time is LinkSpec.mtuAt's.
func (w Window) apply(set *harness.Settings, down bool) {
	switch {
	case w.MTU > 0:
		return
	case w.Direction == OutageUp:
		set.UplinkDown = down
	case w.Direction == OutageDown:
		set.DownlinkDown = down
	default:
		set.Down = down
	}
}

// mtuAt is the link's MTU at offset at: what the link and its changes say
// (the last change at or before at, in the order they are applied),
// lowered by the MTU black holes holding then.
func (l LinkSpec) mtuAt(at time.Duration) int {
	mtu, latest := l.MTU, time.Duration(-1)
	for _, c := range l.Changes {
		if c.MTU != nil && c.At.Duration <= at && c.At.Duration >= latest {
			mtu, latest = *c.MTU, c.At.Duration
		}
	}
	for _, w := range l.Outages {
		if w.MTU > 0 && w.Start.Duration <= at && at < w.End() && (mtu == 0 || w.MTU < mtu) {
			mtu = w.MTU
		}
	}
	return mtu
}

// workingEnd is when the link stops working: the first outage's start
// (blips do not count), or the end of the run.
func (s Spec) workingEnd() time.Duration {
	end := s.Duration.Duration
	for _, w := range s.Link.Outages {
		if !w.Blip {
			end = min(end, w.Start.Duration)
		}
	}
	return end
}

// cutAt returns s as it ran when stopped after d: d long, without the
// outages that had not begun by then, the one under way ending at d. A run
// cut short is judged on it, so that an outage it never reached is not
// called missed.
func (s Spec) cutAt(d time.Duration) Spec {
	if d >= s.Duration.Duration {
		return s
	}
	s.Duration = D(d)
	var outages []Window
	for _, w := range s.Link.Outages {
		if w.Start.Duration >= d {
			continue
		}
		if w.End() > d {
			w.Duration = D(d - w.Start.Duration)
		}
		outages = append(outages, w)
	}
	s.Link.Outages = outages
	return s
}

// outagesToDetect returns s's outages, blips aside.
func (s Spec) outagesToDetect() []Window {
	var out []Window
	for _, w := range s.Link.Outages {
		if !w.Blip {
			out = append(out, w)
		}
	}
	return out
}

// End returns when w ends.
func (w Window) End() time.Duration { return w.Start.Duration + w.Duration.Duration }

// LoadSpec is the traffic through each lab's tunnel.
type LoadSpec struct {
	Conns int `json:"conns"`
	// Share, when positive, paces the load at that share of the link's
	// rate; zero is greedy.
	Share     float64           `json:"share,omitempty"`
	Ramp      Duration          `json:"ramp"`
	Direction loadgen.Direction `json:"direction,omitempty"` // up (the zero value), down, both
	// Stream, when positive, is the rate of a one-way UDP stream the far
	// side sends into the tunnel all run long ("1mbit"), answered by
	// nothing: a video stream, a QUIC server sending until its idle
	// timeout.
	Stream harness.Rate `json:"stream,omitempty"`
}

// ContainerSpec is how a restarted container comes back.
type ContainerSpec struct {
	// StartDelay is how long a container takes from the kill to serving
	// again (tunnel up, health server listening). Our containers stop at
	// once on SIGTERM, so the kill's grace period never comes into play.
	StartDelay Duration `json:"start_delay"`
}

// ConfigSpec is one health configuration under test.
type ConfigSpec struct {
	Name   string     `json:"name"`
	Health HealthSpec `json:"health"`
	Prober ProberSpec `json:"prober"`
	// Expect, when set, bounds what the configuration may measure: a run
	// that breaks a bound fails (see Report.Breaches).
	Expect *Expect `json:"expect,omitempty"`
}

// HealthSpec configures the health server (middleware.Config).
type HealthSpec struct {
	// Preset "upstream" is the upstream VPN client's current check
	// (preset.Upstream through the lab's tunnel: an ICMP echo of the
	// server peer each minute, the TLS check every 5 minutes); its timings
	// are fixed, so it takes no period, timeouts, threshold, back-off or
	// evidence, and Mode is loop. Heal turns its restarts on.
	Preset           string            `json:"preset,omitempty"`
	Mode             middleware.Mode   `json:"mode"` // loop (the zero value), probe, auto
	Period           Duration          `json:"period,omitempty"`
	Timeouts         middleware.Ladder `json:"timeouts,omitempty"`
	FailureThreshold int               `json:"failure_threshold,omitempty"`
	// Heal makes the loop restart the tunnel (the lab's client peer) while
	// unhealthy, with the reference back-off unless HealBackoff is set.
	Heal        bool         `json:"heal,omitempty"`
	HealBackoff *BackoffSpec `json:"heal_backoff,omitempty"`
	// Evidence lets the lab's light probe (an ICMP echo of the server
	// peer) and the client peer's counters decide checks first
	// (middleware.Evidence); nil: every check is active.
	Evidence *EvidenceSpec `json:"evidence,omitempty"`
}

// EvidenceSpec is middleware.Evidence in a spec; its light probe and
// counters are the lab's client peer's. Zero fields take the middleware's
// defaults.
type EvidenceSpec struct {
	// Window is the tolerance: how long the tunnel may go without an
	// answer before a check fails.
	Window   Duration `json:"window,omitempty"`
	Interval Duration `json:"interval,omitempty"`
	// MaxLoss, when set, fails checks on the probes' loss above it.
	MaxLoss float64 `json:"max_loss,omitempty"`
	// NoDelivery leaves out the delivery proof, which the lab's client
	// gives otherwise: data of its connections the far end acknowledged
	// passes checks (middleware.Evidence.Delivery), as serve --delivery
	// does by default.
	NoDelivery bool `json:"no_delivery,omitempty"`
}

// BackoffSpec is middleware.HealBackoff in a spec.
type BackoffSpec struct {
	Initial Duration `json:"initial"`
	Step    Duration `json:"step"`
}

// ProberSpec configures the orchestrator's prober.
type ProberSpec struct {
	Kind string `json:"kind"` // kubelet, docker
	// Handler is the kubelet probe's handler: httpGet (the default) GETs
	// Endpoint, tcpSocket connects to the health server's port, exec runs
	// Exec, grpc asks the health server's gRPC health service for Service.
	Handler string `json:"handler,omitempty"`
	// Service is the service a grpc probe asks for; "" (the default) is
	// the tunnel's overall state, the only one the health server knows.
	Service string `json:"service,omitempty"`
	// Endpoint is the health server path an httpGet probe and Docker
	// probe: "/", "/check/", "/?wait=8s", "/check/?timeout=9s".
	Endpoint string `json:"endpoint,omitempty"`
	// Exec is the exec handler's command and arguments, run on this
	// machine; "{health}" in them stands for the health server's
	// host:port.
	Exec []string `json:"exec,omitempty"`
	// Autoheal makes a Docker prober restart the container when it turns
	// unhealthy, as an autoheal container does; Docker alone only marks
	// it.
	Autoheal         bool     `json:"autoheal,omitempty"`
	Period           Duration `json:"period,omitempty"`
	Timeout          Duration `json:"timeout,omitempty"`
	InitialDelay     Duration `json:"initial_delay,omitempty"`
	FailureThreshold int      `json:"failure_threshold,omitempty"`
	SuccessThreshold int      `json:"success_threshold,omitempty"`
	// StartPeriod is Docker's --start-period.
	StartPeriod Duration `json:"start_period,omitempty"`
	// KubeletVersion is the Kubernetes release whose kubelet a kubelet
	// prober imitates where kubelets differ, "1.20" to "1.37" (the
	// default); see prober.KubeletVersion.
	KubeletVersion prober.KubeletVersion `json:"kubelet_version,omitempty"`
}
