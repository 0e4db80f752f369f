package harness

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// doneContext is a context cancelled before it is used: what a caller
// passes who gave up before the call.
func doneContext(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx
}

// nowhere is a UDP address no peer listens on: the parts below need one to
// be configured, never to be reached.
var nowhere = netip.MustParseAddrPort("127.0.0.1:9")

// Every start of the package, given a ctx that is already done, returns
// ctx's error and leaves nothing running, however little it would cost to
// start anyway: a caller who gave up must not be left with a part to close.
func TestStartWithDoneContextStartsNothing(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	key, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		start func(context.Context) (io.Closer, error)
	}{
		{"Lab.Start", func(ctx context.Context) (io.Closer, error) {
			l := New(Config{})
			return l, l.Start(ctx)
		}},
		{"Server.Start", func(ctx context.Context) (io.Closer, error) {
			s := NewServer(ServerConfig{ClientPublicKey: key})
			return s, s.Start(ctx)
		}},
		{"Client.Start", func(ctx context.Context) (io.Closer, error) {
			c := NewClient(ClientConfig{ServerPublicKey: key, Endpoint: nowhere})
			return c, c.Start(ctx)
		}},
		{"Link.Start", func(ctx context.Context) (io.Closer, error) {
			l := NewLink(LinkConfig{Server: nowhere})
			return l, l.Start(ctx)
		}},
		{"ListenSOCKS5", func(ctx context.Context) (io.Closer, error) {
			s, err := ListenSOCKS5(ctx, "127.0.0.1:0", nil)
			if err != nil {
				return nil, err
			}
			return s, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			part, err := tc.start(doneContext(t))
			if part != nil {
				defer part.Close() // what a start that ignored ctx left running
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want %v", err, context.Canceled)
			}
		})
	}
}

// A name is not looked up for a caller who gave up, even one the hosts file
// would answer at once.
func TestResolveUDPWithDoneContext(t *testing.T) {
	if _, err := ResolveUDP(doneContext(t), "localhost:51820"); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want %v", err, context.Canceled)
	}
	// A literal address needs no lookup, so a done ctx does not matter.
	if ap, err := ResolveUDP(doneContext(t), "127.0.0.1:51820"); err != nil || ap != netip.MustParseAddrPort("127.0.0.1:51820") {
		t.Fatalf("got %v, %v", ap, err)
	}
}

// A client peer on its own (its handshakes go nowhere) is enough to see
// that DialContext, Restart and Up dial, replace and bring up nothing for
// a done ctx.
func TestClientWithDoneContext(t *testing.T) {
	key, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(ClientConfig{ServerPublicKey: key, Endpoint: nowhere})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	for _, network := range []string{"tcp", "udp", "ping4"} {
		address := ServerTunnelAddr.String()
		if network != "ping4" {
			address = netip.AddrPortFrom(ServerTunnelAddr, EchoPort).String()
		}
		if conn, err := c.DialContext(doneContext(t), network, address); !errors.Is(err, context.Canceled) {
			if conn != nil {
				conn.Close()
			}
			t.Errorf("%s dial: got %v, want %v", network, err, context.Canceled)
		}
	}

	device := c.peer
	if err := c.Restart(doneContext(t)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Restart: got %v, want %v", err, context.Canceled)
	}
	if c.peer != device {
		t.Fatal("Restart with a done ctx replaced the device")
	}

	if err := c.Down(); err != nil {
		t.Fatal(err)
	}
	// As if the device went down long ago: Up has no pause to wait out,
	// which would notice the done ctx on its own.
	c.mu.Lock()
	c.downAt = time.Now().Add(-restartPause)
	c.mu.Unlock()
	if err := c.Up(doneContext(t)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Up: got %v, want %v", err, context.Canceled)
	}
	if _, err := c.DialContext(t.Context(), "udp", netip.AddrPortFrom(ServerTunnelAddr, EchoPort).String()); !errors.Is(err, ErrClientDown) {
		t.Fatalf("after Up with a done ctx the client is up: dial got %v, want %v", err, ErrClientDown)
	}
	if err := c.Up(t.Context()); err != nil {
		t.Fatalf("Up after the aborted one: %v", err)
	}
}
