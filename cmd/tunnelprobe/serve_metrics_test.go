package main

import (
	"github.com/tunnelprobe/tunnelprobe/internal/testnet"
	"net/http"
	"strings"
	"testing"
)

func TestServeMetrics(t *testing.T) {
	t.Parallel()
	target := testnet.RefusedAddr(t)
	s := startServe(t, nil, "--metrics", "--mode", "probe", "--check", "tcp", "--target", target)
	for range 3 {
		if code, body := s.get(t, "/check/?timeout=5s"); code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "fail") {
			t.Fatalf("GET /check/: %d %q, want 503 fail", code, body)
		}
	}
	// The health handler still answers every other path.
	if code, body := s.get(t, "/"); code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "unhealthy") {
		t.Errorf("GET /: %d %q, want 503 unhealthy", code, body)
	}
	code, body := s.get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %q", code, body)
	}
	for _, line := range []string{
		`tunnelprobe_checks_total{result="fail",source="probe"} 3`,
		`tunnelprobe_check_duration_seconds_count{result="fail",source="probe"} 3`,
		`tunnelprobe_checks_in_flight{source="probe"} 0`,
		`tunnelprobe_check_coalesced_total 0`,
		`tunnelprobe_heals_total{result="ok"} 0`,
		`tunnelprobe_state{state="unhealthy"} 1`,
		`tunnelprobe_state_changes_total{to="unhealthy"} 1`,
		`tunnelprobe_consecutive_failures 3`,
		`tunnelprobe_mode{mode="probe"} 1`,
		"# TYPE go_goroutines gauge",
	} {
		if !strings.Contains(body, "\n"+line+"\n") {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	// The slog observer still runs next to the metrics.
	if !strings.Contains(s.stderr.String(), "health state changed") {
		t.Errorf("no state change logged; stderr:\n%s", s.stderr)
	}
}

func TestServeWithoutMetrics(t *testing.T) {
	t.Parallel()
	s := startServe(t, nil, "--mode", "probe", "--check", "tcp", "--target", testnet.RefusedAddr(t))
	// Without --metrics, /metrics is just another path of the status.
	if code, body := s.get(t, "/metrics"); code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "unknown") {
		t.Errorf("GET /metrics: %d %q, want the status (503 unknown)", code, body)
	}
}

func TestServeMetricsFromEnvironment(t *testing.T) {
	t.Parallel()
	s := startServe(t, map[string]string{"TUNNELPROBE_METRICS": "true"}, "--mode", "probe", "--check", "tcp", "--target", testnet.RefusedAddr(t))
	if code, body := s.get(t, "/metrics"); code != http.StatusOK || !strings.Contains(body, "tunnelprobe_mode") {
		t.Errorf("GET /metrics: %d, want 200 with the metrics", code)
	}
}
