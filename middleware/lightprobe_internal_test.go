package middleware

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// A name is probed at its IPv4 address, the family its socket was judged
// in (ChooseLightProbe), also where it resolves IPv6-first, as in a
// dual-stack pod: an echo or a query to its IPv6 address would leave by
// another interface than an IPv4-only tunnel's, and be answered there.
func TestLightProbeOfANameGoesToTheFamilyItWasJudgedIn(t *testing.T) {
	// A dual-stack name whose addresses this host answers, so that nothing
	// is sent: the refusal names the address the probe would go to.
	v4, v6 := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")
	lookup := func(_ context.Context, network, _ string) ([]netip.Addr, error) {
		switch network {
		case "ip4":
			return []netip.Addr{v4}, nil
		case "ip6":
			return []netip.Addr{v6}, nil
		}
		return []netip.Addr{v6, v4}, nil
	}
	for _, kind := range []string{probeICMP, probeUDPDNS} {
		err := probeTarget{kind: kind, host: "dual-stack.test", port: "53", lookup: lookup}.Check(t.Context())
		if !errors.Is(err, ErrProvesNothing) || !strings.Contains(err.Error(), kind+" 127.0.0.1 is a loopback address") {
			t.Errorf("%s probe of a name that resolves IPv6-first: %v, want it at its IPv4 address, 127.0.0.1", kind, err)
		}
	}
}
