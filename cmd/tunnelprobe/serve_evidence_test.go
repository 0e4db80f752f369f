package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/netnstest"
	"github.com/tunnelprobe/tunnelprobe/internal/testnet"
)

// TestServeLightProbe: with --light-probe, an answer to the probe passes
// /check/ although the check's own target refuses every dial; once the
// probe's target stops answering (its resets prove nothing), /check/ fails
// a window later, still without a dial. The metrics name the probe and
// count its answers; the JSON says which probe is in use. The probe's
// target is a far namespace's: one of this host's own addresses is refused.
func TestServeLightProbe(t *testing.T) {
	f := newFarSide(t)
	stop := f.farListener(t, "10.77.0.2:443")
	s := f.serve(t, "--check", "tcp", "--target", "10.77.0.2:9", "--light-probe", "tcp://10.77.0.2:443", "--metrics")
	if code, by, out := s.waitPass(t); code != http.StatusOK || by != "light-probe" || !strings.HasPrefix(out, "proof of life: tcp 10.77.0.2:443 answered") {
		t.Fatalf("while the probe is answered: %d %s %q", code, by, out)
	}
	_, js := s.get(t, "/check/?format=json")
	if !strings.Contains(js, `"kind": "tcp"`) || !strings.Contains(js, `"tunnel:probe-loss"`) {
		t.Errorf("JSON without the light probe:\n%s", js)
	}
	_, metrics := s.get(t, "/metrics")
	for _, want := range []string{
		"\ntunnelprobe_light_probe_info{kind=\"tcp\",target=\"10.77.0.2:443\"} 1",
		"\ntunnelprobe_light_probes_total{kind=\"tcp\",result=\"answered\"} ",
		"\ntunnelprobe_evidence_decisions_total{proof=\"light-probe\",result=\"pass\",source=\"probe\"} ",
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", strings.TrimSpace(want))
		}
	}
	stop() // refused from now on: a reset is no answer
	if by, out := s.untilFails(t); by != "light-probe" || !strings.Contains(out, "no proof of life") {
		t.Errorf("resets only: %s %q, want no proof of life", by, out)
	}
}

// waitFor asks path until it answers code with a body that starts with
// prefix, for 15 s at most.
func waitFor(t *testing.T, s *runningCommand, path string, code int, prefix string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, body := s.get(t, path)
		if c == code && strings.HasPrefix(body, prefix) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %d %q, want %d %q...", path, c, body, code, prefix)
		}
	}
}

// TestServeCountersNeverPass: with --evidence-iface alone, what the
// interface receives (loopback carries this test's own requests) never
// passes /check/: the active check decides, and fails on its refused
// target. The metrics show the counters.
func TestServeCountersNeverPass(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("interface counters are read from Linux's /proc")
	}
	s := startServe(t, nil, "--mode", "probe", "--check", "tcp", "--target", testnet.RefusedAddr(t),
		"--evidence-iface", "lo", "--metrics")
	for range 5 {
		if code, body := s.get(t, "/check/"); code != http.StatusServiceUnavailable || !strings.Contains(body, "connection refused") {
			t.Fatalf("GET /check/: %d %q, want the active check's failure", code, body)
		}
	}
	if _, metrics := s.get(t, "/metrics"); !strings.Contains(metrics, "\ntunnelprobe_tunnel_received_packets_total ") {
		t.Error("/metrics lacks the counters")
	}
}

// TestServeWarnsOfAMissingInterface: an --evidence-iface that names no
// interface here is warned of at start, in every answer and in the
// metrics, since the deploy settings count on the evidence; serve still
// starts, for a VPN's interface may come up after its sidecar.
func TestServeWarnsOfAMissingInterface(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("interface counters are read from Linux's /proc")
	}
	s := startServe(t, nil, "--mode", "probe", "--check", "tcp", "--target", testnet.RefusedAddr(t),
		"--evidence-iface", "nosuch0", "--metrics")
	if log := s.stderr.String(); !strings.Contains(log, "level=WARN") || !strings.Contains(log, `no interface \"nosuch0\"`) {
		t.Errorf("no warning naming the interface at start:\n%s", log)
	}
	// Run reads the counters at once; the answers warn from then on.
	waitFor(t, s, "/", http.StatusServiceUnavailable, "")
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, body := s.get(t, "/")
		if strings.Contains(body, `warning: evidence: interface nosuch0 counters: no interface "nosuch0"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the status never warned of the missing interface: %q", body)
		}
	}
	if _, js := s.get(t, "/?format=json"); !strings.Contains(js, `"tunnel:counters"`) {
		t.Errorf("status JSON without the counters' warning:\n%s", js)
	}
	if _, metrics := s.get(t, "/metrics"); !strings.Contains(metrics, "\ntunnelprobe_evidence_counters_readable 0\n") {
		t.Error("/metrics lacks tunnelprobe_evidence_counters_readable 0")
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
		{[]string{"--evidence-window", "5s"}, "--evidence-window shapes the evidence, and none is configured"},
		{[]string{"--evidence-iface", "wg0", "--max-loss", "0.2"}, "--max-loss shapes the light probes"},
		{[]string{"--light-probe", "sctp://10.0.0.1"}, `invalid value "sctp://10.0.0.1" for flag --light-probe: light probe "sctp://10.0.0.1": unknown kind "sctp"`},
		{[]string{"--light-probe", "1.1.1.1", "--max-loss", "x"}, "--max-loss"},
		{[]string{"--light-probe", "1.1.1.1", "--preset", "upstream"}, "--preset upstream fixes what --light-probe sets"},
		// What would be accepted and then never answered, or starve the host.
		{[]string{"--light-probe", "tcp://:8443"}, `invalid value "tcp://:8443" for flag --light-probe`},
		{[]string{"--light-probe", "1.1.1.1,127.0.0.1"}, `flag --light-probe: light probe "127.0.0.1": 127.0.0.1 is a loopback address`},
		{[]string{"--light-probe", "udp-dns://10.0.0.1/example.com"}, "for flag --light-probe"},
		{[]string{"--light-probe", "tcp://192.0.2.1:1", "--evidence-interval", "1ns"}, `invalid value "1ns" for flag --evidence-interval: shorter than 10ms`},
		{[]string{"--light-probe", "tcp://192.0.2.1:1", "--light-probe-timeout", "1ms"}, `invalid value "1ms" for flag --light-probe-timeout`},
		{[]string{"--light-probe", "tcp://192.0.2.1:1", "--evidence-interval", "5s"}, "--evidence-interval 5s is longer than --evidence-window 3s"},
		{[]string{"--light-probe", "tcp://192.0.2.1:1", "--max-loss", "1"}, `invalid value "1" for flag --max-loss: want a share below 1`},
		{[]string{"--light-probe", "tcp://192.0.2.1:1", "--max-loss", "0.2", "--loss-window", "1s"}, "--loss-window 1s holds fewer than the 10 probes"},
		{[]string{"--evidence-iface", "a/b"}, `for flag --evidence-iface`},
		{[]string{"--evidence-wireguard", strings.Repeat("w", 16)}, `for flag --evidence-wireguard`},
	} {
		var stdout, stderr bytes.Buffer
		if code := serveCommand(t.Context(), tc.args, noEnv, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.mention) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s", tc.args, code, stderr.String(), tc.mention)
		}
	}
}

// Where ICMP is not permitted, --light-probe HOST falls back to a UDP DNS
// query and says so in the log; icmp://HOST is refused, naming the flag.
func TestServeLightProbeWhereICMPIsRefused(t *testing.T) {
	ns := netnstest.New(t, "srvlp")
	var err error
	netnstest.Run(t, ns, func() { err = os.WriteFile("/proc/sys/net/ipv4/ping_group_range", []byte("1 0"), 0o644) })
	if err != nil {
		t.Fatal(err)
	}
	var code int
	var stdout, stderr bytes.Buffer
	netnstest.Run(t, ns, func() {
		code = serveCommand(t.Context(), []string{"--light-probe", "icmp://192.0.2.1"}, noEnv, &stdout, &stderr)
	})
	if code != 2 || !strings.Contains(stderr.String(), "flag --light-probe") || !strings.Contains(stderr.String(), "ICMP not permitted") {
		t.Errorf("pinned icmp: exit %d, %q; want 2 naming the flag and why", code, stderr.String())
	}
	// HOST: the server starts with udp-dns, and says so. Its context has
	// ended already, so it shuts down at once, inside the namespace.
	stdout.Reset()
	stderr.Reset()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	netnstest.Run(t, ns, func() {
		code = serveCommand(ctx, []string{"--listen", "127.0.0.1:0", "--light-probe", "192.0.2.1"}, noEnv, &stdout, &stderr)
	})
	log := stderr.String()
	if code != 0 || !strings.Contains(log, "light probe cannot work here") || !strings.Contains(log, "ICMP not permitted") ||
		!strings.Contains(log, `light_probe="udp-dns 192.0.2.1:53"`) {
		t.Errorf("HOST where ICMP is refused: exit %d, log:\n%s", code, log)
	}
}
