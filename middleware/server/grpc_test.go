package server_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/server"
)

// healthClient is a grpc-go health client of addr, closed at cleanup.
func healthClient(t *testing.T, addr string) healthpb.HealthClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return healthpb.NewHealthClient(conn)
}

func callCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func passingServer(t *testing.T, cfg server.Config) *server.Server {
	t.Helper()
	cfg.Monitor.Mode = middleware.ModeProbe
	srv, err := server.New(check.Func(func(context.Context) error { return nil }), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// With Config.GRPC one listener serves gRPC health and the HTTP endpoints;
// shutting down ends a Watch in flight, as it ends a long poll.
func TestGRPCOnTheHealthListener(t *testing.T) {
	addr, stop := serve(t, passingServer(t, server.Config{GRPC: true}))
	client := healthClient(t, addr)
	resp, err := client.Check(callCtx(t), &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check: %v, %v; want SERVING", resp.GetStatus(), err)
	}
	httpResp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(httpResp.Body)
	httpResp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	if httpResp.StatusCode != http.StatusOK || string(body) != "healthy\n" {
		t.Errorf("GET / beside gRPC: %d %q, want 200 healthy", httpResp.StatusCode, body)
	}

	stream, err := client.Watch(callCtx(t), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := stream.Recv(); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Watch: %v, %v; want SERVING", resp.GetStatus(), err)
	}
	stop() // returns once the Watch has ended
	if _, err := stream.Recv(); err == nil {
		t.Error("the Watch went on after shutdown")
	}
}

// ServeWithGRPC serves gRPC health alone on its own listener; without
// Config.GRPC the HTTP listener serves no gRPC.
func TestServeWithGRPC(t *testing.T) {
	httpAddr, grpcAddr, stop := serveWithGRPC(t, passingServer(t, server.Config{}))
	defer stop()

	resp, err := healthClient(t, grpcAddr).Check(callCtx(t), &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("Check on the gRPC listener: %v, %v; want SERVING", resp.GetStatus(), err)
	}
	ctx1, cancel1 := context.WithTimeout(context.Background(), time.Second)
	defer cancel1()
	if _, err := healthClient(t, httpAddr).Check(ctx1, &healthpb.HealthCheckRequest{}); status.Code(err) == codes.OK {
		t.Error("the HTTP listener answered gRPC without Config.GRPC")
	}
}
