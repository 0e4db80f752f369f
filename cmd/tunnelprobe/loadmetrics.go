package main

import (
	"flag"
	"fmt"
	"io"
	"net"

	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
	loadprom "github.com/tunnelprobe/tunnelprobe/loadgen/prom"
)

// loadMetrics is load's --metrics ADDR: the live counters of the run as
// Prometheus metrics (package loadgen/prom), fed by every second of the
// series (summed over the processes with --procs) and served at /metrics on
// ADDR with the Go runtime's and the process's.
type loadMetrics struct {
	addr   string
	served net.Addr // where start listens

	metrics *loadprom.Metrics
}

// registerLoadMetrics registers --metrics on fs.
func registerLoadMetrics(fs *flag.FlagSet) *loadMetrics {
	m := &loadMetrics{}
	fs.Var(cliflag.Addr(&m.addr, "", true), "metrics", "serve the live counters as Prometheus metrics at /metrics on this `address`, e.g. :9100; empty for none")
	return m
}

// observe returns the OnSecond callback of a level of conns connections:
// next, and the metrics too when --metrics is on. m may be nil.
func (m *loadMetrics) observe(conns int, next func(loadgen.Second)) func(loadgen.Second) {
	if m == nil || m.metrics == nil {
		return next
	}
	return m.metrics.Level(conns, next)
}

// start serves the metrics on --metrics' address, if any, and prints where
// to stderr. The returned stop shuts the server down and waits for it; call
// it once, always.
func (m *loadMetrics) start(stderr io.Writer) (stop func(), err error) {
	if m == nil || m.addr == "" {
		return func() {}, nil
	}
	e, err := loadprom.Listen(m.addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics: %w", err)
	}
	m.served, m.metrics = e.Addr(), e.Metrics
	fmt.Fprintf(stderr, "tunnelprobe load: metrics on http://%s/metrics\n", e.Addr())
	return func() {
		if err := e.Close(); err != nil {
			fmt.Fprintf(stderr, "tunnelprobe load: metrics: %v\n", err)
		}
	}, nil
}
