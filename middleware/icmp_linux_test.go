package middleware_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/netnstest"
	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// pingHost runs an ICMPCheck of loopback on the host's ICMP socket.
func pingHost() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return middleware.ICMPCheck{Address: "127.0.0.1"}.Check(ctx)
}

// The host's unprivileged ICMP socket, in namespaces of the test's own
// where the kernel allows it to every group and to none.
func TestICMPCheckHostSocket(t *testing.T) {
	ns := netnstest.New(t, "icmp")
	setRange := func(r string) {
		t.Helper()
		var err error
		// /proc/sys/net is the namespace of the thread that opens it.
		netnstest.Run(t, ns, func() { err = os.WriteFile("/proc/sys/net/ipv4/ping_group_range", []byte(r), 0o644) })
		if err != nil {
			t.Fatal(err)
		}
	}

	setRange("0 2147483647")
	var err error
	netnstest.Run(t, ns, func() { err = pingHost() })
	if err != nil {
		t.Errorf("ping of loopback where every group may: %v", err)
	}

	setRange("1 0") // the kernel's default: nobody
	netnstest.Run(t, ns, func() { err = pingHost() })
	if !errors.Is(err, middleware.ErrICMPNotPermitted) || !strings.Contains(err.Error(), `ping_group_range (here "1 0")`) {
		t.Errorf("ping where no group may: %v, want ErrICMPNotPermitted naming the setting", err)
	}
}

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

	if p, skipped, err := choose("0 2147483647", "127.0.0.1"); err != nil || p.Kind != middleware.ProbeICMP || len(skipped) != 0 {
		t.Errorf("ICMP permitted: %+v, skipped %v, %v; want icmp", p, skipped, err)
	}
	p, skipped, err := choose("1 0", "127.0.0.1")
	if err != nil || p.Kind != middleware.ProbeUDPDNS || p.Target != "127.0.0.1:53" {
		t.Errorf("ICMP refused: %+v, %v; want udp-dns to 127.0.0.1:53", p, err)
	}
	if len(skipped) != 1 || !errors.Is(skipped[0], middleware.ErrICMPNotPermitted) {
		t.Errorf("skipped %v, want icmp, not permitted", skipped)
	}
	if _, _, err := choose("1 0", "icmp://127.0.0.1"); !errors.Is(err, middleware.ErrNoLightProbe) || !errors.Is(err, middleware.ErrICMPNotPermitted) {
		t.Errorf("pinned icmp where refused: %v, want ErrNoLightProbe naming why", err)
	}
	if p, _, err := choose("1 0", "tcp://127.0.0.1:8443"); err != nil || p.Kind != middleware.ProbeTCP || p.Target != "127.0.0.1:8443" {
		t.Errorf("pinned tcp: %+v, %v", p, err)
	}
	if _, _, err := choose("1 0", "sctp://127.0.0.1"); err == nil || !strings.Contains(err.Error(), `unknown kind "sctp"`) {
		t.Errorf("unknown kind: %v", err)
	}
}
