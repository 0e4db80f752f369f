package prober

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
)

// serveGRPC serves gs on loopback until the test ends and returns its
// address.
func serveGRPC(t *testing.T, gs *grpc.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { _ = gs.Serve(ln) })
	t.Cleanup(func() { gs.Stop(); wg.Wait() })
	return ln.Addr().String()
}

// hangingHealth is a health service whose Check answers when its call
// ends, and tells who called.
type hangingHealth struct {
	healthpb.UnimplementedHealthServer
	userAgent chan string
}

func (h *hangingHealth) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	h.userAgent <- strings.Join(md.Get("user-agent"), ",")
	<-ctx.Done()
	return nil, ctx.Err()
}

// The grpc rules, against grpc-go's own health server: SERVING passes;
// NOT_SERVING, an unknown service (NOT_FOUND), a server without the health
// service (UNIMPLEMENTED), a refused port and a call past the timeout fail.
func TestGRPCRules(t *testing.T) {
	t.Parallel()
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("tunnel", healthpb.HealthCheckResponse_NOT_SERVING)
	gs := grpc.NewServer()
	healthpb.RegisterHealthServer(gs, hs)
	addr := serveGRPC(t, gs)
	bare := serveGRPC(t, grpc.NewServer())
	refused := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}()

	const timeout = 300 * time.Millisecond
	for _, tc := range []struct {
		name, addr, service string
		want                Outcome
		err                 string
	}{
		{"serving", addr, "", Success, ""},
		{"not serving", addr, "tunnel", Failure, `service unhealthy (responded with "NOT_SERVING")`},
		{"unknown service", addr, "other", Failure, "code = NotFound"},
		{"no health service", bare, "", Failure, "does not implement the grpc health protocol"},
		{"refused", refused, "", Failure, "timeout: failed to connect service"},
	} {
		r := GRPC(t.Context(), tc.addr, tc.service, timeout, nil)
		if r.Outcome != tc.want || (tc.err == "") != (r.Err == nil) || (r.Err != nil && !strings.Contains(r.Err.Error(), tc.err)) {
			t.Errorf("%s: %v, %v; want %v with %q", tc.name, r.Outcome, r.Err, tc.want, tc.err)
		}
	}

	// Refused connections are retried until the timeout, as a blocking
	// dial does; a call that does not answer fails at the timeout.
	if r := GRPC(t.Context(), refused, "", timeout, nil); r.Duration < timeout {
		t.Errorf("refused: gave up after %v, before the %v timeout", r.Duration, timeout)
	}
	hanging := &hangingHealth{userAgent: make(chan string, 1)}
	gs = grpc.NewServer()
	healthpb.RegisterHealthServer(gs, hanging)
	r := KubeletVersion(30).GRPC(t.Context(), serveGRPC(t, gs), "", timeout, nil)
	if r.Outcome != Failure || !strings.Contains(r.Err.Error(), "timeout: health rpc did not complete within 300ms") || r.Duration < timeout {
		t.Errorf("a Check that hangs: %v after %v, %v; want a failure at the timeout", r.Outcome, r.Duration, r.Err)
	}
	if ua := <-hanging.userAgent; !strings.HasPrefix(ua, "kube-probe/1.30 ") {
		t.Errorf("User-Agent %q, want kube-probe/1.30 first", ua)
	}
}

// A kubelet worker probes with grpc like any other handler; the errors
// name the fields.
func TestKubeletGRPCConfig(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(t0)
	c := newFakeContainer(clock, t0)
	for _, tc := range []struct {
		cfg  KubeletConfig
		want string
	}{
		{KubeletConfig{GRPC: "x"}, "grpc must be host:port"},
		{KubeletConfig{GRPC: "x:1", URL: "http://x/"}, "exactly one handler"},
		{KubeletConfig{TCPSocket: "x:1", GRPCService: "tunnel"}, "grpcService names the service of a grpc probe"},
		{KubeletConfig{GRPC: "x:1", Version: 22}, "came in 1.23"},
	} {
		if _, err := NewKubelet(tc.cfg, c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewKubelet(%+v) = %v, want an error with %q", tc.cfg, err, tc.want)
		}
	}

	hs := health.NewServer() // "" is SERVING from the start
	gs := grpc.NewServer()
	healthpb.RegisterHealthServer(gs, hs)
	results := make(chan Result, 1)
	k, err := NewKubelet(KubeletConfig{GRPC: serveGRPC(t, gs), Version: 23, Clock: clock, OnProbe: func(r Result) { results <- r }}, c)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	if r := <-results; r.Outcome != Success {
		t.Errorf("the worker's first grpc probe: %v, %v", r.Outcome, r.Err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}
