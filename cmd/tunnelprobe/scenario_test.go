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
	} {
		var out, errb bytes.Buffer
		if code := scenarioCommand(t.Context(), tc.args, noEnv, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.mention) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s", tc.args, code, errb.String(), tc.mention)
		}
	}
}

// TestScenarioQuick runs the CI suite end to end through the binary: five
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
	if rep.Interrupted || len(rep.Order) != 5 || len(rep.Configs) != 5 {
		t.Fatalf("interrupted %v, configurations %v", rep.Interrupted, rep.Order)
	}
	for _, name := range []string{"reference", "probe-only", "auto", "wait", "evidence"} {
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
		if string(c["outage_detected"]) != "true" {
			t.Errorf("%s did not detect the outage", name)
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
