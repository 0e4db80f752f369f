package prom

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

// Metrics are a load run's live counters; create them with [NewMetrics].
type Metrics struct {
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

// NewMetrics returns the metrics, registered with reg. The error is reg's,
// e.g. when metrics of the same names are registered already.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	var all []prometheus.Collector
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Namespace: "tunnelprobe", Subsystem: "load", Name: name, Help: help})
		all = append(all, c)
		return c
	}
	gauge := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "tunnelprobe", Subsystem: "load", Name: name, Help: help})
		all = append(all, g)
		return g
	}
	m := &Metrics{
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tunnelprobe", Subsystem: "load", Name: "bytes_total",
			Help: "Payload bytes carried, by direction (up: to the sink, down: from it).",
		}, []string{"direction"}),
		connects:      counter("connects_total", "Connections opened."),
		connectErrors: counter("connect_errors_total", "Dials that failed."),
		disruptions:   counter("disruptions_total", "Established connections that broke."),
		probes:        counter("probes_total", "Health probes run under the load."),
		probeFailures: counter("probe_failures_total", "Health probes that failed or timed out."),
		cpu:           counter("cpu_seconds_total", "CPU time of the load generator's processes."),
		retransmits:   counter("tcp_retransmits_total", "TCP segments the machine retransmitted during the run."),
		resets:        counter("tcp_resets_total", "TCP resets the machine sent during the run."),
		open:          gauge("connections_open", "Connections open at the end of the last second."),
		target:        gauge("connections_target", "Connections the run (or the sweep's current level) holds open."),
		probeMax:      gauge("probe_max_seconds", "The slowest passing probe of the last second; 0 when none passed."),
		rss:           gauge("resident_memory_bytes", "Resident memory of the load generator's processes."),
		fds:           gauge("open_fds", "Open file descriptors of the load generator's processes."),
		threads:       gauge("threads", "Threads of the load generator's processes."),
	}
	// Both directions exist from the start, so that rate() works at once.
	for _, d := range []string{"up", "down"} {
		m.bytes.WithLabelValues(d)
	}
	for _, c := range append(all, m.bytes) {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("prom: register the load's metrics: %w", err)
		}
	}
	return m, nil
}

// SetTarget sets the connections the run (or a sweep's level) holds.
func (m *Metrics) SetTarget(conns int) { m.target.Set(float64(conns)) }

// Level sets the target to conns, a run's (or a sweep level's)
// connections, and returns the OnSecond of that run: each second goes to
// Observe, then to next when it is not nil.
func (m *Metrics) Level(conns int, next func(loadgen.Second)) func(loadgen.Second) {
	m.SetTarget(conns)
	return func(s loadgen.Second) {
		m.Observe(s)
		if next != nil {
			next(s)
		}
	}
}

// Observe folds one second of the series into the metrics; it has the
// shape of loadgen.Config.OnSecond.
func (m *Metrics) Observe(s loadgen.Second) {
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
