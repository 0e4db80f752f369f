package server

import (
	"net/http"
	"strings"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/tunnelprobe/tunnelprobe/middleware/grpchealth"
)

// newGRPC returns a gRPC server of the monitor's health service alone, to
// be served as an http.Handler (grpc.Server.ServeHTTP) by the project's
// one server lifecycle: the same timeouts, and at shutdown the same
// cancellation of calls in flight (a Watch, a Check) as the HTTP
// endpoints. gRPC's own Serve would bring a second lifecycle. Its
// handler transport lacks a few of that Serve's features, none of which
// a health service uses. It starts nothing.
func (s *Server) newGRPC() *grpc.Server {
	gs := grpc.NewServer()
	healthpb.RegisterHealthServer(gs, grpchealth.New(s.mon, grpchealth.Config{}))
	return gs
}

// withGRPC sends gRPC requests (HTTP/2, content type application/grpc...)
// to gs and every other request to next, so that one listener serves both.
func withGRPC(gs *grpc.Server, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			gs.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
