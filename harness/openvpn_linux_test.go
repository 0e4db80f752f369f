package harness

import (
	"context"
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/netnstest"
)

// startOpenVPN starts an OpenVPN lab for the test, or skips where it
// cannot run (fails under TUNNELPROBE_REQUIRE_DOCKER=1, as in CI).
func startOpenVPNLab(t *testing.T, cfg OpenVPNConfig) *OpenVPN {
	t.Helper()
	if err := OpenVPNAvailable(cfg.Binary); err != nil {
		netnstest.Unavailable(t, "%v", err)
	}
	o := NewOpenVPN(cfg)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := o.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := o.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return o
}

// waitFor calls f until it succeeds or a minute passes.
func waitFor(t *testing.T, what string, f func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var err error
	for ctx.Err() == nil {
		tctx, tcancel := context.WithTimeout(ctx, 2*time.Second)
		err = f(tctx)
		tcancel()
		if err == nil {
			return
		}
	}
	t.Fatalf("%s: %v", what, err)
}

func TestOpenVPNCarriesTheLabsTargets(t *testing.T) {
	for _, transport := range []string{TransportUDP, TransportTCP} {
		t.Run(transport, func(t *testing.T) {
			o := startOpenVPNLab(t, OpenVPNConfig{Transport: transport, Link: Settings{Rate: 50_000_000, Delay: 5 * time.Millisecond}})
			ctx := t.Context()
			before, err := o.ReadCounters()
			if err != nil {
				t.Fatal(err)
			}
			if err := o.TLSCheck().Check(ctx); err != nil {
				t.Fatalf("TLS check through the tunnel: %v", err)
			}
			if err := o.SmallCheck().Check(ctx); err != nil {
				t.Fatalf("small check (ICMP, DNS) through the tunnel: %v", err)
			}
			if err := o.LightProbe().Check.Check(ctx); err != nil {
				t.Fatalf("light probe: %v", err)
			}
			// 1 MiB there and back through the echo target: everything
			// crossed both ways once the last byte is back.
			conn, err := o.DialContext(ctx, "tcp", netip.AddrPortFrom(ServerTunnelAddr, EchoPort).String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			wrote := make(chan error, 1)
			go func() { _, err := conn.Write(make([]byte, 1<<20)); wrote <- err }()
			if _, err := io.ReadFull(conn, make([]byte, 1<<20)); err != nil {
				t.Fatal(err)
			}
			if err := <-wrote; err != nil {
				t.Fatal(err)
			}
			d, err := o.ReadDelivery()
			if err != nil || len(d) == 0 {
				t.Errorf("delivery of the connection through tun0: %v, %v", d, err)
			}
			after, err := o.ReadCounters()
			if err != nil {
				t.Fatal(err)
			}
			if after.TxBytes-before.TxBytes < 1<<20 {
				t.Errorf("tun0 sent %d bytes for a 1 MiB write", after.TxBytes-before.TxBytes)
			}
			if st := o.Link().Stats(); st.Uplink.Bytes < 1<<20 {
				t.Errorf("the link carried %d bytes up: the transport did not cross it", st.Uplink.Bytes)
			}
		})
	}
}
