package harness

import (
	"context"
	"testing"
	"time"
)

// Stream sends until its ctx ends and then returns nil, also for a ctx
// that ended before it began. A server peer on its own is enough: its
// datagrams enter the tunnel whether or not a client ever answers.
func TestStreamEndsWithItsContext(t *testing.T) {
	key, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(ServerConfig{ClientPublicKey: key})
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	if err := s.Stream(doneContext(t), 1_000_000); err != nil {
		t.Fatalf("Stream with a done ctx: %v, want nil", err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ended := make(chan error, 1)
	go func() { ended <- s.Stream(ctx, 1_000_000) }()
	// Cancel only once the stream is under way: the first datagram has
	// entered the tunnel.
	for s.peer.tun.counters().TxPackets == 0 {
		select {
		case err := <-ended:
			t.Fatalf("Stream returned %v before its ctx ended", err)
		case <-time.After(time.Millisecond):
		}
	}
	cancel()
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("Stream after its ctx ended: %v, want nil", err)
		}
	case <-time.After(10 * time.Second): // a safety net, not a timing
		t.Fatal("Stream outlived its ctx")
	}
}
