package loadgen_test

import (
	"context"
	"net"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
)

// testSink is a sink.Server serving a loopback listener.
type testSink struct {
	*sink.Server
	Addr string
	stop func() // closes the listener and every connection, and waits
}

// startSink starts a sink on addr ("127.0.0.1:0" for any port) that the
// test's cleanup stops.
func startSink(t *testing.T, addr string) *testSink {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := &sink.Server{}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	ts := &testSink{Server: srv, Addr: ln.Addr().String()}
	var stopped bool
	ts.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("sink: Serve: %v", err)
		}
	}
	t.Cleanup(ts.stop)
	return ts
}

// checkSeries fails unless res's series adds up to its totals.
func checkSeries(t *testing.T, res loadgen.Result) {
	t.Helper()
	if len(res.Series) == 0 {
		t.Fatal("empty series")
	}
	var up, down, dis int64
	for i, s := range res.Series {
		up += s.BytesUp
		down += s.BytesDown
		dis += s.Disruptions
		if i > 0 && s.T != res.Series[i-1].T+1 {
			t.Errorf("series: second %d follows %d", s.T, res.Series[i-1].T)
		}
	}
	if up != res.BytesUp || down != res.BytesDown || dis != res.Disruptions {
		t.Errorf("series adds up to up %d, down %d, disruptions %d; totals %d, %d, %d",
			up, down, dis, res.BytesUp, res.BytesDown, res.Disruptions)
	}
}

// startServe serves ln with a fresh sink until ctx ends.
func startServe(ctx context.Context, ln net.Listener) {
	_ = (&sink.Server{}).Serve(ctx, ln)
}
