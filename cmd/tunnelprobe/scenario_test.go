package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestScenarioBadUsage(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nduration: 1m\nsurprise: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"--spec", filepath.Join(dir, "missing.yaml")}, "--spec"},
		{[]string{"--spec", bad}, "surprise"},
		{[]string{"--spec", bad, "--quick"}, "--quick"},
		{[]string{"--spec", bad, "--suite", "brownout"}, "--suite"},
		{[]string{"--suite", "nope"}, `invalid value "nope" for flag --suite`},
		{[]string{"--seed", "-1"}, "-seed"},
		{[]string{"extra"}, "extra"},
		{[]string{"--matrix", "--quick"}, "--matrix excludes"},
		{[]string{"--matrix", "--spec", bad}, "--matrix excludes"},
		{[]string{"--condition", "slow"}, "--condition needs --matrix"},
		{[]string{"--matrix", "--condition", "nope"}, `invalid value "nope" for flag --condition`},
		{[]string{"--repeat", "0"}, "--repeat"},
	} {
		var out, errb bytes.Buffer
		if code := scenarioCommand(t.Context(), tc.args, noEnv, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.mention) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s", tc.args, code, errb.String(), tc.mention)
		}
	}
}

// TestScenarioQuick runs the CI suite end to end through the binary: seven
// labs side by side for 90 s. It builds the binary without the race
// detector, which would multiply the labs' CPU and memory several times
// over; the scenario packages' own tests run under it.
func TestScenarioQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for about two minutes")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "tunnelprobe")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	results := filepath.Join(dir, "results")
	jsonCopy := filepath.Join(dir, "copy.json")
	cmd := exec.CommandContext(ctx, bin, "scenario", "--quick", "--out", results, "--json", jsonCopy)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("scenario --quick: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("scenario --quick:\n%s", stdout.String())
	if !strings.Contains(stdout.String(), "seed 1") || !strings.Contains(stderr.String(), "OUTAGE") {
		t.Errorf("no seed in the output or no progress on stderr")
	}

	raw, err := os.ReadFile(filepath.Join(results, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if copyRaw, err := os.ReadFile(jsonCopy); err != nil || !bytes.Equal(raw, copyRaw) {
		t.Errorf("--json did not write the same report.json: %v", err)
	}
	var rep struct {
		Interrupted bool                                  `json:"interrupted"`
		Order       []string                              `json:"order"`
		Configs     map[string]map[string]json.RawMessage `json:"configs"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Interrupted || len(rep.Order) != 7 || len(rep.Configs) != 7 {
		t.Fatalf("interrupted %v, configurations %v", rep.Interrupted, rep.Order)
	}
	for _, name := range []string{"reference", "probe-only", "auto", "wait", "evidence", "upstream", "tcp-socket"} {
		c, ok := rep.Configs[name]
		if !ok {
			t.Errorf("no configuration %q", name)
			continue
		}
		for _, field := range []string{"false_restarts", "false_heals", "outage_detected", "detection_seconds",
			"flaps", "probe_success_ratio", "check_latency_ms", "utilisation", "broken_connections", "timeline"} {
			if _, ok := c[field]; !ok {
				t.Errorf("%s: no %s", name, field)
			}
		}
		// The quick suite's 40 s outage is too short for the upstream's
		// schedule, which the report says; a tcpSocket probe never
		// notices one.
		switch detected := string(c["outage_detected"]) == "true"; name {
		case "upstream":
			if detected || !strings.Contains(string(c["outages"]), `"too_short": true`) {
				t.Errorf("upstream: detected %v, outages %s; want the outage reported too short for its schedule", detected, c["outages"])
			}
		case "tcp-socket":
			if detected {
				t.Errorf("tcp-socket detected the outage: the health server listened throughout")
			}
		default:
			// A false restart just before the outage can leave the new
			// container in its initial delay and crash back-off for the
			// whole 40 s: a result of a loaded machine, which the report
			// shows. Missing the outage with no such action is a failure.
			if !detected && string(c["false_restarts"]) == "0" && string(c["false_heals"]) == "0" {
				t.Errorf("%s did not detect the outage, and did not act before it either", name)
			}
		}
	}
	f, err := os.Open(filepath.Join(results, "timeline.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("timeline.png: %v", err)
	}
	md, err := os.ReadFile(filepath.Join(results, "report.md"))
	if err != nil || !bytes.Contains(md, []byte("## What it means")) {
		t.Errorf("report.md: %v", err)
	}
}

// --repeat runs a spec once per seed and writes the rates over the runs
// beside each run's own results.
func TestScenarioRepeat(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for about 20 seconds")
	}
	dir := t.TempDir()
	spec := filepath.Join(dir, "tiny.yaml")
	if err := os.WriteFile(spec, []byte(`
name: tiny
seed: 3
duration: 8s
link: {rate: 20mbit, delay: 2ms, queue: 256p, outages: [{start: 2s, duration: 1s, blip: true}, {start: 4s, duration: 4s, direction: up}]}
load: {conns: 10, ramp: 1s}
container: {start_delay: 200ms}
configs:
  - name: k8s
    health: {mode: probe, timeouts: [500ms]}
    prober: {kind: kubelet, endpoint: "/check/?timeout=500ms", period: 500ms, timeout: 1s, failure_threshold: 2}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	var stdout, stderr bytes.Buffer
	if code := scenarioCommand(t.Context(), []string{"--spec", spec, "--repeat", "2", "--out", out}, noEnv, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "run 2 of 2: tiny, seed 4") {
		t.Errorf("the second run's seed is not printed:\n%s", stdout.String())
	}
	raw, err := os.ReadFile(filepath.Join(out, "matrix.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Runs []struct {
			Seed uint64 `json:"seed"`
		} `json:"runs"`
		Overall map[string]struct {
			Runs     int `json:"runs"`
			Outages  int `json:"outages"`
			Blips    int `json:"blips"`
			Detected int `json:"detected"`
		} `json:"overall"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if k := rep.Overall["k8s"]; len(rep.Runs) != 2 || rep.Runs[1].Seed != 4 || k.Runs != 2 || k.Outages != 2 || k.Blips != 2 {
		t.Errorf("matrix.json: runs %+v, k8s %+v; want 2 runs, seeds 3 and 4, two outages and two blips", rep.Runs, k)
	}
	for _, f := range []string{"matrix.md", "matrix.png", "tiny-seed3/report.md", "tiny-seed4/timeline.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}
