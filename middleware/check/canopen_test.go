package check_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

func TestCanOpen(t *testing.T) {
	noUDP := check.DialerFunc(func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("socks5: UDP not supported")
	})
	down := check.DialerFunc(func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "udp", Err: syscall.ENETUNREACH}
	})
	for _, tc := range []struct {
		name, network string
		d             check.Dialer
		want          string // "" for nil
	}{
		{"a dialer without UDP", "udp", noUDP, "the dialer carries no UDP"},
		{"a dialer without ICMP", "icmp", noUDP, "the dialer carries no ICMP"},
		{"a route that is down now", "udp", down, ""},
		{"tcp, which cannot be opened without sending", "tcp", noUDP, ""},
		{"an unknown network", "sctp", nil, `unknown network "sctp"`},
	} {
		err := check.CanOpen(t.Context(), tc.network, "10.0.0.1:53", tc.d)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
