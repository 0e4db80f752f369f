package check_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/netnstest"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// pingHost runs an ICMP of loopback on the host's ICMP socket.
func pingHost() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return check.ICMP{Address: "127.0.0.1"}.Check(ctx)
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
	if !errors.Is(err, check.ErrICMPNotPermitted) || !strings.Contains(err.Error(), `ping_group_range (here "1 0")`) {
		t.Errorf("ping where no group may: %v, want ErrICMPNotPermitted naming the setting", err)
	}
}
