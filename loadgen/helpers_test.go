package loadgen_test

import (
	"context"
	"net"
	"testing"
	"time"

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
func startSink(t testing.TB, addr string) *testSink {
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

// watchedRun is a Run in the background whose seconds the test waits on.
type watchedRun struct {
	t       *testing.T
	seconds chan loadgen.Second
	cancel  context.CancelFunc
	done    chan watchedOutcome
	timeout <-chan time.Time
	last    watchedOutcome
}

type watchedOutcome struct {
	res loadgen.Result
	err error
}

// startWatched starts Run with cfg (its OnSecond replaced) until stop.
func startWatched(t *testing.T, cfg loadgen.Config) *watchedRun {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watchedRun{
		t:       t,
		seconds: make(chan loadgen.Second, 100),
		cancel:  cancel,
		done:    make(chan watchedOutcome, 1),
		timeout: time.After(30 * time.Second),
	}
	cfg.OnSecond = func(s loadgen.Second) {
		select {
		case w.seconds <- s:
		default: // the test stopped listening
		}
	}
	go func() {
		res, err := loadgen.Run(ctx, cfg)
		w.done <- watchedOutcome{res, err}
	}()
	t.Cleanup(func() { w.stop() })
	return w
}

// waitFor returns once a second satisfies cond, failing the test after the
// run's safety timeout.
func (w *watchedRun) waitFor(what string, cond func(loadgen.Second) bool) {
	w.t.Helper()
	for {
		select {
		case s := <-w.seconds:
			if cond(s) {
				return
			}
		case <-w.timeout:
			w.stop()
			w.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// stop cancels the run and returns its outcome; later calls return it again.
func (w *watchedRun) stop() (loadgen.Result, error) {
	w.cancel()
	out, ok := <-w.done
	if ok {
		close(w.done)
		w.last = out
	}
	return w.last.res, w.last.err
}
