package harness

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// startLab starts a lab for one test and closes it at the end.
func startLab(t *testing.T, cfg Config) *Lab {
	t.Helper()
	l := New(cfg)
	if err := l.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	return l
}

// tlsCheck is the health check the project cares about: dial through the
// tunnel and complete a verified TLS handshake, within timeout.
func tlsCheck(ctx context.Context, l *Lab, timeout time.Duration) error {
	return throughTunnel(ctx, l, l.TLSAddr().String(), timeout, func(ctx context.Context, c net.Conn) error {
		return tls.Client(c, &tls.Config{RootCAs: l.CA().Pool, ServerName: TLSHost}).HandshakeContext(ctx)
	})
}

// throughTunnel dials addr through l's tunnel and runs f on the
// connection, all within timeout.
func throughTunnel(ctx context.Context, l *Lab, addr string, timeout time.Duration, f func(context.Context, net.Conn) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := l.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(d)
	}
	return f(ctx, c)
}

func TestLabTLSCheckOutageRecovery(t *testing.T) {
	l := startLab(t, Config{Link: Settings{Rate: 20_000_000, Delay: 5 * time.Millisecond}})
	ctx := t.Context()
	if err := tlsCheck(ctx, l, 5*time.Second); err != nil {
		t.Fatalf("idle tunnel: %v", err)
	}

	if err := l.Link().Update(func(s *Settings) { s.Down = true }); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := tlsCheck(ctx, l, 300*time.Millisecond)
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
		t.Fatalf("during outage: got %v, want a deadline error", err)
	}
	if took < 300*time.Millisecond || took > 2*time.Second {
		t.Fatalf("during outage the check took %v; want it to fail at its 300ms deadline", took)
	}
	if st := l.Link().Stats(); st.Uplink.OutageDrops == 0 {
		t.Fatalf("no outage drops counted: %+v", st.Uplink)
	}

	if err := l.Link().Update(func(s *Settings) { s.Down = false }); err != nil {
		t.Fatal(err)
	}
	if err := tlsCheck(ctx, l, 5*time.Second); err != nil {
		t.Fatalf("after outage: %v", err)
	}
	st := l.Link().Stats()
	if st.Uplink.Packets == 0 || st.Downlink.Bytes == 0 {
		t.Fatalf("counters did not move: %+v", st)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestLabRestartBreaksFlows(t *testing.T) {
	l := startLab(t, Config{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := l.DialContext(ctx, "tcp", l.EchoAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("echo: %q, %v", buf, err)
	}
	if err := l.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	// The old flow is gone: reads fail at once instead of hanging.
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(buf); err == nil || isTimeout(err) {
		t.Fatalf("read on a flow through the restarted peer: %v, want a connection error", err)
	}
	if err := tlsCheck(ctx, l, 5*time.Second); err != nil {
		t.Fatalf("after restart: %v", err)
	}
}

// The server's side of a restarted client's connections ends: nothing
// else would end an upload's, whose sink never sends.
func TestLabRestartEndsTheServersSide(t *testing.T) {
	l := startLab(t, Config{})
	l.server.staleGrace = 0
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := l.DialContext(ctx, "tcp", l.SinkAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sink.WriteHeader(c, sink.ModeUpload, 0)
	c.Write([]byte("ping"))
	sinkStats := l.server.svc.sink.Stats
	waitUntil := sinkWaiter(ctx, t, sinkStats)
	waitUntil("the upload never reached the sink", func() bool { return sinkStats().BytesIn == 4 })
	if err := l.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	waitUntil("the server still holds the restarted client's connection", func() bool { return sinkStats().Open == 0 })
}

// sinkWaiter returns a function that waits until cond holds, or fails
// the test with what and stats once ctx ends: the sink's goroutines
// count on their own.
func sinkWaiter(ctx context.Context, t *testing.T, stats func() sink.Stats) func(what string, cond func() bool) {
	return func(what string, cond func() bool) {
		t.Helper()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for !cond() {
			select {
			case <-ctx.Done():
				t.Fatalf("%s: %+v", what, stats())
			case <-tick.C:
			}
		}
	}
}

func TestLabDownRefusesDialsUntilUp(t *testing.T) {
	l := startLab(t, Config{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.DialContext(ctx, "tcp", l.EchoAddr().String()); !errors.Is(err, ErrClientDown) {
		t.Fatalf("dial while down: %v, want ErrClientDown", err)
	}
	if err := l.Down(); !errors.Is(err, ErrClientDown) {
		t.Errorf("second Down: %v", err)
	}
	if err := l.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Up(ctx); err == nil {
		t.Error("Up on a running client succeeded")
	}
	if err := tlsCheck(ctx, l, 5*time.Second); err != nil {
		t.Fatalf("after Up: %v", err)
	}
}

// A one-way outage drops one direction only: the check fails either way,
// and the counters show which direction dropped.
func TestLabOneWayOutage(t *testing.T) {
	l := startLab(t, Config{Link: Settings{Rate: 20_000_000, Delay: 5 * time.Millisecond}})
	ctx := t.Context()
	// The WireGuard handshake first: one lost to the outage would be tried
	// again only 5 s later.
	if err := tlsCheck(ctx, l, 5*time.Second); err != nil {
		t.Fatalf("before the outage: %v", err)
	}
	for _, uplink := range []bool{true, false} {
		set := func(down bool) {
			t.Helper()
			if err := l.Link().Update(func(s *Settings) { s.UplinkDown, s.DownlinkDown = uplink && down, !uplink && down }); err != nil {
				t.Fatal(err)
			}
		}
		before := l.Link().Stats()
		set(true)
		if err := tlsCheck(ctx, l, 300*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
			t.Errorf("uplink down %v: the check got %v, want a deadline error", uplink, err)
		}
		after := l.Link().Stats()
		upDrops := after.Uplink.OutageDrops - before.Uplink.OutageDrops
		downDrops := after.Downlink.OutageDrops - before.Downlink.OutageDrops
		if uplink && (upDrops == 0 || downDrops != 0) || !uplink && (downDrops == 0 || upDrops != 0) {
			t.Errorf("uplink down %v: outage drops up %d, down %d; want drops in the down direction only", uplink, upDrops, downDrops)
		}
		if !uplink && after.Uplink.Packets == before.Uplink.Packets {
			t.Errorf("downlink down: nothing crossed the working uplink")
		}
		set(false)
		if err := tlsCheck(ctx, l, 5*time.Second); err != nil {
			t.Fatalf("uplink down %v, after the outage: %v", uplink, err)
		}
	}
}

// An MTU black hole through the real tunnel: WireGuard pads an inner
// packet to a multiple of 16 and adds WireGuardOverhead, and the link adds
// LinkHeaders, so under MTU 1280 an echo of 1216 bytes (1276 on the link)
// is answered and one of 1217 (padded to 1232: 1292) is not; small TCP
// data crosses, full-size segments do not, and neither does a TLS
// handshake (Go's ClientHello, with its post-quantum key share, fills a
// segment).
func TestLabMTUBlackHole(t *testing.T) {
	l := startLab(t, Config{Link: Settings{Rate: 20_000_000, Delay: time.Millisecond}})
	ctx := t.Context()
	if err := tlsCheck(ctx, l, 5*time.Second); err != nil { // the WireGuard handshake first
		t.Fatalf("before: %v", err)
	}
	if err := l.Link().Update(func(s *Settings) { s.MTU = 1280 }); err != nil {
		t.Fatal(err)
	}
	ping := func(size int, timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return check.ICMP{Address: ServerTunnelAddr.String(), Dialer: l, Size: size}.Check(ctx)
	}
	if err := ping(1216, 5*time.Second); err != nil {
		t.Errorf("an echo of 1216 bytes under MTU 1280: %v", err)
	}
	before := l.Link().Stats().Uplink.MTUDrops
	if err := ping(1217, 300*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("an echo of 1217 bytes under MTU 1280: %v, want no answer", err)
	}
	if drops := l.Link().Stats().Uplink.MTUDrops; drops != before+1 {
		t.Errorf("MTU drops %d -> %d, want the echo's one", before, drops)
	}
	echo(t, l, 100)
	if err := echoWithin(ctx, l, 4000, 500*time.Millisecond); !isTimeout(err) {
		t.Errorf("an echo of 4,000 bytes over TCP: %v, want it stalled", err)
	}
	if err := tlsCheck(ctx, l, 300*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
		t.Errorf("TLS under MTU 1280: %v, want it stalled", err)
	}
	if err := l.Link().Update(func(s *Settings) { s.MTU = 0 }); err != nil {
		t.Fatal(err)
	}
	if err := tlsCheck(ctx, l, 5*time.Second); err != nil {
		t.Errorf("after the black hole: %v", err)
	}
}
