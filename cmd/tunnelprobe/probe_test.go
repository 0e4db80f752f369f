package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// statusServer answers every request with code.
func statusServer(t *testing.T, code int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func runProbeCmd(ctx context.Context, env map[string]string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = probeCommand(ctx, args, envMap(env), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestProbeUsageErrors(t *testing.T) {
	t.Parallel()
	url := "http://127.0.0.1:1/"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no url", nil, "--url"},
		{"bad url", []string{"--url", "ftp://x/"}, "--url"},
		{"count and duration", []string{"--url", url, "--count", "1", "--duration", "1s"}, "--count and --duration"},
		{"success threshold for liveness", []string{"--url", url, "--success-threshold", "2"}, "--success-threshold"},
		{"bad type", []string{"--url", url, "--type", "bogus"}, "-type"},
		{"zero period", []string{"--url", url, "--period", "0s"}, "-period"},
		{"zero threshold", []string{"--url", url, "--failure-threshold", "0"}, "-failure-threshold"},
		{"docker flag without docker", []string{"--url", url, "--retries", "2"}, "--retries applies only with --docker"},
		{"kubelet flag with docker", []string{"--url", url, "--docker", "--period", "5s"}, "--period does not apply with --docker"},
		{"argument", []string{"--url", url, "extra"}, "unexpected argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runProbeCmd(context.Background(), nil, tt.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr: %s", code, stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr does not name %q:\n%s", tt.want, stderr)
			}
			if !strings.HasPrefix(stderr, "tunnelprobe probe: ") {
				t.Errorf("stderr does not name the command:\n%s", stderr)
			}
			if stdout != "" {
				t.Errorf("stdout: %s", stdout)
			}
		})
	}
}

func TestProbeHelp(t *testing.T) {
	t.Parallel()
	code, stdout, _ := runProbeCmd(context.Background(), nil, "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, flag := range []string{"--url", "--period", "--timeout", "--failure-threshold", "--success-threshold",
		"--initial-delay", "--type", "--kubelet-version", "--count", "--duration", "--docker", "TUNNELPROBE_PROBE_URL"} {
		if !strings.Contains(stdout, flag) {
			t.Errorf("help does not show %s", flag)
		}
	}
}

// A healthy target: one line per probe, exit 0.
func TestProbeHealthy(t *testing.T) {
	t.Parallel()
	url := statusServer(t, http.StatusOK)
	code, stdout, stderr := runProbeCmd(context.Background(), nil, "--url", url, "--period", "10ms", "--count", "3")
	if code != 0 {
		t.Fatalf("exit %d; stdout:\n%s\nstderr: %s", code, stdout, stderr)
	}
	if n := strings.Count(stdout, " probe success 200 "); n != 3 {
		t.Errorf("%d successful probes printed, want 3:\n%s", n, stdout)
	}
	if strings.Contains(stdout, "would restart") {
		t.Errorf("restart printed:\n%s", stdout)
	}
}

// A failing target: the decision is printed and the exit status is 1; the
// worker goes on as for a new container.
func TestProbeWouldRestart(t *testing.T) {
	t.Parallel()
	url := statusServer(t, http.StatusServiceUnavailable)
	code, stdout, _ := runProbeCmd(context.Background(), nil,
		"--url", url, "--period", "10ms", "--failure-threshold", "2", "--count", "4")
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, stdout)
	}
	if n := strings.Count(stdout, "would restart at "); n != 2 {
		t.Errorf("%d restart decisions, want 2:\n%s", n, stdout)
	}
	for _, want := range []string{"probe failure 503", "failed liveness probe, will be restarted", "live (container c2)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

// Readiness: exit 1 when not ready at the end. A readiness probe restarts
// nothing, and its output never says it would: a container's HEALTHCHECK
// runs it, whose log Docker keeps.
func TestProbeReadiness(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		status, want int
		verdict      string
	}{{http.StatusOK, 0, "verdict: ready after 2 probe(s)"}, {http.StatusNotFound, 1, "verdict: not ready at the end"}} {
		url := statusServer(t, tt.status)
		code, stdout, _ := runProbeCmd(context.Background(), nil, "--url", url, "--type", "readiness", "--period", "10ms", "--count", "2")
		if code != tt.want {
			t.Errorf("status %d: exit %d, want %d:\n%s", tt.status, code, tt.want, stdout)
		}
		if !strings.Contains(stdout, tt.verdict+"\n") || strings.Contains(stdout, "restart") {
			t.Errorf("status %d: want %q and no restart:\n%s", tt.status, tt.verdict, stdout)
		}
	}
}

// --duration bounds the run; flags also come from the environment.
func TestProbeDurationAndEnv(t *testing.T) {
	t.Parallel()
	url := statusServer(t, http.StatusInternalServerError)
	env := map[string]string{"TUNNELPROBE_PROBE_URL": url, "TUNNELPROBE_PROBE_PERIOD": "10ms", "TUNNELPROBE_PROBE_FAILURE_THRESHOLD": "1"}
	// 2 s, not less: under -race beside the scenario tests, 300 ms once
	// passed without a single probe.
	code, stdout, _ := runProbeCmd(context.Background(), env, "--duration", "2s")
	if code != 1 || !strings.Contains(stdout, "would restart") {
		t.Errorf("exit %d, want 1 with a restart:\n%s", code, stdout)
	}
}

// An interrupt ends the run with the verdict so far.
func TestProbeInterrupted(t *testing.T) {
	t.Parallel()
	url := statusServer(t, http.StatusOK)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code, stdout, _ := runProbeCmd(ctx, nil, "--url", url)
	if code != 0 || !strings.Contains(stdout, "verdict: no restart") {
		t.Errorf("exit %d, want 0:\n%s", code, stdout)
	}
}

// --docker: Docker's rules; exit 1 once the target became unhealthy.
func TestProbeDocker(t *testing.T) {
	t.Parallel()
	url := statusServer(t, http.StatusServiceUnavailable)
	code, stdout, _ := runProbeCmd(context.Background(), nil,
		"--url", url, "--docker", "--interval", "10ms", "--retries", "2", "--count", "2")
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, stdout)
	}
	for _, want := range []string{"unhealthy (container c1)", "would restart at"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

// --kubelet-version names the kubelet imitated: its probes carry that
// version's User-Agent, from the flag or the environment. A version not
// modelled is a usage error naming the flag and the versions that are.
func TestProbeKubeletVersion(t *testing.T) {
	t.Parallel()
	agents := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { agents <- r.UserAgent() }))
	t.Cleanup(srv.Close)
	for _, tt := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--kubelet-version", "1.30"}, "kube-probe/1.30"},
		{map[string]string{"TUNNELPROBE_PROBE_KUBELET_VERSION": "v1.27"}, nil, "kube-probe/1.27"},
	} {
		code, stdout, stderr := runProbeCmd(context.Background(), tt.env, append(tt.args, "--url", srv.URL, "--count", "1")...)
		if code != 0 {
			t.Fatalf("%v %v: exit %d:\n%s%s", tt.env, tt.args, code, stdout, stderr)
		}
		if ua := <-agents; ua != tt.want {
			t.Errorf("%v %v: User-Agent %q, want %q", tt.env, tt.args, ua, tt.want)
		}
	}

	for _, tt := range []struct {
		env  map[string]string
		args []string
		want []string
	}{
		{nil, []string{"--kubelet-version", "1.19"}, []string{"-kubelet-version", "1.20 to 1.37"}},
		{nil, []string{"--kubelet-version", "2.0"}, []string{"-kubelet-version", "1.20 to 1.37"}},
		{map[string]string{"TUNNELPROBE_PROBE_KUBELET_VERSION": "latest"}, nil, []string{"kubelet-version", "1.20 to 1.37"}},
		{nil, []string{"--docker", "--kubelet-version", "1.30"}, []string{"--kubelet-version does not apply with --docker"}},
	} {
		code, _, stderr := runProbeCmd(context.Background(), tt.env, append(tt.args, "--url", srv.URL)...)
		if code != 2 {
			t.Errorf("%v %v: exit %d, want 2; stderr: %s", tt.env, tt.args, code, stderr)
		}
		for _, want := range tt.want {
			if !strings.Contains(stderr, want) {
				t.Errorf("%v %v: stderr does not name %q:\n%s", tt.env, tt.args, want, stderr)
			}
		}
	}
}
