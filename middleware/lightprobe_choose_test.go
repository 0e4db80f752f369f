package middleware_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/tunnelprobe/tunnelprobe/internal/testnet"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// A light probe's port belongs to udp-dns or tcp: an ICMP probe of
// "HOST:PORT" would never be answered, and so decide nothing, silently.
func TestChooseLightProbeRefusesAPortWithoutItsKind(t *testing.T) {
	for _, target := range []string{"127.0.0.1:5353", "icmp://127.0.0.1:53", "[::1]:53", "icmp://[::1]:53",
		"tcp://127.0.0.1:0", "tcp://127.0.0.1:99999", "udp-dns://127.0.0.1:domain"} {
		if p, _, err := middleware.ChooseLightProbe(context.Background(), target, nil); err == nil || !strings.Contains(err.Error(), "port") {
			t.Errorf("%s: %+v, %v; want an error about the port", target, p, err)
		}
	}
	// Nor what cannot be a host: it would be probed, never answered.
	for _, target := range []string{"tcp://:8443", "udp-dns://:53", "tcp://127.0.0.1/x", "udp-dns://127.0.0.1/example.com",
		"tcp://127.0.0.1:8443 ", " 127.0.0.1", "127.0.0.1,tcp://127.0.0.1:1"} {
		if p, _, err := middleware.ChooseLightProbe(context.Background(), target, nil); err == nil {
			t.Errorf("%q accepted as %+v", target, p)
		}
	}
	for _, target := range []string{"udp-dns://192.0.2.1:5353", "tcp://192.0.2.1:8443", "tcp://[2001:db8::1]:8443", "udp-dns://[fe80::1%lo]:53"} {
		if _, _, err := middleware.ChooseLightProbe(context.Background(), target, nil); err != nil {
			t.Errorf("%s: %v", target, err)
		}
	}
}

// What the local kernel answers, or no one host does, proves nothing
// about a tunnel: it is refused, saying why, whatever the dialer.
func TestChooseLightProbeRefusesTargetsTheHostAnswers(t *testing.T) {
	tunnel := check.DialerFunc(func(context.Context, string, string) (net.Conn, error) { return nil, errors.New("unused") })
	for _, tc := range []struct{ target, why string }{
		{"127.0.0.1", "loopback"},
		{"127.0.0.53", "loopback"},
		{"udp-dns://127.0.0.53:53", "loopback"},
		{"icmp://[::1]", "loopback"},
		{"0.0.0.0", "unspecified"},
		{"tcp://[::]:443", "unspecified"},
		{"224.0.0.1", "multicast"},
		{"udp-dns://[ff02::fb]:5353", "multicast"},
		{"255.255.255.255", "broadcast"},
		{"::ffff:127.0.0.1", "loopback"},
	} {
		for _, d := range []check.Dialer{nil, tunnel} {
			_, _, err := middleware.ChooseLightProbe(context.Background(), tc.target, d)
			if err == nil || !strings.Contains(err.Error(), tc.why) || !strings.Contains(err.Error(), "beyond the VPN server") {
				t.Errorf("%s (dialer %T): %v, want a refusal naming %s", tc.target, d, err, tc.why)
			}
		}
	}
}

// A name is checked before every probe, at the address it resolves to: one
// that resolves to this host is not probed, and proves nothing.
func TestLightProbeOfANameThatResolvesToThisHostProvesNothing(t *testing.T) {
	p, _, err := middleware.ChooseLightProbe(context.Background(), "tcp://localhost:443", nil)
	if err != nil {
		t.Fatalf("a name is not resolved at start (the tunnel that carries DNS may be down): %v", err)
	}
	if err := p.Check.Check(context.Background()); !errors.Is(err, middleware.ErrProvesNothing) || !strings.Contains(err.Error(), "127.0.0.1 is a loopback address") {
		t.Errorf("probe of localhost: %v, want ErrProvesNothing naming 127.0.0.1", err)
	}
}

// The udp-dns light probe asks for a name never asked before each time,
// so that no cache on the way answers for a path that is dead beyond it:
// two probes ask two names, each a fresh label under cloudflare.com.
func TestUDPDNSLightProbeAsksAFreshNameEachTime(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resolver := testnet.ServeResolver(t, pc, dnsmessage.RCodeNameError)
	// A dialer of a tunnel of its own, as a netstack is, carries the probe
	// to the resolver whatever address it is sent to.
	tunnel := check.DialerFunc(func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, pc.LocalAddr().String())
	})
	p, _, err := middleware.ChooseLightProbe(t.Context(), "udp-dns://192.0.2.1", tunnel)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := p.Check.Check(t.Context()); err != nil {
			t.Fatalf("probe answered NXDOMAIN: %v", err)
		}
	}
	names := resolver.Asked()
	if len(names) != 2 || names[0] == names[1] {
		t.Fatalf("two probes asked %q, want two names", names)
	}
	for _, n := range names {
		if label, zone, _ := strings.Cut(n, "."); zone != "cloudflare.com." || len(label) < 12 {
			t.Errorf("asked %q, want a fresh label under cloudflare.com.", n)
		}
	}
}
