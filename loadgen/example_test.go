package loadgen_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/loadgen/rate"
	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// Run holds 20 connections to a sink for half a second, uploading 16
// Mbit/s between them, while a TCP check probes the same path.
func ExampleRun() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &sink.Server{}
	ctx, stopSink := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	defer func() { stopSink(); <-served }()

	addr := ln.Addr().String()
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		Target:   addr,
		Conns:    20,
		Duration: 500 * time.Millisecond,
		Rate:     16 * rate.Mbit,
		Probe:    middleware.TCPCheck{Address: addr},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("connections:", res.ConnsAchieved)
	fmt.Println("bytes agree with the sink:", res.BytesUp == srv.Stats().BytesIn)
	fmt.Println("probe failures:", res.ProbeFailures)
	// Output:
	// connections: 20
	// bytes agree with the sink: true
	// probe failures: 0
}

// Split divides a run over processes, each with its own limit of open
// files: the connections as evenly as they go, the rate in proportion, and
// the probe to the first process only.
func ExampleChildConfig_Split() {
	run := loadgen.ChildConfig{Target: "127.0.0.1:9000", Conns: 1000, Rate: 100 * rate.Mbit, Probe: "tcp://127.0.0.1:9000"}
	for _, part := range run.Split(3) {
		fmt.Printf("%d connections at %v, probe %q\n", part.Conns, part.Rate, part.Probe)
	}
	// Output:
	// 334 connections at 33400kbit, probe "tcp://127.0.0.1:9000"
	// 333 connections at 33300kbit, probe ""
	// 333 connections at 33300kbit, probe ""
}
