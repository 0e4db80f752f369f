package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"
)

// The client's counters are its tunnel interface's, as a kernel counts a
// wg0: an echo through the tunnel shows up both ways; while the link is
// down, what is sent gets no answer; a restart starts a new interface from
// zero; a client that is down has none.
func TestClientCounters(t *testing.T) {
	l := startLab(t, Config{Link: Settings{Rate: 20_000_000, Delay: time.Millisecond}})
	ctx := t.Context()
	c := l.Client()
	before, err := c.ReadCounters()
	if err != nil {
		t.Fatal(err)
	}
	echo(t, l, 2000)
	after, _ := c.ReadCounters()
	if after.TxPackets-before.TxPackets < 3 || after.RxPackets-before.RxPackets < 3 || after.RxBytes-before.RxBytes < 2000 {
		t.Errorf("an echo of 2,000 bytes moved %+v -> %+v, want packets both ways and the bytes back in", before, after)
	}

	if err := l.Link().Update(func(s *Settings) { s.Down = true }); err != nil {
		t.Fatal(err)
	}
	_ = tlsCheck(ctx, l, 500*time.Millisecond) // a SYN or two into the void
	down, _ := c.ReadCounters()
	if down.TxPackets <= after.TxPackets || down.RxPackets != after.RxPackets {
		t.Errorf("during the outage %+v -> %+v, want sent packets and nothing received", after, down)
	}

	if err := c.Down(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadCounters(); !errors.Is(err, ErrClientDown) {
		t.Errorf("down: %v, want ErrClientDown", err)
	}
	if err := c.Up(ctx); err != nil {
		t.Fatal(err)
	}
	fresh, err := c.ReadCounters()
	if err != nil || fresh.TxBytes >= down.TxBytes {
		t.Errorf("after a restart: %+v, %v; want an interface counting from zero", fresh, err)
	}
}

// echo sends n bytes to the lab's echo service and reads them back to the
// end of the connection: once the server's FIN is in, nothing more of that
// connection comes through the tunnel.
func echo(t *testing.T, l *Lab, n int) {
	t.Helper()
	if err := echoWithin(t.Context(), l, n, 10*time.Second); err != nil {
		t.Fatal(err)
	}
}

// echoWithin is echo within timeout, returning what went wrong.
func echoWithin(ctx context.Context, l *Lab, n int, timeout time.Duration) error {
	return throughTunnel(ctx, l, l.EchoAddr().String(), timeout, func(_ context.Context, c net.Conn) error {
		if _, err := c.Write(make([]byte, n)); err != nil {
			return err
		}
		if err := c.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
			return err
		}
		got, err := io.ReadAll(c)
		if err == nil && len(got) != n {
			err = fmt.Errorf("echo: %d bytes back, want %d", len(got), n)
		}
		return err
	})
}
