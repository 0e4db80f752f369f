package grpchealth

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// Overall is the service name of the tunnel's overall state, the only name
// the service knows.
const Overall = ""

// Config adjusts a [Server]. The zero value serves every call gRPC lets
// in.
type Config struct {
	// MaxWatches bounds the Watch calls served at once. Each holds a
	// stream, its goroutines and their buffers for as long as its client
	// keeps it open, so a client opening them by the thousand would take
	// the process's memory. A Watch past the bound is answered
	// RESOURCE_EXHAUSTED at once, with a message that says so. Zero or
	// negative: no bound (package server sets one).
	MaxWatches int
}

// A Server is a monitor's grpc.health.v1.Health service.
type Server struct {
	// Embedded by value, as grpc-go asks: a method added to the service
	// answers UNIMPLEMENTED until this package implements it.
	healthpb.UnimplementedHealthServer
	mon *middleware.Monitor
	// watches holds a token per Watch served; nil without a bound.
	watches chan struct{}
	// down ends at Shutdown; every call's context ends with it.
	down     context.Context
	shutdown context.CancelFunc
}

var _ healthpb.HealthServer = (*Server)(nil)

// New returns the health service of m under cfg. It starts nothing.
func New(m *middleware.Monitor, cfg Config) *Server {
	s := &Server{mon: m}
	if cfg.MaxWatches > 0 {
		s.watches = make(chan struct{}, cfg.MaxWatches)
	}
	s.down, s.shutdown = context.WithCancel(context.Background())
	return s
}

// ErrShutdown is the status of every call after [Server.Shutdown], and of
// those it ends.
var ErrShutdown = status.Error(codes.Unavailable, "the health server is shutting down")

// Shutdown ends every call in flight with [ErrShutdown] (UNAVAILABLE) and
// answers every later one so: for a server about to stop. A Watch
// otherwise ends only when its client leaves, holding grpc.Server's
// GracefulStop up for as long, and a call that a server's Stop cuts
// reaches its client with no status at all. Call it before GracefulStop
// or Stop. It returns at once: the calls end in their own goroutines.
func (s *Server) Shutdown() { s.shutdown() }

// untilShutdown returns ctx, ended by Shutdown too.
func (s *Server) untilShutdown(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.down, cancel)
	return ctx, func() { stop(); cancel() }
}

// ended is the status of a call whose context (from untilShutdown) ended:
// ErrShutdown after Shutdown, else its context's (DEADLINE_EXCEEDED,
// CANCELLED).
func (s *Server) ended(ctx context.Context) error {
	if s.down.Err() != nil {
		return ErrShutdown
	}
	return status.FromContextError(ctx.Err()).Err()
}

// errUnknownService is grpc-go's health server's answer to a name it does
// not know.
var errUnknownService = status.Error(codes.NotFound, "unknown service")

// Check runs the check as the /check/ endpoint does, with ctx (the call's
// deadline) as its bound, or without a deadline the check timeout
// (Timeouts[0]), as a bare /check/ has: SERVING when it passes,
// NOT_SERVING when it fails. A call that ends first gets its context's status (DEADLINE_EXCEEDED,
// CANCELLED), or ErrShutdown.
func (s *Server) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if req.GetService() != Overall {
		return nil, errUnknownService
	}
	if s.down.Err() != nil {
		return nil, ErrShutdown
	}
	ctx, stop := s.untilShutdown(ctx)
	defer stop()
	// The /check/ handler's own path: Probe with the request's context.
	// gRPC has already put the client's deadline (grpc-timeout) on ctx; a
	// call without one gets the check timeout from Probe, as a bare
	// /check/ does.
	checkCtx, cancel := atDeadline(ctx)
	defer cancel()
	res := s.mon.Probe(checkCtx)
	if ctx.Err() != nil {
		return nil, s.ended(ctx)
	}
	if res.Err != nil && errors.Is(checkCtx.Err(), context.DeadlineExceeded) {
		// The call's deadline ended the check: its own timer on ctx may
		// not have fired yet, and the caller asked for an answer by then.
		return nil, status.FromContextError(context.DeadlineExceeded).Err()
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

// List answers the state under its one name, as Watch first sends it.
func (s *Server) List(context.Context, *healthpb.HealthListRequest) (*healthpb.HealthListResponse, error) {
	if s.down.Err() != nil {
		return nil, ErrShutdown
	}
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
