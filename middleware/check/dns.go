package check

import (
	"context"
	"errors"
	"net"

	"github.com/tunnelprobe/tunnelprobe/internal/hostport"
)

// DNS passes when Host resolves to at least one address. It is the
// light check for tunnels that forbid ICMP: one small UDP exchange, and
// with Server set to a resolver beyond the tunnel it tests the tunnel, not
// the host's DNS cache.
//
// It uses Go's own resolver, never the C library's, because only Go's
// resolver sends its queries through a Dialer. Note that Go's resolver, like
// the system's, answers from /etc/hosts first when nsswitch.conf says so;
// pick a Host that is not listed there.
//
// A Dialer that wraps the connections it returns must keep a UDP connection a
// net.PacketConn: Go's resolver treats any other connection as a stream and
// frames its queries for TCP.
// A DNS check holds no state and is safe for concurrent use.
type DNS struct {
	// Host is the name to resolve. A name ending in a dot is looked up as
	// is; otherwise the search domains of resolv.conf may be tried too.
	Host string
	// Server is the DNS server as "host:port" (port 53 when missing); every
	// query goes there through Dialer. Empty means the servers of
	// resolv.conf.
	Server string
	// Dialer carries the queries; nil means a plain net.Dialer.
	Dialer Dialer
}

var _ Checker = DNS{}

// String names the check as its errors do: "dns cloudflare.com".
func (c DNS) String() string { return "dns " + c.Host }

// Check resolves Host with ctx.
func (c DNS) Check(ctx context.Context) error {
	step := "lookup"
	r := &net.Resolver{PreferGo: true}
	if c.Server != "" || c.Dialer != nil {
		d := dialerOrDefault(c.Dialer)
		server := ""
		if c.Server != "" {
			server = hostport.WithDefault(c.Server, "53")
			step = "lookup via " + server
		}
		// The resolver dials each server of resolv.conf in turn, over
		// "udp" and over "tcp" after a truncated answer; redirecting them
		// all keeps both the retries and the fallback to TCP.
		r.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
			if server != "" {
				address = server
			}
			return d.DialContext(ctx, network, address)
		}
	}
	addrs, err := r.LookupHost(ctx, c.Host)
	if err != nil {
		return newStepError(ctx, "dns", c.Host, step, err)
	}
	if len(addrs) == 0 {
		return newStepError(ctx, "dns", c.Host, step, errors.New("no address"))
	}
	return nil
}
