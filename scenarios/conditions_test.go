package scenarios

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/harness"
)

func TestMatrixConditionsAreValid(t *testing.T) {
	var total time.Duration
	names := map[string]bool{}
	for _, s := range MatrixConditions() {
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		names[s.Name] = true
		total += s.Duration.Duration
		if len(s.Configs) != 8 || s.Configs[7].Name != "evidence-15s" {
			t.Errorf("%s: %d configurations", s.Name, len(s.Configs))
		}
	}
	if len(names) != 15 {
		t.Errorf("%d conditions, want 15 with distinct names", len(names))
	}
	if total > 50*time.Minute {
		t.Errorf("a pass takes %v of runs: longer than the 50 minutes MatrixConditions says", total)
	}
}

// The OpenVPN conditions are the default condition's link and load
// through the real openvpn over each transport, with a blip, a one-way
// outage and a black hole; over TCP nothing is bounded in advance.
func TestMatrixOpenVPNConditions(t *testing.T) {
	def, _ := MatrixCondition("default")
	for _, transport := range []string{harness.TransportUDP, harness.TransportTCP} {
		s, err := MatrixCondition("openvpn-" + transport)
		if err != nil {
			t.Fatal(err)
		}
		if s.Tunnel != (TunnelSpec{Kind: TunnelOpenVPN, Transport: transport}) {
			t.Errorf("%s: tunnel %+v", s.Name, s.Tunnel)
		}
		if s.Load != def.Load || s.Link.Rate != def.Link.Rate || s.Link.Queue != def.Link.Queue || s.Load.Conns != 1000 {
			t.Errorf("%s: load %+v on %v, %v; want the default condition's, 1,000 connections", s.Name, s.Load, s.Link.Rate, s.Link.Queue)
		}
		shapes := map[string]bool{}
		for _, w := range s.Link.Outages {
			shapes[fmt.Sprintf("blip=%v direction=%v", w.Blip, w.Direction)] = true
		}
		if len(shapes) != 3 {
			t.Errorf("%s: outages %+v: want a blip, a one-way outage and a black hole", s.Name, s.Link.Outages)
		}
		bounded := slices.ContainsFunc(s.Configs, func(c ConfigSpec) bool { return c.Expect != nil })
		if bounded != (transport == harness.TransportUDP) {
			t.Errorf("%s: bounds on its configurations: %v", s.Name, bounded)
		}
	}
}

// The MTU black hole is loaded as the default condition is, counts as an
// outage (the working link ends where it starts), and drops the tunnel's
// full-size packets while carrying a small probe's.
func TestMatrixMTUBlackHole(t *testing.T) {
	s, err := MatrixCondition("mtu")
	if err != nil {
		t.Fatal(err)
	}
	def, _ := MatrixCondition("default")
	hole := s.Link.Outages[0]
	if len(s.Link.Outages) != 1 || hole.MTU != 1280 || hole.Blip || hole.Direction != OutageBoth || s.workingEnd() != hole.Start.Duration {
		t.Errorf("outages %+v: want one MTU black hole of 1280 bytes, both ways, ending the working link", s.Link.Outages)
	}
	if s.Load != def.Load || s.Link.Rate != def.Link.Rate || s.Link.Queue != def.Link.Queue || s.Link.MTU != 0 {
		t.Errorf("load %+v on %v, %v, MTU %d; want the default condition's", s.Load, s.Link.Rate, s.Link.Queue, s.Link.MTU)
	}
	for at, want := range map[time.Duration]int{hole.Start.Duration - 1: 0, hole.Start.Duration: 1280, hole.End() - 1: 1280, hole.End(): 0} {
		if got := s.Link.mtuAt(at); got != want {
			t.Errorf("MTU at %v: %d, want %d", at, got, want)
		}
	}
	if full, echo := harness.DefaultMTU+harness.WireGuardOverhead+harness.LinkHeaders, 96+harness.WireGuardOverhead+harness.LinkHeaders; full <= hole.MTU || echo > hole.MTU {
		t.Errorf("on the link: full-size packets %d bytes, a light probe's echo %d; want the first dropped and the second carried by %d", full, echo, hole.MTU)
	}
}
