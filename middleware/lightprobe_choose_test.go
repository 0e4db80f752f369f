package middleware_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/middleware"
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
	for _, target := range []string{"udp-dns://127.0.0.1:5353", "tcp://127.0.0.1:8443", "tcp://[::1]:8443", "udp-dns://[fe80::1%lo]:53"} {
		if _, _, err := middleware.ChooseLightProbe(context.Background(), target, nil); err != nil {
			t.Errorf("%s: %v", target, err)
		}
	}
}
