package harness

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// The light checks of package middleware/check through the lab's tunnel: the
// server peer answers ICMP echo and DNS queries.
func TestLabLightChecks(t *testing.T) {
	l := startLab(t, Config{Link: Settings{Rate: 20_000_000, Delay: 5 * time.Millisecond}})
	checks := map[string]check.Checker{
		"icmp address":         check.ICMP{Address: ServerTunnelAddr.String(), Dialer: l},
		"icmp lab name":        check.ICMP{Address: TLSHost, Dialer: l},
		"udp-dns lab name":     check.DNSQuery{Server: l.DNSAddr().String(), Name: TLSHost, Dialer: l},
		"udp-dns unknown name": check.DNSQuery{Server: l.DNSAddr().String(), Name: "nowhere.example", Dialer: l},
	}
	for name, c := range checks {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		if err := c.Check(ctx); err != nil {
			t.Errorf("%s on a working tunnel: %v", name, err)
		}
		cancel()
	}

	if err := l.Link().Update(func(s *Settings) { s.Down = true }); err != nil {
		t.Fatal(err)
	}
	const deadline = 300 * time.Millisecond
	for name, c := range checks {
		start := time.Now() // before the deadline is set from the clock
		ctx, cancel := context.WithTimeout(t.Context(), deadline)
		err := c.Check(ctx)
		took := time.Since(start)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s during an outage: %v, want a failure at the deadline", name, err)
		}
		if took < deadline {
			t.Errorf("%s during an outage failed after %v, before its %v deadline", name, took, deadline)
		}
	}
}

// The DNS server answers the lab's names with the server's address, as a
// resolver sees it.
func TestLabDNSServerAnswersLabNames(t *testing.T) {
	l := startLab(t, Config{})
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return l.DialContext(ctx, network, l.DNSAddr().String())
	}}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	addrs, err := r.LookupHost(ctx, SinkHost+".")
	if err != nil || !slices.Equal(addrs, []string{ServerTunnelAddr.String()}) {
		t.Errorf("lookup %s: %v, %v; want [%v]", SinkHost, addrs, err, ServerTunnelAddr)
	}
	var dnsErr *net.DNSError
	if _, err := r.LookupHost(ctx, "nowhere.example."); !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Errorf("lookup of a name the lab does not know: %v, want not found", err)
	}
}
