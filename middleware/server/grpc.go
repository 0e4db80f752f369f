package server

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/tunnelprobe/tunnelprobe/internal/httpserve"
	"github.com/tunnelprobe/tunnelprobe/middleware/grpchealth"
)

// grpcCalls is a gRPC server of the monitor's health service alone,
// served as an http.Handler (grpc.Server.ServeHTTP) by the project's one
// server lifecycle: the same timeouts and bounds as the HTTP endpoints.
// gRPC's own Serve would bring a second lifecycle. Its handler transport
// lacks a few of that Serve's features, none of which a health service
// uses.
//
// Shutdown needs an order of its own. The handler transport writes a
// call's status from a goroutine that stops as soon as the request's
// context ends, and the lifecycle ends those contexts first thing at
// shutdown: a call still running then would reach its client as an
// HTTP/2 answer without a gRPC status (code Unknown, "malformed header:
// missing HTTP content-type"). So drain, before the lifecycle shuts down,
// ends the calls through the service's Shutdown and waits for them to
// have answered; a call that comes later is answered UNAVAILABLE here,
// without gRPC.
type grpcCalls struct {
	gs     *grpc.Server
	health *grpchealth.Server

	mu       sync.Mutex
	draining bool
	inFlight int
	// drained is closed once draining with no call in flight.
	drained chan struct{}
}

// newGRPC returns the gRPC health service. It starts nothing.
func (s *Server) newGRPC() *grpcCalls {
	c := &grpcCalls{
		gs:      grpc.NewServer(),
		health:  grpchealth.New(s.mon, grpchealth.Config{MaxWatches: s.limits.watches}),
		drained: make(chan struct{}),
	}
	healthpb.RegisterHealthServer(c.gs, c.health)
	return c
}

func (c *grpcCalls) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !c.enter() {
		refuse(w)
		return
	}
	defer c.leave()
	c.gs.ServeHTTP(w, r)
}

// enter counts a call in, unless draining has begun.
func (c *grpcCalls) enter() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.draining {
		return false
	}
	c.inFlight++
	return true
}

func (c *grpcCalls) leave() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inFlight--; c.draining && c.inFlight == 0 {
		close(c.drained) // once: no call enters after draining began
	}
}

// drain ends the calls in flight with grpchealth.ErrShutdown and returns
// once they have answered, or after httpserve.ShutdownGrace, when the
// lifecycle cuts what is left (a check that does not heed its context).
// Call it once.
func (c *grpcCalls) drain() {
	c.mu.Lock()
	c.draining = true
	if c.inFlight == 0 {
		close(c.drained)
	}
	c.mu.Unlock()
	c.health.Shutdown()
	t := time.NewTimer(httpserve.ShutdownGrace)
	defer t.Stop()
	select {
	case <-c.drained:
	case <-t.C:
	}
}

// refuse answers a gRPC call with grpchealth.ErrShutdown, as a gRPC server
// answers a call it does not serve: a trailers-only response, its status
// in the headers.
func refuse(w http.ResponseWriter) {
	st := status.Convert(grpchealth.ErrShutdown)
	h := w.Header()
	h.Set("Content-Type", "application/grpc")
	h.Set("Grpc-Status", strconv.Itoa(int(st.Code())))
	h.Set("Grpc-Message", st.Message()) // plain ASCII: no percent-encoding needed
	w.WriteHeader(http.StatusOK)
}

// withGRPC sends gRPC requests (HTTP/2, content type application/grpc...)
// to calls and every other request to next, so that one listener serves
// both.
func withGRPC(calls http.Handler, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			calls.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
