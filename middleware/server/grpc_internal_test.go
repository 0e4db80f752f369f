package server

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/tunnelprobe/tunnelprobe/internal/httpserve"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// A gRPC call that comes once draining has begun, when the lifecycle may
// already have ended its request's context, is answered UNAVAILABLE by
// grpcCalls itself: gRPC's handler transport would drop its status.
func TestCallsAfterDrainAreRefused(t *testing.T) {
	s, err := New(check.Func(func(context.Context) error { return nil }), Config{Monitor: middleware.Config{Mode: middleware.ModeProbe}})
	if err != nil {
		t.Fatal(err)
	}
	calls := s.newGRPC()
	defer calls.gs.Stop()
	calls.drain() // nothing in flight: returns at once
	// The request's context ended, as the lifecycle ends it at shutdown.
	late := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		cancel()
		calls.ServeHTTP(w, r.WithContext(ctx))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- httpserve.Serve(ctx, ln, late, httpserve.Options{UnencryptedHTTP2: true}) }()
	defer func() { stop(); <-served }()

	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	callCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 20 {
		_, err = healthpb.NewHealthClient(conn).Check(callCtx, &healthpb.HealthCheckRequest{})
		if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "shutting down") {
			t.Fatalf("a Check after drain: %v, want UNAVAILABLE, shutting down", err)
		}
	}
}
