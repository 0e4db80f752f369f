package grpchealth_test

import (
	"context"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/grpchealth"
)

// The tunnel's health on a gRPC server of your own, beside your services:
// a grpc probe (the kubelet's, grpc_health_probe) calls Check, which runs
// the check as /check/ does.
func ExampleNew() {
	tunnel := check.Func(func(context.Context) error { return nil }) // check.TLS{Address: "cloudflare.com"} in earnest
	m, err := middleware.New(tunnel, middleware.Config{Mode: middleware.ModeProbe})
	if err != nil {
		panic(err)
	}
	// In probe mode Run only waits; in loop mode it drives the checks.
	ctx, stopMonitor := context.WithCancel(context.Background())
	monitorDone := make(chan error, 1)
	go func() { monitorDone <- m.Run(ctx) }()

	gs := grpc.NewServer()
	healthpb.RegisterHealthServer(gs, grpchealth.New(m, grpchealth.Config{}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	served := make(chan error, 1)
	go func() { served <- gs.Serve(ln) }()

	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		panic(err)
	}
	resp, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{Service: grpchealth.Overall})
	fmt.Println(resp.GetStatus(), err)
	_, err = healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{Service: "per-target"})
	fmt.Println(err)

	conn.Close()
	gs.Stop()
	<-served
	stopMonitor()
	<-monitorDone
	// Output:
	// SERVING <nil>
	// rpc error: code = NotFound desc = unknown service
}
