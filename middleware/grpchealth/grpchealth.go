package grpchealth

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// Overall is the service name of the tunnel's overall state, the only name
// the service knows.
const Overall = ""

// A Server is a monitor's grpc.health.v1.Health service.
type Server struct {
	// Embedded by value, as grpc-go asks: a method added to the service
	// answers UNIMPLEMENTED until this package implements it.
	healthpb.UnimplementedHealthServer
	mon *middleware.Monitor
}

var _ healthpb.HealthServer = (*Server)(nil)

// New returns the health service of m. It starts nothing.
func New(m *middleware.Monitor) *Server { return &Server{mon: m} }

// errUnknownService is grpc-go's health server's answer to a name it does
// not know.
var errUnknownService = status.Error(codes.NotFound, "unknown service")

// Check runs the check as the /check/ endpoint does, with ctx (the call's
// deadline) as its bound: SERVING when it passes, NOT_SERVING when it
// fails. A call that ends first gets its context's status (DEADLINE_EXCEEDED,
// CANCELLED).
func (s *Server) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if req.GetService() != Overall {
		return nil, errUnknownService
	}
	// The /check/ handler's own path: Probe with the request's context.
	// gRPC has already put the client's deadline (grpc-timeout) on ctx, and
	// Probe bounds the execution by MaxCheckTimeout as it does for /check/.
	checkCtx, cancel := atDeadline(ctx)
	defer cancel()
	res := s.mon.Probe(checkCtx)
	if err := ctx.Err(); err != nil {
		return nil, status.FromContextError(err).Err()
	}
	if res.Err != nil {
		return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_NOT_SERVING}, nil
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

// deadlineSlack is how close to its deadline a call's cancellation counts
// as that deadline (see atDeadline): far more than the transit of a
// cancellation and the timers' jitter, far less than any probe's timeout.
const deadlineSlack = 250 * time.Millisecond

// atDeadline returns ctx for the check, except that a cancellation within
// deadlineSlack of ctx's deadline waits for the deadline. A gRPC client
// runs the call's deadline on a timer of its own and cancels the call
// when it fires (RST_STREAM), racing the server's timer for the same
// deadline; a call ended that way must count as ended by its deadline,
// as /check/'s rule wants, not as a caller that went away.
func atDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return ctx, func() {}
	}
	checkCtx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	stop := context.AfterFunc(ctx, func() {
		if time.Until(deadline) > deadlineSlack {
			cancel() // the caller left well before its deadline
		}
	})
	return checkCtx, func() { stop(); cancel() }
}

// Watch sends the state at once and then each change of it until the call
// ends. For an unknown name it sends SERVICE_UNKNOWN and waits for the
// call to end, as grpc-go's health server does.
func (s *Server) Watch(req *healthpb.HealthCheckRequest, stream grpc.ServerStreamingServer[healthpb.HealthCheckResponse]) error {
	ctx := stream.Context()
	if req.GetService() != Overall {
		if err := stream.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVICE_UNKNOWN}); err != nil {
			return err
		}
		<-ctx.Done()
		return status.FromContextError(ctx.Err()).Err()
	}
	snap := s.mon.Snapshot()
	sent := healthpb.HealthCheckResponse_ServingStatus(-1)
	for {
		// A change of the state that keeps its serving status (a
		// second failure) is not sent again.
		if st := ServingStatus(snap); st != sent {
			if err := stream.Send(&healthpb.HealthCheckResponse{Status: st}); err != nil {
				return err
			}
			sent = st
		}
		snap = s.mon.WaitChange(ctx, snap)
		if err := ctx.Err(); err != nil {
			return status.FromContextError(err).Err()
		}
	}
}

// List answers the state under its one name, as Watch first sends it.
func (s *Server) List(context.Context, *healthpb.HealthListRequest) (*healthpb.HealthListResponse, error) {
	return &healthpb.HealthListResponse{Statuses: map[string]*healthpb.HealthCheckResponse{
		Overall: {Status: ServingStatus(s.mon.Snapshot())},
	}}, nil
}

// ServingStatus is the serving status of the state s: SERVING while it is
// healthy, NOT_SERVING while it is unhealthy or stale (its loop is late, so
// whatever it last said is not to be trusted), UNKNOWN before a result
// decided.
func ServingStatus(s middleware.Snapshot) healthpb.HealthCheckResponse_ServingStatus {
	switch {
	case s.Stale || s.Status == middleware.StatusUnhealthy:
		return healthpb.HealthCheckResponse_NOT_SERVING
	case s.Status == middleware.StatusHealthy:
		return healthpb.HealthCheckResponse_SERVING
	}
	return healthpb.HealthCheckResponse_UNKNOWN
}
