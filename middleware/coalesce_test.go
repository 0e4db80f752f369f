package middleware_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// heldUntil returns a check that passes once release is closed, or fails
// when its context ends first.
func heldUntil(release <-chan struct{}) check.Checker {
	return check.Func(func(ctx context.Context) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
}

func TestConcurrentChecksShareOneExecution(t *testing.T) {
	const callers = 1000
	release := make(chan struct{})
	var runs atomic.Int64
	held := heldUntil(release)
	slow := check.Func(func(ctx context.Context) error {
		runs.Add(1)
		return held.Check(ctx)
	})
	m, srv := server(t, slow, middleware.Config{Mode: middleware.ModeProbe})
	var joined atomic.Int64
	allJoined := make(chan struct{})
	middleware.SetJoinHook(m, func() {
		if joined.Add(1) == callers {
			close(allJoined)
		}
	})

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: callers}}
	defer client.CloseIdleConnections()
	codes := make(chan int, callers)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			resp, err := client.Get(srv.URL + "/check/")
			if err != nil {
				codes <- 0
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	select {
	case <-allJoined:
	case <-time.After(hangGuard):
		t.Fatalf("only %d of %d callers joined", joined.Load(), callers)
	}
	close(release)
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != http.StatusOK {
			t.Fatalf("a caller got %d", code)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("%d callers ran the check %d times, want once", callers, n)
	}
}

func TestCallerThatGivesUpCancelsTheCheck(t *testing.T) {
	ended := make(chan time.Time, 1)
	started := make(chan struct{}, 1)
	hang := check.Func(func(ctx context.Context) error {
		started <- struct{}{}
		<-ctx.Done()
		ended <- time.Now()
		return ctx.Err()
	})
	recorded := make(chan middleware.Result, 1)
	cfg := middleware.Config{
		Mode:     middleware.ModeProbe,
		Observer: middleware.ObserverFuncs{OnCheckFinished: func(r middleware.Result) { recorded <- r }},
	}
	m, err := middleware.New(hang, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := newLoopbackServer(t, m.Handler())

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.url+"/check/", nil)
	if resp, err := srv.client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the request succeeded: %d", resp.StatusCode)
	}
	// The caller has left: Do closes the connection before it returns.
	// (Timed from here, not from the deadline, whose timer may itself
	// fire late on a loaded machine.)
	gaveUp := time.Now()
	<-started
	select {
	case at := <-ended:
		if lag := at.Sub(gaveUp); lag > 50*time.Millisecond {
			t.Errorf("the check's context ended %v after the caller gave up, want within 50ms", lag)
		}
	case <-time.After(hangGuard):
		t.Fatal("the check outlived its caller")
	}
	// Cut short because its caller left: reported, not recorded.
	if r := <-recorded; !r.Abandoned {
		t.Errorf("result %+v, want abandoned", r)
	}
	if s := m.Snapshot(); s.Last != nil || s.Status != middleware.StatusUnknown {
		t.Errorf("an abandoned check was recorded: %+v", s)
	}
	srv.close()
	goleak.VerifyNone(t)
}

func TestStalledHandshakeEndsWhenCallersLeave(t *testing.T) {
	// A TLS target that accepts TCP and never answers the handshake.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	closedByClient := make(chan struct{})
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(hangGuard))
		// Read the ClientHello and wait: the read ends when the check
		// closes its side.
		buf := make([]byte, 4096)
		for {
			if _, err := conn.Read(buf); err != nil {
				if errors.Is(err, io.EOF) || strings.Contains(err.Error(), "reset") {
					close(closedByClient)
				}
				return
			}
		}
	}()

	checker := check.TLS{Address: ln.Addr().String(), InsecureSkipVerify: true}
	m, err := middleware.New(checker, middleware.Config{Mode: middleware.ModeProbe})
	if err != nil {
		t.Fatal(err)
	}
	srv := newLoopbackServer(t, m.Handler())
	defer srv.close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.url+"/check/", nil)
	if resp, err := srv.client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the request succeeded: %d", resp.StatusCode)
	}
	select {
	case <-closedByClient:
	case <-time.After(hangGuard):
		t.Fatal("the handshake went on after its callers left")
	}
}

func TestCallerDeadlineDoesNotEndACheckOthersWaitFor(t *testing.T) {
	release := make(chan struct{})
	slow := heldUntil(release)
	m, err := middleware.New(slow, middleware.Config{Mode: middleware.ModeProbe})
	if err != nil {
		t.Fatal(err)
	}
	joined := make(chan struct{}, 2)
	middleware.SetJoinHook(m, func() { joined <- struct{}{} })

	patient := make(chan middleware.Result, 1)
	go func() { patient <- m.Probe(context.Background()) }()
	<-joined
	hasty, cancel := context.WithCancel(context.Background())
	hastyDone := make(chan middleware.Result, 1)
	go func() { hastyDone <- m.Probe(hasty) }()
	<-joined
	cancel()
	if r := <-hastyDone; r.Err == nil || !errors.Is(r.Err, context.Canceled) {
		t.Errorf("the caller that left got %+v", r)
	}
	close(release)
	if r := <-patient; r.Err != nil {
		t.Errorf("the caller that stayed got %v; the check was cut short by the other", r.Err)
	}
}

// loopbackServer is an HTTP server on 127.0.0.1 whose close waits for every
// connection and handler, so goroutine counts return to baseline.
type loopbackServer struct {
	url    string
	client *http.Client
	close  func()
}

func newLoopbackServer(t *testing.T, h http.Handler) *loopbackServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: hangGuard}
	served := make(chan struct{})
	go func() { defer close(served); _ = hs.Serve(ln) }()
	transport := &http.Transport{}
	s := &loopbackServer{url: "http://" + ln.Addr().String(), client: &http.Client{Transport: transport}}
	var once sync.Once
	s.close = func() {
		once.Do(func() {
			transport.CloseIdleConnections()
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			_ = hs.Shutdown(ctx)
			<-served
		})
	}
	t.Cleanup(s.close)
	return s
}
