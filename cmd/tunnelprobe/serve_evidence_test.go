package main

import (
	"bytes"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestServeEvidenceFromInterface: with --evidence-iface, the interface's
// counters decide /check/. Loopback carries this test's own requests, so
// once two samples a second apart are in, /check/ passes on that evidence
// although its target refuses every dial; the metrics show the counters
// and the decision.
func TestServeEvidenceFromInterface(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("interface counters are read from Linux's /proc")
	}
	s := startServe(t, nil, "--mode", "probe", "--check", "tcp", "--target", refusedTarget(t),
		"--evidence-iface", "lo", "--metrics")
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := s.get(t, "/check/")
		if code == http.StatusOK {
			if !strings.HasPrefix(body, "pass (traffic evidence: received ") {
				t.Errorf("GET /check/: %q, want a pass on traffic evidence", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no evidence decision within 10 s; last answer %d %q", code, body)
		}
	}
	_, metrics := s.get(t, "/metrics")
	for _, want := range []string{"\ntunnelprobe_tunnel_received_packets_total ", "\ntunnelprobe_evidence_decisions_total{result=\"pass\",source=\"probe\"} "} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", strings.TrimSpace(want))
		}
	}
}

func TestServeEvidenceBadFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"--evidence-iface", "wg0", "--evidence-wireguard", "wg0"}, "--evidence-iface and --evidence-wireguard exclude each other"},
		{[]string{"--evidence-window", "0s"}, "--evidence-window"},
	} {
		var stdout, stderr bytes.Buffer
		if code := serveCommand(t.Context(), tc.args, noEnv, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.mention) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s", tc.args, code, stderr.String(), tc.mention)
		}
	}
}
