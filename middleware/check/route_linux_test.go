package check_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/tunnelprobe/tunnelprobe/internal/netnstest"
	"github.com/tunnelprobe/tunnelprobe/internal/testnet"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// twoWays is a near namespace with two ways to a far one: vtun, the
// tunnel (10.79.0.1 to 10.79.0.2), and vup, the host's own uplink
// (10.80.0.1 to 10.80.0.2). Far listens on TCP 8443 on every address and
// answers pings; near may open ICMP sockets.
type twoWays struct{ near, far string }

func newTwoWays(t *testing.T) twoWays {
	t.Helper()
	w := twoWays{near: netnstest.New(t, "rnear"), far: netnstest.New(t, "rfar")}
	netnstest.Veth(t, w.near, w.far, "vtun", "vtunfar", "10.79.0.1/24", "10.79.0.2/24")
	netnstest.Veth(t, w.near, w.far, "vup", "vupfar", "10.80.0.1/24", "10.80.0.2/24")
	var err error
	netnstest.Run(t, w.near, func() { err = os.WriteFile("/proc/sys/net/ipv4/ping_group_range", []byte("0 2147483647"), 0o644) })
	if err != nil {
		t.Fatal(err)
	}
	var ln net.Listener
	netnstest.Run(t, w.far, func() { ln, err = net.Listen("tcp", ":8443") })
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return w
}

// check runs c in the near namespace.
func (w twoWays) check(t *testing.T, c check.Checker) error {
	t.Helper()
	var err error
	netnstest.Run(t, w.near, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err = c.Check(ctx)
	})
	return err
}

// A bound check counts only where the kernel routes its destination
// through the interface, as the users' traffic goes: with the route
// through the tunnel deleted, a socket bound to it would still be sent
// on-link and answered, while every application gets "no route"; and a
// destination routed by another interface is refused although the far side
// answers there.
func TestBoundDialerFollowsTheKernelsRoutes(t *testing.T) {
	w := newTwoWays(t)
	bound := check.BoundDialer("vtun")
	checks := map[string]check.Checker{
		"icmp": check.ICMP{Address: "10.79.0.2", Dialer: bound},
		"tcp":  check.TCP{Address: "10.79.0.2:8443", Dialer: bound},
		"udp":  check.DNSQuery{Server: "10.79.0.2:53", Dialer: bound},
	}
	for kind, c := range checks {
		if kind == "udp" {
			continue // nothing answers DNS there: only the refusal below is of interest
		}
		if err := w.check(t, c); err != nil {
			t.Errorf("%s through the tunnel's route: %v", kind, err)
		}
	}

	netnstest.IP(t, "-n", w.near, "route", "del", "10.79.0.0/24", "dev", "vtun")
	for kind, c := range checks {
		err := w.check(t, c)
		if !errors.Is(err, check.ErrNoRouteThrough) || !strings.Contains(err.Error(), "no route through vtun to 10.79.0.2") {
			t.Errorf("%s with the tunnel's route deleted: %v, want no route through vtun", kind, err)
		}
	}

	// The host's uplink reaches the same address: what is routed there
	// proves nothing about the tunnel.
	netnstest.IP(t, "-n", w.near, "route", "add", "10.79.0.2/32", "via", "10.80.0.2", "dev", "vup")
	if err := w.check(t, check.TCP{Address: "10.79.0.2:8443"}); err != nil {
		t.Fatalf("unbound, by the uplink: %v", err)
	}
	if err := w.check(t, checks["tcp"]); !errors.Is(err, check.ErrNoRouteThrough) || !strings.Contains(err.Error(), "routes it by vup") {
		t.Errorf("bound, the route by the uplink: %v, want a refusal naming vup", err)
	}
	// The interface's own address is answered by the local kernel.
	if err := w.check(t, check.ICMP{Address: "10.80.0.1", Dialer: check.BoundDialer("vup")}); !errors.Is(err, check.ErrNoRouteThrough) ||
		!strings.Contains(err.Error(), "an address of this host") {
		t.Errorf("the interface's own address: %v, want a refusal", err)
	}
}

// A probe of the path MTU is as big as asked and is not fragmented: over a
// far side whose MTU is lower than ours (a veth drops the bigger frames
// without a word, as a path that filters ICMP "fragmentation needed"
// does), an echo of our full MTU is lost while one that fits is answered.
func TestICMPSizeProbesThePathMTU(t *testing.T) {
	w := newTwoWays(t)
	netnstest.IP(t, "-n", w.far, "link", "set", "vtunfar", "mtu", "1300")
	bound := check.BoundDialer("vtun")
	for _, tc := range []struct {
		size     int
		answered bool
	}{{0, true}, {1200, true}, {1300, true}, {1310, false}, {1500, false}} { // a veth lets 4 bytes more through, for a VLAN tag
		err := w.check(t, check.ICMP{Address: "10.79.0.2", Dialer: bound, Size: tc.size})
		if (err == nil) != tc.answered {
			t.Errorf("an echo of %d bytes: %v, want answered %v", tc.size, err, tc.answered)
		}
	}
	if err := w.check(t, check.ICMP{Address: "10.79.0.2", Dialer: bound, Size: 30}); err == nil || !strings.Contains(err.Error(), "size 30") {
		t.Errorf("an echo too small for its headers: %v", err)
	}
}

// A padded DNS query is not fragmented either. Where the kernel knows a
// path MTU below the query's size (a route's mtu here, as one an ICMP
// "fragmentation needed" once taught it), it would send the query in
// fragments, which cross a far side that drops the whole packet: the query
// would be answered at a size the path cannot carry. Sent whole, with
// Don't Fragment, it is lost, over IPv4 and IPv6, through a BoundDialer
// and the host's own socket.
func TestDNSQuerySizeIsNotFragmented(t *testing.T) {
	w := newTwoWays(t)
	netnstest.IP(t, "-n", w.far, "link", "set", "vtunfar", "mtu", "1300")
	netnstest.IP(t, "-n", w.near, "addr", "add", "fd79::1/64", "dev", "vtun", "nodad")
	netnstest.IP(t, "-n", w.far, "addr", "add", "fd79::2/64", "dev", "vtunfar", "nodad")
	for _, far := range []string{"10.79.0.2", "fd79::2"} {
		netnstest.IP(t, "-n", w.near, "route", "add", far, "dev", "vtun", "mtu", "1300")
		var pc net.PacketConn
		var err error
		netnstest.Run(t, w.far, func() { pc, err = net.ListenPacket("udp", net.JoinHostPort(far, "53")) })
		if err != nil {
			t.Fatal(err)
		}
		testnet.ServeResolver(t, pc, dnsmessage.RCodeNameError)
		for _, d := range []check.Dialer{check.BoundDialer("vtun"), nil} {
			// Size counts IPv4's headers: over IPv6 the packet is 20 bytes
			// bigger.
			for _, tc := range []struct {
				size     int
				answered bool
			}{{1200, true}, {1400, false}} {
				err := w.check(t, check.DNSQuery{Server: net.JoinHostPort(far, "53"), Dialer: d, FreshLabel: true, Size: tc.size})
				if (err == nil) != tc.answered {
					t.Errorf("a query of %d bytes to %s (dialer %T): %v, want answered %v", tc.size, far, d, err, tc.answered)
				}
			}
		}
	}
}
