package harness

import (
	"context"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
)

// The lab's sink drains uploads from the netstack's notifications: open
// uploads waiting for data hold no goroutine each, and each is counted
// in full and ends when its client ends it.
func TestSinkDrainsUploadsWithoutAGoroutineEach(t *testing.T) {
	const n = 200
	l := startLab(t, Config{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	sinkStats := l.server.svc.sink.Stats
	waitUntil := sinkWaiter(ctx, t, sinkStats)
	before := runtime.NumGoroutine()
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := l.DialContext(ctx, "tcp", l.SinkAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if err := sink.WriteHeader(c, sink.ModeUpload, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil("the uploads never reached the sink", func() bool { return sinkStats().BytesIn == 4*n && sinkStats().Open == n })
	// A reader blocked for each would add n goroutines.
	waitUntil("goroutines held for the open uploads", func() bool { return runtime.NumGoroutine()-before < n/4 })
	for _, c := range conns {
		c.Close()
	}
	waitUntil("the sink still holds ended uploads", func() bool { return sinkStats().Open == 0 })
	if got := sinkStats().BytesIn; got != 4*n {
		t.Errorf("sink counted %d bytes, want %d", got, 4*n)
	}
}
