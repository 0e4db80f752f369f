package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

// loadMetricNames are the names docs/deployment.md documents for load --metrics.
var loadMetricNames = []string{
	"tunnelprobe_load_bytes_total", "tunnelprobe_load_connects_total", "tunnelprobe_load_connect_errors_total",
	"tunnelprobe_load_disruptions_total", "tunnelprobe_load_probes_total", "tunnelprobe_load_probe_failures_total",
	"tunnelprobe_load_cpu_seconds_total", "tunnelprobe_load_tcp_retransmits_total", "tunnelprobe_load_tcp_resets_total",
	"tunnelprobe_load_connections_open", "tunnelprobe_load_connections_target", "tunnelprobe_load_probe_max_seconds",
	"tunnelprobe_load_resident_memory_bytes", "tunnelprobe_load_open_fds", "tunnelprobe_load_threads",
}

func TestLoadMetrics(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	m := registerLoadMetrics(fs)
	if err := fs.Parse([]string{"--metrics", "127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	stop, err := m.start(&stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if !strings.Contains(stderr.String(), "metrics on http://"+m.served.String()+"/metrics") {
		t.Errorf("stderr does not say where: %q", &stderr)
	}

	var seen []loadgen.Second
	on := m.observe(300, func(s loadgen.Second) { seen = append(seen, s) })
	on(loadgen.Second{T: 1, BytesUp: 1000, Open: 100, Connects: 100})
	on(loadgen.Second{T: 2, BytesUp: 500, Open: 150, Connects: 60})
	if len(seen) != 2 {
		t.Errorf("next got %d seconds, want 2", len(seen))
	}

	resp, err := http.Get("http://" + m.served.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	for _, name := range loadMetricNames {
		if !strings.Contains(string(body), "\n# TYPE "+name+" ") {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	for _, line := range []string{`tunnelprobe_load_bytes_total{direction="up"} 1500`, "tunnelprobe_load_connections_target 300", "tunnelprobe_load_connects_total 160"} {
		if !strings.Contains(string(body), "\n"+line+"\n") {
			t.Errorf("/metrics lacks %q", line)
		}
	}
}

func TestLoadMetricsOff(t *testing.T) {
	t.Parallel()
	var m *loadMetrics
	stop, err := m.start(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	called := false
	m.observe(10, func(loadgen.Second) { called = true })(loadgen.Second{})
	if !called {
		t.Error("observe without --metrics dropped the callback")
	}
	off := &loadMetrics{}
	if stop, err := off.start(io.Discard); err != nil {
		t.Fatal(err)
	} else {
		stop()
	}
}

func TestLoadMetricsListenError(t *testing.T) {
	t.Parallel()
	m := &loadMetrics{addr: "256.0.0.1:0"}
	if _, err := m.start(io.Discard); err == nil || !strings.Contains(err.Error(), "--metrics") {
		t.Errorf("err %v, want one naming --metrics", err)
	}
}

// TestLoadCommandMetrics runs load --metrics and scrapes it mid-run.
func TestLoadCommandMetrics(t *testing.T) {
	t.Parallel()
	addr, _ := testSink(t, false)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stderr := newWatchBuffer()
	done := make(chan int, 1)
	go func() {
		done <- loadCommand(ctx, []string{"--target", addr, "--conns", "5", "--duration", "1m", "--metrics", "127.0.0.1:0"},
			noEnv, io.Discard, stderr)
	}()
	where := stderr.waitFor(t, `metrics on (http://\S+/metrics)`)[1]
	// The progress line of a second comes after the metrics took it in.
	// A late sampler closes the seconds it missed one after another, each
	// with the connections open at its wake-up and a share of the
	// connects, so the scrape may land between two of them: scrape until
	// the last has come, for 10 s at most.
	stderr.waitFor(t, `open 5/5`)
	var body []byte
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := http.Get(where)
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), "\ntunnelprobe_load_connects_total 5\n") || time.Now().After(deadline) {
			break
		}
	}
	http.DefaultClient.CloseIdleConnections()
	cancel() // stop the run: an interrupt
	if code := <-done; code != cliflag.ExitInterrupted {
		t.Errorf("exit %d after an interrupt, want %d; stderr:\n%s", code, cliflag.ExitInterrupted, stderr)
	}
	for _, line := range []string{"tunnelprobe_load_connections_target 5", "tunnelprobe_load_connections_open 5", "tunnelprobe_load_connects_total 5"} {
		if !strings.Contains(string(body), "\n"+line+"\n") {
			t.Errorf("/metrics lacks %q:\n%s", line, body)
		}
	}
	// The server is gone with the run.
	if _, err := http.Get(where); err == nil {
		t.Error("the metrics server outlived the run")
	}
}

func TestLoadCommandMerge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var files []string
	for i, lat := range []time.Duration{time.Millisecond, 2 * time.Millisecond} {
		r := resultOf([]event{{t: 5, kind: evConnect, latency: lat}}, time.Unix(5, 0), 5, 5, 1)
		file := filepath.Join(dir, fmt.Sprintf("r%d.json", i))
		if err := (loadgen.Report{Result: &r}).WriteFiles(file, ""); err != nil {
			t.Fatal(err)
		}
		files = append(files, file)
	}
	var stdout, stderr bytes.Buffer
	if code := loadCommand(t.Context(), append([]string{"merge"}, files...), noEnv, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, &stderr)
	}
	if !strings.Contains(stdout.String(), "merged 2 results") || !strings.Contains(stdout.String(), "2 requested") {
		t.Errorf("stdout:\n%s", &stdout)
	}
}
