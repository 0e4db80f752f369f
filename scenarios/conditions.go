package scenarios

import (
	"fmt"
	"strings"
	"time"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/loadgen/rate"
)

// MatrixConditions are the built-in matrix of link conditions (`tunnelprobe
// scenario --matrix`): the built-in suites' seven configurations, and
// evidence-15s (evidence tolerating 15 s without an answer, to show what a
// tolerance longer than a blip costs in detection), on fifteen links,
// 1,000 connections each unless idle, the outage shapes spread over them.
// A pass over all of them takes about 50 minutes.
//
//   - default: the default suite's link (20 Mbit/s, 10 ms, 256 packets);
//     a 10 s blip at 50 s, then a black hole of 190 s, long enough for
//     every configuration's schedule to act (the upstream's needs 180 s);
//   - deep-queue: 4,096 packets of queue, about 2.5 s of queueing delay; the
//     uplink drops everything for 60 s (a one-way outage);
//   - slow: 3 Mbit/s with 40 ms of delay; a blip, then a 60 s black hole;
//   - lossy: 1% random loss both ways; the downlink drops everything for
//     60 s;
//   - brownout: the rate a tenth (2 Mbit/s) for 70 s while the load goes
//     on, the link never failing; then a 60 s black hole;
//   - paced: the load paced at 90% of the rate, no greedy overload; a
//     blip, then the uplink down for 60 s;
//   - idle: no load; a black hole of 190 s;
//   - download: the load pulls data from the far side; the uplink drops
//     everything for 60 s while the far side keeps retransmitting into the
//     tunnel;
//   - stream-in: no load, but a 2 Mbit/s one-way UDP stream from the far
//     side into the tunnel all run long; the uplink down for 60 s;
//   - keepalive: no load, the far side sending WireGuard keepalives every
//     5 s on its own; the uplink down for 60 s;
//   - quiet, quiet-idle: the default link, loaded and idle; from 50 s the
//     far side drops ICMP (the light probe's target goes quiet) while the
//     tunnel works; then a 60 s black hole;
//   - mtu: the default link and load; from 110 s the link's MTU is 1280
//     for 60 s, both ways: an MTU black hole, a path whose ICMP
//     "fragmentation needed" is filtered. The light probe's small echoes,
//     TCP's handshakes and ACKs and WireGuard's own packets cross; the
//     load's full-size segments do not, nor does a TLS handshake (Go's
//     ClientHello, with its post-quantum key share, fills a segment).
//   - openvpn-udp, openvpn-tcp: the default link and load through the
//     real openvpn (harness.OpenVPN: kernel TUN devices, root) over UDP
//     and over TCP (every flow inside one TCP connection); a blip, the
//     uplink down for 30 s at 100 s, then a 40 s black hole at 200 s.
//     Where OpenVPN cannot run, --matrix leaves them out and says why.
//
// Download, stream-in and keepalive are the traffic that fooled a rule on
// the tunnel's counters: what arrives without an answer to anything we
// sent. The MTU black hole carries none of the tunnel's users' data, so it
// is an outage to detect, not a working link: the configurations with an
// active check can (their TLS check stalls), evidence cannot (its light
// probe is answered, so it bounds no detection there), nor can the
// upstream's ICMP check (only its TLS check, every 5 minutes, could fail;
// the report counts its miss as too short for its schedule).
//
// Blips are outages the tunnel survives by itself: restarts and heals in
// them (and BlipGrace after) are counted apart, not as false restarts nor as
// detections.
func MatrixConditions() []Spec {
	const conns = 1000
	blip := Window{Start: D(50 * time.Second), Duration: D(10 * time.Second), Blip: true}
	hole := func(at, d time.Duration) Window { return Window{Start: D(at), Duration: D(d)} }
	oneWay := func(at, d time.Duration, dir OutageDirection) Window {
		return Window{Start: D(at), Duration: D(d), Direction: dir}
	}
	condition := func(name string, total time.Duration, outages []Window, change func(*Spec)) Spec {
		s := suite(name, total, 20*time.Second, 0, 0, conns)
		s.Configs = append(s.Configs, tolerantEvidence(20*time.Second))
		s.Link.Outages = outages
		expectEvidence(&s)
		if change != nil {
			change(&s) // after the bounds: a condition may change them
		}
		return s
	}
	return []Spec{
		condition("default", 320*time.Second, []Window{blip, hole(120*time.Second, 190*time.Second)}, nil),
		condition("deep-queue", 170*time.Second, []Window{oneWay(100*time.Second, 60*time.Second, OutageUp)}, func(s *Spec) {
			s.Link.Queue = harness.QueueLimit{Packets: 4096}
		}),
		condition("slow", 180*time.Second, []Window{blip, hole(110*time.Second, 60*time.Second)}, func(s *Spec) {
			s.Link.Rate, s.Link.Delay = 3*rate.Mbit, D(40*time.Millisecond)
		}),
		condition("lossy", 170*time.Second, []Window{oneWay(100*time.Second, 60*time.Second, OutageDown)}, func(s *Spec) {
			s.Link.Loss = 0.01
		}),
		condition("brownout", 180*time.Second, []Window{hole(110*time.Second, 60*time.Second)}, func(s *Spec) {
			s.Link.Changes = []LinkChange{{At: D(30 * time.Second), Rate: new(2 * rate.Mbit)}, {At: D(100 * time.Second), Rate: new(20 * rate.Mbit)}}
		}),
		condition("paced", 180*time.Second, []Window{blip, oneWay(110*time.Second, 60*time.Second, OutageUp)}, func(s *Spec) {
			s.Load.Share = 0.9
		}),
		condition("idle", 260*time.Second, []Window{hole(60*time.Second, 190*time.Second)}, func(s *Spec) {
			s.Load.Conns = 0
		}),
		condition("download", 180*time.Second, []Window{oneWay(110*time.Second, 60*time.Second, OutageUp)}, func(s *Spec) {
			s.Load.Direction = loadgen.Down
		}),
		condition("stream-in", 130*time.Second, []Window{oneWay(60*time.Second, 60*time.Second, OutageUp)}, func(s *Spec) {
			s.Load.Conns, s.Load.Stream = 0, 2*rate.Mbit
		}),
		condition("keepalive", 130*time.Second, []Window{oneWay(60*time.Second, 60*time.Second, OutageUp)}, func(s *Spec) {
			s.Load.Conns, s.Link.ServerKeepalive = 0, D(5*time.Second)
		}),
		condition("mtu", 180*time.Second, []Window{{Start: D(110 * time.Second), Duration: D(60 * time.Second), MTU: 1280}}, func(s *Spec) {
			for i := range s.Configs {
				if e := s.Configs[i].Expect; e != nil {
					e.Detection = nil // its light probe is answered: it cannot detect the hole
				}
			}
		}),
		condition("quiet", 200*time.Second, []Window{hole(130*time.Second, 60*time.Second)}, quietTarget(0)),
		condition("quiet-idle", 200*time.Second, []Window{hole(130*time.Second, 60*time.Second)}, quietTarget(1)),
		condition("openvpn-udp", 250*time.Second, openvpnOutages, openvpn(harness.TransportUDP)),
		condition("openvpn-tcp", 250*time.Second, openvpnOutages, openvpn(harness.TransportTCP)),
	}
}

// openvpnOutages are the OpenVPN conditions' outages, one of each shape:
// a blip (50-60 s), the uplink down for 30 s (100-130 s), then a 40 s
// black hole (200-240 s). The gaps, 40 s and then 70 s, let a
// configuration that restarted in the one before be restarted and probed
// again before the next, through the kubelet's crash back-off (none for
// the first restart, 10 s for the second) and its initial delay (20 s),
// so that a detection measures the configuration, not the schedule.
var openvpnOutages = []Window{
	{Start: D(50 * time.Second), Duration: D(10 * time.Second), Blip: true},
	{Start: D(100 * time.Second), Duration: D(30 * time.Second), Direction: OutageUp},
	{Start: D(200 * time.Second), Duration: D(40 * time.Second)},
}

// openvpn makes a condition run the real openvpn over transport on the
// default link and load. Over TCP the evidence configuration's bounds
// are dropped: what TCP over TCP does to it is measured, not assumed.
func openvpn(transport string) func(*Spec) {
	return func(s *Spec) {
		s.Tunnel = TunnelSpec{Kind: TunnelOpenVPN, Transport: transport}
		if transport == harness.TransportTCP {
			for i := range s.Configs {
				s.Configs[i].Expect = nil
			}
		}
	}
}

// quietTarget makes a condition's far side drop ICMP from 50 s to the end
// while the tunnel works: the light probe's target goes quiet. Loaded, the
// users' delivery proves the tunnel alive: no restart; idle (restarts:
// one), nothing but the probe could, and its silence restarts the tunnel
// once, after which the probe decides nothing until it answers the new
// tunnel and the active check decides. The outage after that is detected
// by the active check, within 30 s: slower than the probe's window, and
// the status says why.
func quietTarget(restarts int) func(*Spec) {
	return func(s *Spec) {
		s.Link.Drop = []DropWindow{{Kind: harness.DropICMP, Start: D(50 * time.Second)}}
		if restarts > 0 {
			s.Load.Conns = 0
		}
		for i := range s.Configs {
			if c := &s.Configs[i]; c.Expect != nil {
				heals := 0
				c.Expect = &Expect{FalseRestarts: &restarts, FalseHeals: &heals, Detection: &Duration{30 * time.Second}}
			}
		}
	}
}

// tolerantEvidence is evidence with a window of 15 s, longer than a blip
// (10 s): in the matrix beside evidence, to show the trade-off between
// restarting in blips and detecting outages.
func tolerantEvidence(ramp time.Duration) ConfigSpec {
	h := evidenceHealth()
	h.Evidence = &EvidenceSpec{Window: D(15 * time.Second)}
	return ConfigSpec{Name: "evidence-15s", Health: h, Prober: evidenceProber(ramp)}
}

// MatrixCondition returns the built-in condition of that name.
func MatrixCondition(name string) (Spec, error) {
	var names []string
	for _, c := range MatrixConditions() {
		if c.Name == name {
			return c, nil
		}
		names = append(names, c.Name)
	}
	return Spec{}, fmt.Errorf("no such condition: want one of %s", strings.Join(names, ", "))
}
