package grpchealth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/grpchealth"
)

var passing = check.Func(func(context.Context) error { return nil })

// watch opens a Watch with ctx and returns it once its first message came.
func watch(t *testing.T, ctx context.Context, client healthpb.HealthClient) grpc.ServerStreamingClient[healthpb.HealthCheckResponse] {
	t.Helper()
	stream, err := client.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatalf("a Watch within the bound: %v", err)
	}
	return stream
}

// Past Config.MaxWatches a Watch is refused at once with
// RESOURCE_EXHAUSTED and a message saying why; one that ends gives its
// place to the next.
func TestWatchesPastTheBoundAreRefused(t *testing.T) {
	r := serveHealth(t, newMonitor(t, passing, middleware.Config{}), grpchealth.Config{MaxWatches: 2})
	first, leave := context.WithCancel(callCtx(t))
	defer leave()
	watch(t, first, r.client)
	watch(t, callCtx(t), r.client)

	stream, err := r.client.Watch(callCtx(t), &healthpb.HealthCheckRequest{})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), "2 Watch calls are in flight") {
		t.Fatalf("a third Watch: %v, want RESOURCE_EXHAUSTED saying 2 are in flight", err)
	}
	<-r.watchEnded // the refused one's handler

	leave()
	if err := <-r.watchEnded; status.Code(err) != codes.Canceled {
		t.Errorf("the Watch whose client left ended with %v, want CANCELLED", err)
	}
	watch(t, callCtx(t), r.client)
}

// Shutdown ends a Watch and a Check in flight with UNAVAILABLE and
// answers later calls so; nothing is then left for GracefulStop to wait
// for, which a Watch would otherwise hold up as long as its client stays.
func TestShutdownEndsCallsWithUnavailable(t *testing.T) {
	started := make(chan struct{}, 1)
	m := newMonitor(t, check.Func(func(ctx context.Context) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}), middleware.Config{})
	r := serveHealth(t, m, grpchealth.Config{MaxWatches: 4})
	stream := watch(t, callCtx(t), r.client)
	checked := make(chan error, 1)
	go func() {
		_, err := r.client.Check(callCtx(t), &healthpb.HealthCheckRequest{})
		checked <- err
	}()
	<-started

	r.health.Shutdown()
	unavailable := func(what string, err error) {
		t.Helper()
		if status.Code(err) != codes.Unavailable || status.Convert(err).Message() != status.Convert(grpchealth.ErrShutdown).Message() {
			t.Errorf("%s: %v, want %v", what, err, grpchealth.ErrShutdown)
		}
	}
	unavailable("the Check in flight", <-checked)
	_, err := stream.Recv()
	unavailable("the Watch in flight", err)
	_, err = r.client.Check(callCtx(t), &healthpb.HealthCheckRequest{})
	unavailable("a later Check", err)
	_, err = r.client.List(callCtx(t), &healthpb.HealthListRequest{})
	unavailable("a later List", err)
	if later, err := r.client.Watch(callCtx(t), &healthpb.HealthCheckRequest{}); err == nil {
		_, err = later.Recv()
		unavailable("a later Watch", err)
	}

	stopped := make(chan struct{})
	go func() {
		r.gs.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(hangGuard):
		t.Fatal("GracefulStop still waits for a call that Shutdown ended")
	}
}
