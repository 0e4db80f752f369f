package middleware_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/netnstest"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// ChooseLightProbe follows its order where ICMP is refused: udp-dns next;
// a pinned icmp probe is refused with ErrNoLightProbe.
func TestChooseLightProbeFallsBack(t *testing.T) {
	ns := netnstest.New(t, "lpfall")
	choose := func(rng, target string) (middleware.LightProbe, []error, error) {
		t.Helper()
		var err error
		netnstest.Run(t, ns, func() { err = os.WriteFile("/proc/sys/net/ipv4/ping_group_range", []byte(rng), 0o644) })
		if err != nil {
			t.Fatal(err)
		}
		var p middleware.LightProbe
		var skipped []error
		netnstest.Run(t, ns, func() { p, skipped, err = middleware.ChooseLightProbe(context.Background(), target, nil) })
		return p, skipped, err
	}

	if p, skipped, err := choose("0 2147483647", "192.0.2.1"); err != nil || p.Kind != "icmp" || len(skipped) != 0 {
		t.Errorf("ICMP permitted: %+v, skipped %v, %v; want icmp", p, skipped, err)
	}
	p, skipped, err := choose("1 0", "192.0.2.1")
	if err != nil || p.Kind != "udp-dns" || p.Target != "192.0.2.1:53" {
		t.Errorf("ICMP refused: %+v, %v; want udp-dns to 192.0.2.1:53", p, err)
	}
	if len(skipped) != 1 || !errors.Is(skipped[0], check.ErrICMPNotPermitted) {
		t.Errorf("skipped %v, want icmp, not permitted", skipped)
	}
	if _, _, err := choose("1 0", "icmp://192.0.2.1"); !errors.Is(err, middleware.ErrNoLightProbe) || !errors.Is(err, check.ErrICMPNotPermitted) {
		t.Errorf("pinned icmp where refused: %v, want ErrNoLightProbe naming why", err)
	}
	if p, _, err := choose("1 0", "tcp://192.0.2.1:8443"); err != nil || p.Kind != "tcp" || p.Target != "192.0.2.1:8443" {
		t.Errorf("pinned tcp: %+v, %v", p, err)
	}
	if _, _, err := choose("1 0", "sctp://192.0.2.1"); err == nil || !strings.Contains(err.Error(), `unknown kind "sctp"`) {
		t.Errorf("unknown kind: %v", err)
	}
}

// BoundDialer's sockets leave by their interface or not at all: a light
// probe bound to the tunnel's interface is answered through it, and never
// through another route to the same host.
func TestBoundDialerKeepsProbesOnTheirInterface(t *testing.T) {
	near, far := netnstest.New(t, "bdnear"), netnstest.New(t, "bdfar")
	netnstest.Veth(t, near, far, "vtun", "vfar", "10.79.0.1/24", "10.79.0.2/24")
	var err error
	netnstest.Run(t, near, func() { err = os.WriteFile("/proc/sys/net/ipv4/ping_group_range", []byte("0 2147483647"), 0o644) })
	if err != nil {
		t.Fatal(err)
	}
	probe := func(iface string, p func(check.Dialer) middleware.LightProbe) error {
		t.Helper()
		var err error
		netnstest.Run(t, near, func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			err = p(check.BoundDialer(iface)).Check.Check(ctx)
		})
		return err
	}
	icmp := func(d check.Dialer) middleware.LightProbe { return middleware.ICMPProbe("10.79.0.2", d) }
	if err := probe("vtun", icmp); err != nil {
		t.Errorf("icmp bound to the interface with the route: %v", err)
	}
	if err := probe("lo", icmp); err == nil {
		t.Error("icmp bound to lo was answered: the socket left by another interface")
	}
	if err := probe("nosuch", icmp); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("icmp bound to a missing interface: %v, want an error naming it", err)
	}
	// TCP through the same binding, to a listener on the far side.
	var ln net.Listener
	netnstest.Run(t, far, func() { ln, err = net.Listen("tcp", "10.79.0.2:8443") })
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	tcp := func(d check.Dialer) middleware.LightProbe { return middleware.TCPProbe("10.79.0.2:8443", d) }
	if err := probe("vtun", tcp); err != nil {
		t.Errorf("tcp bound to the interface with the route: %v", err)
	}
	if err := probe("lo", tcp); err == nil {
		t.Error("tcp bound to lo connected")
	}
}

// The kind a bound light probe takes does not depend on whether the tunnel
// is up at start: neither a name that does not resolve yet nor an
// interface that is not there yet moves it off icmp.
func TestChooseBoundLightProbeWhileTheTunnelIsDown(t *testing.T) {
	ns := netnstest.New(t, "lpdown")
	var err error
	netnstest.Run(t, ns, func() { err = os.WriteFile("/proc/sys/net/ipv4/ping_group_range", []byte("0 2147483647"), 0o644) })
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ target, iface string }{
		{"vpn-gateway.invalid", "lo"},
		{"10.64.0.1", "wg-not-yet"},
		{"vpn-gateway.invalid", "wg-not-yet"},
	} {
		var p middleware.LightProbe
		var skipped []error
		netnstest.Run(t, ns, func() {
			p, skipped, err = middleware.ChooseLightProbe(context.Background(), tc.target, check.BoundDialer(tc.iface))
		})
		if err != nil || p.Kind != "icmp" || len(skipped) != 0 {
			t.Errorf("%s on %s: %+v, skipped %v, %v; want icmp", tc.target, tc.iface, p, skipped, err)
		}
	}
}
