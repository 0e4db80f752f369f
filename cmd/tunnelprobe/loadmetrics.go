package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tunnelprobe/tunnelprobe/internal/httpserve"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

// loadMetrics is load's --metrics ADDR: the live counters of the run as
// Prometheus metrics, fed by every second of the series (summed over the
// processes with --procs) and served at /metrics on ADDR.
type loadMetrics struct {
	addr   string
	served net.Addr // where start listens

	reg           *prometheus.Registry
	bytes         *prometheus.CounterVec
	connects      prometheus.Counter
	connectErrors prometheus.Counter
	disruptions   prometheus.Counter
	probes        prometheus.Counter
	probeFailures prometheus.Counter
	cpu           prometheus.Counter
	retransmits   prometheus.Counter
	resets        prometheus.Counter
	open          prometheus.Gauge
	target        prometheus.Gauge
	probeMax      prometheus.Gauge
	rss           prometheus.Gauge
	fds           prometheus.Gauge
	threads       prometheus.Gauge
}

// registerLoadMetrics registers --metrics on fs.
func registerLoadMetrics(fs *flag.FlagSet) *loadMetrics {
	m := &loadMetrics{}
	fs.Var(newAddr(&m.addr, "", true), "metrics", "serve the live counters as Prometheus metrics at /metrics on this `address`, e.g. :9100; empty for none")
	return m
}

// init creates m's metrics in a registry of their own.
func (m *loadMetrics) init() {
	m.reg = prometheus.NewRegistry()
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Namespace: "tunnelprobe", Subsystem: "load", Name: name, Help: help})
		m.reg.MustRegister(c)
		return c
	}
	gauge := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "tunnelprobe", Subsystem: "load", Name: name, Help: help})
		m.reg.MustRegister(g)
		return g
	}
	m.bytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "tunnelprobe", Subsystem: "load", Name: "bytes_total",
		Help: "Payload bytes carried, by direction (up: to the sink, down: from it).",
	}, []string{"direction"})
	m.reg.MustRegister(m.bytes, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.connects = counter("connects_total", "Connections opened.")
	m.connectErrors = counter("connect_errors_total", "Dials that failed.")
	m.disruptions = counter("disruptions_total", "Established connections that broke.")
	m.probes = counter("probes_total", "Health probes run under the load.")
	m.probeFailures = counter("probe_failures_total", "Health probes that failed or timed out.")
	m.cpu = counter("cpu_seconds_total", "CPU time of the load generator's processes.")
	m.retransmits = counter("tcp_retransmits_total", "TCP segments the machine retransmitted during the run.")
	m.resets = counter("tcp_resets_total", "TCP resets the machine sent during the run.")
	m.open = gauge("connections_open", "Connections open at the end of the last second.")
	m.target = gauge("connections_target", "Connections the run (or the sweep's current level) holds open.")
	m.probeMax = gauge("probe_max_seconds", "The slowest passing probe of the last second; 0 when none passed.")
	m.rss = gauge("resident_memory_bytes", "Resident memory of the load generator's processes.")
	m.fds = gauge("open_fds", "Open file descriptors of the load generator's processes.")
	m.threads = gauge("threads", "Threads of the load generator's processes.")
	for _, d := range []string{"up", "down"} {
		m.bytes.WithLabelValues(d)
	}
}

// add folds one second of the series into the metrics.
func (m *loadMetrics) add(s loadgen.Second) {
	m.bytes.WithLabelValues("up").Add(float64(s.BytesUp))
	m.bytes.WithLabelValues("down").Add(float64(s.BytesDown))
	m.connects.Add(float64(s.Connects))
	m.connectErrors.Add(float64(s.ConnectErrors))
	m.disruptions.Add(float64(s.Disruptions))
	m.probes.Add(float64(s.Probes))
	m.probeFailures.Add(float64(s.ProbeFailures))
	m.cpu.Add(s.CPUSeconds)
	m.retransmits.Add(float64(s.TCPRetransmits))
	m.resets.Add(float64(s.TCPResets))
	m.open.Set(float64(s.Open))
	m.probeMax.Set(s.ProbeMaxMS / 1000)
	m.rss.Set(float64(s.RSSBytes))
	m.fds.Set(float64(s.FDs))
	m.threads.Set(float64(s.Threads))
}

// observe returns the OnSecond callback of a level of conns connections:
// next, and the metrics too when --metrics is on. m may be nil.
func (m *loadMetrics) observe(conns int, next func(loadgen.Second)) func(loadgen.Second) {
	if m == nil || m.reg == nil {
		return next
	}
	m.target.Set(float64(conns))
	return func(s loadgen.Second) {
		m.add(s)
		next(s)
	}
}

// start serves the metrics on --metrics' address, if any, and prints where
// to stderr. The returned stop shuts the server down and waits for it; call
// it once, always.
func (m *loadMetrics) start(stderr io.Writer) (stop func(), err error) {
	if m == nil || m.addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", m.addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics: %w", err)
	}
	m.served = ln.Addr()
	m.init()
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{MaxRequestsInFlight: 2}))
	fmt.Fprintf(stderr, "tunnelprobe load: metrics on http://%s/metrics\n", ln.Addr())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := httpserve.Serve(ctx, ln, mux, httpserve.Options{}); err != nil {
			fmt.Fprintf(stderr, "tunnelprobe load: metrics: %v\n", err)
		}
	}()
	return func() {
		cancel()
		<-done
	}, nil
}
