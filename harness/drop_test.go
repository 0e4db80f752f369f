package harness

import (
	"context"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// The server's side drops the kinds asked for without an answer: with
// ICMP dropped the light probe goes unanswered while the TLS target
// answers; with TCP dropped, the other way round; with none, both answer.
func TestServerDropsTheKindsAskedFor(t *testing.T) {
	l := startLab(t, Config{})
	run := func(c check.Checker) error {
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		return c.Check(ctx)
	}
	probe := func() error { return run(l.LightProbe().Check) }
	dns := check.DNSQuery{Server: l.DNSAddr().String(), Name: TLSHost, Dialer: l}
	for _, tc := range []struct {
		drop              []string
		probe, check, dns bool // answered
	}{
		{nil, true, true, true},
		{[]string{DropICMP}, false, true, true},
		{[]string{DropTCP}, true, false, true},
		{[]string{DropDNS}, true, true, false},
		{[]string{DropICMP, DropTCP}, false, false, true},
		{nil, true, true, true},
	} {
		if err := l.Server().Drop(tc.drop...); err != nil {
			t.Fatal(err)
		}
		if err := run(dns); (err == nil) != tc.dns {
			t.Errorf("drop %v: a DNS query: %v, want answered %v", tc.drop, err, tc.dns)
		}
		if err := probe(); (err == nil) != tc.probe {
			t.Errorf("drop %v: the light probe: %v, want answered %v", tc.drop, err, tc.probe)
		}
		if err := tlsCheck(t.Context(), l, 500*time.Millisecond); (err == nil) != tc.check {
			t.Errorf("drop %v: the TLS check: %v, want answered %v", tc.drop, err, tc.check)
		}
	}
	if err := l.Server().Drop("sctp"); err == nil {
		t.Error("an unknown kind was taken")
	}
}
