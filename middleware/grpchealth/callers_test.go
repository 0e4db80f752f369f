package grpchealth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/grpchealth"
)

// A Check that a caller cancels must not hide another Check's failure: the
// caller whose deadline (longer than the check timeout) ended while the
// other still waited for the same check records its failure, as it would
// alone.
func TestCancelledCallDoesNotHideAnotherCallsFailure(t *testing.T) {
	started := make(chan struct{}, 2)
	m := newMonitor(t, check.Func(func(ctx context.Context) error {
		started <- struct{}{}
		<-ctx.Done() // a dial that hangs until cancelled
		return ctx.Err()
	}), middleware.Config{Timeouts: []time.Duration{200 * time.Millisecond}, FailureThreshold: 1})
	r := serveHealth(t, m, grpchealth.Config{})

	hangUp, cancel := context.WithCancel(callCtx(t))
	defer cancel()
	first := make(chan error, 1)
	go func() {
		_, err := r.client.Check(hangUp, &healthpb.HealthCheckRequest{})
		first <- err
	}()
	<-started
	ctx, cancelSecond := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancelSecond()
	// Its deadline and the check's end race: either answer is a failure.
	resp, err := r.client.Check(ctx, &healthpb.HealthCheckRequest{})
	if status.Code(err) != codes.DeadlineExceeded && resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("the call whose deadline ended: %v, %v; want DEADLINE_EXCEEDED or NOT_SERVING", resp, err)
	}
	r.waitHandled(t)
	s := m.Snapshot()
	if s.Status != middleware.StatusUnhealthy || s.Last == nil || !strings.Contains(s.Last.Err.Error(), "timed out at the caller's deadline") {
		t.Errorf("after the second call's deadline: %v, last %v; want its failure recorded", s.Status, s.Last)
	}
	cancel()
	if err := <-first; status.Code(err) != codes.Canceled {
		t.Errorf("the cancelled call: %v, want CANCELLED", err)
	}
	r.waitHandled(t)
	if s := m.Snapshot(); s.ConsecutiveFailures != 1 {
		t.Errorf("%d failures recorded, want 1: the cancelled call recorded one too", s.ConsecutiveFailures)
	}
}
