package prom

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

// names are the metric names doc.go lists.
var names = []string{
	"tunnelprobe_load_bytes_total", "tunnelprobe_load_connects_total", "tunnelprobe_load_connect_errors_total",
	"tunnelprobe_load_disruptions_total", "tunnelprobe_load_probes_total", "tunnelprobe_load_probe_failures_total",
	"tunnelprobe_load_cpu_seconds_total", "tunnelprobe_load_tcp_retransmits_total", "tunnelprobe_load_tcp_resets_total",
	"tunnelprobe_load_connections_open", "tunnelprobe_load_connections_target", "tunnelprobe_load_probe_max_seconds",
	"tunnelprobe_load_resident_memory_bytes", "tunnelprobe_load_open_fds", "tunnelprobe_load_threads",
}

func TestMetricsFollowTheSeries(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.SetTarget(300)
	m.Observe(loadgen.Second{T: 1, BytesUp: 1000, BytesDown: 10, Open: 100, Connects: 100, ConnectErrors: 2, Probes: 1, ProbeMaxMS: 1500, RSSBytes: 1 << 20, TCPRetransmits: 7})
	m.Observe(loadgen.Second{T: 2, BytesUp: 500, Open: 150, Connects: 60, Disruptions: 10, Probes: 1, ProbeFailures: 1, CPUSeconds: 0.5, FDs: 160, Threads: 9})
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"bytes up", testutil.ToFloat64(m.bytes.WithLabelValues("up")), 1500},
		{"bytes down", testutil.ToFloat64(m.bytes.WithLabelValues("down")), 10},
		{"connects", testutil.ToFloat64(m.connects), 160},
		{"connect errors", testutil.ToFloat64(m.connectErrors), 2},
		{"disruptions", testutil.ToFloat64(m.disruptions), 10},
		{"probes", testutil.ToFloat64(m.probes), 2},
		{"probe failures", testutil.ToFloat64(m.probeFailures), 1},
		{"open", testutil.ToFloat64(m.open), 150},
		{"target", testutil.ToFloat64(m.target), 300},
		{"probe max", testutil.ToFloat64(m.probeMax), 0}, // none passed in the last second
		{"retransmits", testutil.ToFloat64(m.retransmits), 7},
		{"cpu", testutil.ToFloat64(m.cpu), 0.5},
		{"fds", testutil.ToFloat64(m.fds), 160},
		{"threads", testutil.ToFloat64(m.threads), 9},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	exposed := map[string]bool{}
	for _, mf := range mfs {
		exposed[mf.GetName()] = true
	}
	for _, n := range names {
		if !exposed[n] {
			t.Errorf("%s is documented but not exposed", n)
		}
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	if _, err := NewMetrics(reg); err == nil || !strings.Contains(err.Error(), "register") {
		t.Errorf("registering twice: %v, want an error", err)
	}
}
