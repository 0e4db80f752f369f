package grpchealth

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// Watch sends the state at once and then each change of it until the call
// ends. For an unknown name it sends SERVICE_UNKNOWN and waits for the
// call to end, as grpc-go's health server does. A Watch past
// Config.MaxWatches is answered RESOURCE_EXHAUSTED; one that Shutdown
// ends, ErrShutdown.
func (s *Server) Watch(req *healthpb.HealthCheckRequest, stream grpc.ServerStreamingServer[healthpb.HealthCheckResponse]) error {
	if s.down.Err() != nil {
		return ErrShutdown
	}
	release, err := s.admitWatch()
	if err != nil {
		return err
	}
	defer release()
	ctx, stop := s.untilShutdown(stream.Context())
	defer stop()
	if req.GetService() != Overall {
		if err := stream.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVICE_UNKNOWN}); err != nil {
			return err
		}
		<-ctx.Done()
		return s.ended(ctx)
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
		if ctx.Err() != nil {
			return s.ended(ctx)
		}
	}
}

// admitWatch takes a Watch's token, or refuses it when Config.MaxWatches
// are in flight: at once, since a client that waited would hold its
// stream all the same. Call release when the Watch ends.
func (s *Server) admitWatch() (release func(), err error) {
	if s.watches == nil {
		return func() {}, nil
	}
	select {
	case s.watches <- struct{}{}:
		return func() { <-s.watches }, nil
	default:
		return nil, status.Errorf(codes.ResourceExhausted,
			"%d Watch calls are in flight, as many as this health server serves at once: call Check, or Watch again later", cap(s.watches))
	}
}
