package loadgen_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/loadgen/rate"
	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
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
		Probe:    check.TCP{Address: addr},
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

// A Sweep runs the same run at several counts of connections, one level
// after the other, and reports each level as it ends.
func ExampleSweep() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	ctx, stopSink := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- (&sink.Server{}).Serve(ctx, ln) }()
	defer func() { stopSink(); <-served }()

	sweep := loadgen.Sweep{
		Config: loadgen.ChildConfig{Target: ln.Addr().String(), Duration: 300 * time.Millisecond},
		Levels: []int{5, 10},
		OnEnd: func(i int, r *loadgen.Result) error {
			if r == nil {
				return nil // the level failed before it measured anything
			}
			fmt.Printf("level %d: %d of %d connections\n", i+1, r.ConnsAchieved, r.ConnsRequested)
			return nil
		},
	}
	results, err := sweep.Run(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println("levels:", len(results), "every one opened:", loadgen.CheckOpened(results) == nil)
	// Output:
	// level 1: 5 of 5 connections
	// level 2: 10 of 10 connections
	// levels: 2 every one opened: true
}
