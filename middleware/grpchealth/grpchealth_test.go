package grpchealth_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/tunnelprobe/tunnelprobe/internal/testcert"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/grpchealth"
)

// hangGuard bounds every wait; it only fires when a test is broken.
const hangGuard = 10 * time.Second

var errDown = errors.New("tunnel down")

// A rig is m's health service on a grpc.Server of the test's own, as a
// user registers it, and a grpc-go health client of it.
type rig struct {
	client healthpb.HealthClient
	// handled receives the method of each unary call once its handler has
	// returned: all it did is done then.
	handled chan string
	// watchEnded receives what each Watch's handler returned.
	watchEnded chan error
	// health is the service, gs the server it is registered on.
	health *grpchealth.Server
	gs     *grpc.Server
	// stop stops the server and closes the client; cleanup calls it too.
	stop func()
}

func serveHealth(t *testing.T, m *middleware.Monitor, cfg grpchealth.Config) *rig {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{handled: make(chan string, 64), watchEnded: make(chan error, 64)}
	gs := grpc.NewServer(grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		defer func() { r.handled <- info.FullMethod }()
		return h(ctx, req)
	}), grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		err := h(srv, ss)
		r.watchEnded <- err
		return err
	}))
	r.health, r.gs = grpchealth.New(m, cfg), gs
	healthpb.RegisterHealthServer(gs, r.health)
	var served sync.WaitGroup
	served.Go(func() { _ = gs.Serve(ln) })
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	r.client = healthpb.NewHealthClient(conn)
	r.stop = sync.OnceFunc(func() {
		conn.Close()
		gs.Stop()
		served.Wait()
	})
	t.Cleanup(r.stop)
	return r
}

// waitHandled waits for the server to finish a unary call.
func (r *rig) waitHandled(t *testing.T) {
	t.Helper()
	select {
	case <-r.handled:
	case <-time.After(hangGuard):
		t.Fatal("the call's handler did not return")
	}
}

func newMonitor(t *testing.T, checker check.Checker, cfg middleware.Config) *middleware.Monitor {
	t.Helper()
	if cfg.Mode == middleware.ModeLoop {
		cfg.Mode = middleware.ModeProbe // no loop: the calls drive the checks
	}
	m, err := middleware.New(checker, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func callCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	return ctx
}

// serveTLS starts a TLS listener that completes handshakes until it is
// closed; close closes it and waits for its goroutine.
func serveTLS(t *testing.T, cfg *tls.Config) (addr string, closeIt func()) {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			_ = conn.SetDeadline(time.Now().Add(hangGuard))
			_ = conn.(*tls.Conn).Handshake()
			conn.Close()
		}
	})
	closeIt = sync.OnceFunc(func() { ln.Close(); wg.Wait() })
	t.Cleanup(closeIt)
	return ln.Addr().String(), closeIt
}

// Check runs the real check: a TLS handshake with a listener that works,
// then with the same address once it is closed.
func TestCheckWorkingAndDeadTarget(t *testing.T) {
	bundle := testcert.Must(t, "127.0.0.1")
	addr, closeTarget := serveTLS(t, bundle.ServerConfig())
	m := newMonitor(t, check.TLS{Address: addr, RootCAs: bundle.Pool}, middleware.Config{})
	client := serveHealth(t, m, grpchealth.Config{}).client

	resp, err := client.Check(callCtx(t), &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("working target: %v, %v; want SERVING", resp.GetStatus(), err)
	}
	if s := m.Snapshot(); s.Status != middleware.StatusHealthy || s.Last.Source != middleware.SourceProbe {
		t.Errorf("after SERVING: %v from %v, want healthy from a probe", s.Status, s.Last.Source)
	}

	closeTarget()
	resp, err = client.Check(callCtx(t), &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("dead target: %v, %v; want NOT_SERVING", resp.GetStatus(), err)
	}
	s := m.Snapshot()
	if s.Status != middleware.StatusUnhealthy || !strings.Contains(s.Last.Err.Error(), "refused") {
		t.Errorf("after NOT_SERVING: %v, %v; want unhealthy, refused", s.Status, s.Last.Err)
	}
}

func TestUnknownServiceName(t *testing.T) {
	m := newMonitor(t, check.Func(func(context.Context) error { return nil }), middleware.Config{})
	client := serveHealth(t, m, grpchealth.Config{}).client

	_, err := client.Check(callCtx(t), &healthpb.HealthCheckRequest{Service: "tunnel"})
	if status.Code(err) != codes.NotFound {
		t.Errorf("Check of an unknown name: %v, want NOT_FOUND", err)
	}
	if m.Snapshot().Last != nil {
		t.Error("Check of an unknown name ran the check")
	}

	ctx, cancel := context.WithCancel(callCtx(t))
	stream, err := client.Watch(ctx, &healthpb.HealthCheckRequest{Service: "tunnel"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVICE_UNKNOWN {
		t.Errorf("Watch of an unknown name: %v, %v; want SERVICE_UNKNOWN", resp.GetStatus(), err)
	}
	cancel()
	if _, err := stream.Recv(); status.Code(err) != codes.Canceled {
		t.Errorf("after cancel: %v, want CANCELLED", err)
	}

	list, err := client.List(callCtx(t), &healthpb.HealthListRequest{})
	if err != nil || len(list.GetStatuses()) != 1 || list.GetStatuses()[""].GetStatus() != healthpb.HealthCheckResponse_UNKNOWN {
		t.Errorf("List: %v, %v; want the one name, UNKNOWN before any check", list.GetStatuses(), err)
	}
}

// switchable is a check whose outcome the test sets.
type switchable struct{ up atomic.Bool }

func (s *switchable) Check(context.Context) error {
	if s.up.Load() {
		return nil
	}
	return errDown
}

// Watch sends the state as it changes, and only when its serving status
// does: SERVING, NOT_SERVING and back, driven by Check calls on a monitor
// whose clock never moves.
func TestWatchFollowsTheState(t *testing.T) {
	target := &switchable{}
	m := newMonitor(t, target, middleware.Config{Clock: clockwork.NewFakeClockAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))})
	client := serveHealth(t, m, grpchealth.Config{}).client
	stream, err := client.Watch(callCtx(t), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	recv := func(want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		resp, err := stream.Recv()
		if err != nil || resp.GetStatus() != want {
			t.Fatalf("Watch sent %v, %v; want %v", resp.GetStatus(), err, want)
		}
	}
	check := func(up bool, want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		target.up.Store(up)
		resp, err := client.Check(callCtx(t), &healthpb.HealthCheckRequest{})
		if err != nil || resp.GetStatus() != want {
			t.Fatalf("Check: %v, %v; want %v", resp.GetStatus(), err, want)
		}
	}

	recv(healthpb.HealthCheckResponse_UNKNOWN) // at once: no result yet
	check(true, healthpb.HealthCheckResponse_SERVING)
	recv(healthpb.HealthCheckResponse_SERVING)
	check(false, healthpb.HealthCheckResponse_NOT_SERVING)
	recv(healthpb.HealthCheckResponse_NOT_SERVING)
	// A second failure keeps the status: nothing is sent for it, so the
	// next message is the way back.
	check(false, healthpb.HealthCheckResponse_NOT_SERVING)
	check(true, healthpb.HealthCheckResponse_SERVING)
	recv(healthpb.HealthCheckResponse_SERVING)
}

// A caller that leaves cancels the check it started, which returns before
// the call's handler does: once the server stops, nothing is left running.
func TestCancelledCheckLeavesNothingRunning(t *testing.T) {
	started := make(chan struct{})
	checkErr := make(chan error, 1)
	m := newMonitor(t, check.Func(func(ctx context.Context) error {
		close(started)
		<-ctx.Done() // a dial that hangs until cancelled
		checkErr <- ctx.Err()
		return ctx.Err()
	}), middleware.Config{})
	r := serveHealth(t, m, grpchealth.Config{})
	client := r.client

	ctx, cancel := context.WithCancel(callCtx(t))
	called := make(chan error, 1)
	go func() {
		_, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
		called <- err
	}()
	<-started
	cancel()
	if err := <-called; status.Code(err) != codes.Canceled {
		t.Errorf("cancelled call: %v, want CANCELLED", err)
	}
	select {
	case err := <-checkErr:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the check's context ended with %v, want context.Canceled", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("the check's context was not cancelled")
	}
	r.waitHandled(t)
	r.stop()
	goleak.VerifyNone(t)
	// Its callers left: the check says nothing about the tunnel.
	if s := m.Snapshot(); s.Last != nil {
		t.Errorf("a check whose caller left was recorded: %v", s.Last.Err)
	}
}

// The call's deadline is the check's timeout, and /check/'s rule decides
// whether its failure is recorded: a deadline shorter than the monitor's
// check timeout fails the call alone; a longer one records a failure.
func TestDeadlineIsTheTimeout(t *testing.T) {
	// When the check was stopped, compared with the caller's deadline: how
	// long it ran says less, since on a busy machine it may start late.
	stopped := make(chan time.Time, 2)
	m := newMonitor(t, check.Func(func(ctx context.Context) error {
		<-ctx.Done()
		stopped <- time.Now()
		return ctx.Err()
	}), middleware.Config{Timeouts: []time.Duration{300 * time.Millisecond}})
	r := serveHealth(t, m, grpchealth.Config{})

	for _, tc := range []struct {
		deadline time.Duration
		recorded bool
	}{{100 * time.Millisecond, false}, {500 * time.Millisecond, true}} {
		ctx, cancel := context.WithTimeout(context.Background(), tc.deadline)
		callers, _ := ctx.Deadline()
		_, err := r.client.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		r.waitHandled(t)
		if status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("deadline %v: %v, want DEADLINE_EXCEEDED", tc.deadline, err)
		}
		// gRPC sends the time left, so the server's deadline is the
		// caller's plus the request's way there.
		if at := <-stopped; at.Before(callers.Add(-5*time.Millisecond)) || at.After(callers.Add(hangGuard/2)) {
			t.Errorf("deadline %v: the check was stopped %v from the caller's deadline", tc.deadline, at.Sub(callers))
		}
		s := m.Snapshot()
		switch {
		case tc.recorded && (s.Status != middleware.StatusUnhealthy || !strings.Contains(s.Last.Err.Error(), "timed out at the caller's deadline")):
			t.Errorf("deadline %v: %v, %v; want a recorded failure at the caller's deadline", tc.deadline, s.Status, s.Last)
		case !tc.recorded && (s.Last != nil || s.ShortDeadlines != 1):
			t.Errorf("deadline %v: recorded %v, %d short deadline(s); want nothing recorded, 1 short", tc.deadline, s.Last, s.ShortDeadlines)
		}
	}
}

// A call without a deadline takes the check timeout (Timeouts[0]), as a
// bare /check/ does, not the most a check may take (MaxCheckTimeout).
func TestNoDeadlineTakesTheCheckTimeout(t *testing.T) {
	stopped := make(chan time.Time, 1)
	m := newMonitor(t, check.Func(func(ctx context.Context) error {
		<-ctx.Done()
		stopped <- time.Now()
		return ctx.Err()
	}), middleware.Config{Timeouts: []time.Duration{300 * time.Millisecond}, MaxCheckTimeout: hangGuard})
	r := serveHealth(t, m, grpchealth.Config{})

	called := time.Now()
	resp, err := r.client.Check(context.Background(), &healthpb.HealthCheckRequest{})
	r.waitHandled(t)
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("Check: %v, %v; want NOT_SERVING", resp.GetStatus(), err)
	}
	// From the call, not the check's start, which a busy machine delays.
	if d := (<-stopped).Sub(called); d < 300*time.Millisecond || d > hangGuard/2 {
		t.Errorf("the check was stopped %v after the call, want the check timeout, 300ms", d)
	}
	if s := m.Snapshot(); s.Status != middleware.StatusUnhealthy {
		t.Errorf("%v, %v; want the check timeout's failure recorded", s.Status, s.Last)
	}
}
