package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/exclusive"
	"github.com/tunnelprobe/tunnelprobe/scenarios"
	"github.com/tunnelprobe/tunnelprobe/scenarios/matrix"
)

func TestScenarioBadUsage(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nduration: 1m\nsurprise: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badExpect := filepath.Join(dir, "expect.yaml")
	if err := os.WriteFile(badExpect, []byte(`
name: x
duration: 1m
link: {rate: 20mbit, queue: 256p, outages: [{start: 20s, duration: 10s}]}
configs:
  - {name: k8s, health: {mode: probe}, prober: {kind: kubelet, endpoint: /check/}, expect: {false_heals: -2}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"--spec", filepath.Join(dir, "missing.yaml")}, "--spec"},
		{[]string{"--spec", bad}, "surprise"},
		{[]string{"--spec", badExpect}, "configs[0].expect.false_heals: -2 is negative"},
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
	// Its labs load the machine, and it judges what they measure: it takes
	// its turn (package exclusive) with the other packages' loaded runs.
	exclusive.Machine(t)
	dir := t.TempDir()
	bin := builtBinary(t)
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
	// The story at a glance: a legend, a verdict, the pictures and the
	// command to run it again; progress lines a terminal can show.
	for _, want := range []string{"\n  false restarts, false heals: ", "\nverdict: ", "\npicture: " + filepath.Join(results, "summary.png"),
		"\nrerun: tunnelprobe scenario --suite quick --seed 1\n"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q", strings.TrimSpace(want))
		}
	}
	for line := range strings.Lines(stderr.String()) {
		if len(line) > 160 {
			t.Errorf("a progress line of %d characters: %q", len(line), line)
			break
		}
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
	for _, name := range []string{"timeline.png", "summary.png"} {
		f, err := os.Open(filepath.Join(results, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(f); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		f.Close()
	}
	md, err := os.ReadFile(filepath.Join(results, "report.md"))
	if err != nil || !bytes.Contains(md, []byte("## What it means")) {
		t.Errorf("report.md: %v", err)
	}

	// What a run wrote reads back as a table of its runs, a row each.
	stdout.Reset()
	stderr.Reset()
	if code := scenarioCommand(t.Context(), []string{"report", filepath.Join(results, "report.json"), jsonCopy}, noEnv, &stdout, &stderr); code != 0 {
		t.Fatalf("scenario report: exit %d, stderr %s", code, stderr.String())
	}
	for _, name := range rep.Order {
		if !strings.Contains(stdout.String(), "\n| "+name+" | ") {
			t.Errorf("scenario report has no row for %s:\n%s", name, stdout.String())
		}
	}
}

// scenario report refuses what no run wrote, naming the file.
func TestScenarioReportBadInput(t *testing.T) {
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notJSON, []byte("a note\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"report"}, "no report.json FILE"},
		{[]string{"report", filepath.Join(dir, "missing.json")}, "missing.json"},
		{[]string{"report", notJSON}, "notes.txt"},
		{[]string{"report", "--nope", notJSON}, "-nope"},
	} {
		var out, errb bytes.Buffer
		if code := scenarioCommand(t.Context(), tc.args, noEnv, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.mention) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s", tc.args, code, errb.String(), tc.mention)
		}
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

// tinySpec writes a one-configuration spec of 8 s into dir and returns its
// path.
func tinySpec(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "tiny.yaml")
	if err := os.WriteFile(path, []byte(`
name: tiny
seed: 3
duration: 8s
link: {rate: 20mbit, delay: 2ms, queue: 256p, outages: [{start: 4s, duration: 4s}]}
load: {conns: 10, ramp: 1s}
configs:
  - name: k8s
    health: {mode: probe, timeouts: [500ms]}
    prober: {kind: kubelet, endpoint: "/check/?timeout=500ms", period: 500ms, timeout: 1s, failure_threshold: 2}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// forbidRuns makes any run the command starts fail the test.
func forbidRuns(t *testing.T) {
	t.Helper()
	stubRuns(t, func(context.Context, scenarios.Spec, scenarios.Options) (*scenarios.Report, error) {
		t.Error("a run started")
		return nil, errors.New("no run in this test")
	}, func(_ context.Context, conditions []scenarios.Spec, _ matrix.Options) (*matrix.Report, error) {
		t.Error("a matrix started")
		return emptyMatrix(conditions), errors.New("no run in this test")
	})
}

// emptyMatrix is the report of a matrix over conditions that made no run.
func emptyMatrix(conditions []scenarios.Spec) *matrix.Report {
	m := &matrix.Report{}
	for _, c := range conditions {
		m.Conditions = append(m.Conditions, c.Name)
		for _, cfg := range c.Configs {
			if !slices.Contains(m.Configs, cfg.Name) {
				m.Configs = append(m.Configs, cfg.Name)
			}
		}
	}
	return m
}

// stubRuns replaces the command's runs for the test.
func stubRuns(t *testing.T, run func(context.Context, scenarios.Spec, scenarios.Options) (*scenarios.Report, error),
	matrix func(context.Context, []scenarios.Spec, matrix.Options) (*matrix.Report, error)) {
	oldRun, oldMatrix := runScenario, runMatrix
	t.Cleanup(func() { runScenario, runMatrix = oldRun, oldMatrix })
	runScenario, runMatrix = run, matrix
}

// fakeReport is a report of spec in which nothing happened.
func fakeReport(spec scenarios.Spec) *scenarios.Report {
	rep := &scenarios.Report{Name: spec.Name, Seed: spec.Seed, Spec: spec, Configs: map[string]scenarios.ConfigReport{}}
	for _, c := range spec.Configs {
		rep.Configs[c.Name] = scenarios.ConfigReport{WorkingSeconds: 4, Probes: 8, ProbeSuccessRatio: 1}
		rep.Order = append(rep.Order, c.Name)
	}
	return rep
}

// An output the command cannot write is refused before any lab starts,
// naming the flag.
func TestScenarioChecksItsOutputsFirst(t *testing.T) {
	dir := t.TempDir()
	spec := tinySpec(t, dir)
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	forbidRuns(t)
	good := filepath.Join(dir, "results")
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"--spec", spec, "--out", filepath.Join(file, "results")}, "--out"},
		{[]string{"--spec", spec, "--out", file}, "--out"},
		{[]string{"--spec", spec, "--out", filepath.Join(file, "results"), "--repeat", "2"}, "--out"},
		{[]string{"--spec", spec, "--out", good, "--json", filepath.Join(dir, "missing", "copy.json")}, "--json"},
		{[]string{"--spec", spec, "--out", good, "--json", filepath.Join(file, "copy.json")}, "--json"},
		{[]string{"--spec", spec, "--out", good, "--json", dir}, "--json"},
	} {
		var out, errb bytes.Buffer
		if code := scenarioCommand(t.Context(), tc.args, noEnv, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.mention) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s", tc.args, code, errb.String(), tc.mention)
		}
	}
	// The checks leave no file of theirs behind.
	for _, d := range []string{dir, good} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("the checks left %s in %s", e.Name(), d)
			}
		}
	}
}

// When --out fails after the run all the same, the results go to a
// folder that says they were rescued, and the command says where.
func TestScenarioRescuesResultsItCannotWrite(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	spec := tinySpec(t, dir)
	out := filepath.Join(dir, "results")
	stubRuns(t, func(_ context.Context, spec scenarios.Spec, _ scenarios.Options) (*scenarios.Report, error) {
		// The folder goes away during the run: a file takes its place.
		if err := os.RemoveAll(out); err != nil {
			t.Error(err)
		}
		if err := os.WriteFile(out, nil, 0o600); err != nil {
			t.Error(err)
		}
		return fakeReport(spec), nil
	}, nil)
	var stdout, stderr bytes.Buffer
	if code := scenarioCommand(t.Context(), []string{"--spec", spec, "--out", out}, noEnv, &stdout, &stderr); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	rescued, _ := filepath.Glob(filepath.Join(dir, "tunnelprobe-scenario-rescued-*"))
	if len(rescued) != 1 || !strings.Contains(stderr.String(), rescued[0]) {
		t.Fatalf("rescued folders %v; stderr %q: want one, named there", rescued, stderr.String())
	}
	for _, f := range []string{"report.md", "report.json", "timeline.png"} {
		if _, err := os.Stat(filepath.Join(rescued[0], f)); err != nil {
			t.Error(err)
		}
	}
}

// --repeat is refused when the runs could not end within the limit, and
// the command says how long it takes before the first run starts.
func TestScenarioRepeatIsBounded(t *testing.T) {
	dir := t.TempDir()
	spec := tinySpec(t, dir) // 8 s
	forbidRuns(t)
	for _, args := range [][]string{
		{"--spec", spec, "--repeat", "1000000"},
		{"--spec", spec, "--repeat", "1001"},
		{"--matrix", "--repeat", "500"}, // 500 passes of about 24 min: over 8 days
	} {
		var out, errb bytes.Buffer
		args = append(args, "--out", filepath.Join(dir, "results"))
		if code := scenarioCommand(t.Context(), args, noEnv, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--repeat") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming --repeat", args, code, errb.String())
		}
	}

	var stdout, stderr bytes.Buffer
	var before string
	stubRuns(t, nil, func(_ context.Context, conditions []scenarios.Spec, _ matrix.Options) (*matrix.Report, error) {
		before = stdout.String()
		return emptyMatrix(conditions), errors.New("no run in this test")
	})
	scenarioCommand(t.Context(), []string{"--spec", spec, "--repeat", "3", "--out", filepath.Join(dir, "results")}, noEnv, &stdout, &stderr)
	if !strings.Contains(before, "3 run(s)") || !strings.Contains(before, "at least 24s") {
		t.Errorf("before the runs, stdout said %q; want 3 runs and at least 24 s", before)
	}
}

// A spec too large, or with too many entries, is refused at once, and a
// spec with many errors prints a few and counts the rest.
func TestScenarioRefusesHugeSpecsEarly(t *testing.T) {
	dir := t.TempDir()
	forbidRuns(t)
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, bytes.Repeat([]byte("# padding\n"), 200_000), 0o600); err != nil {
		t.Fatal(err)
	}
	var many strings.Builder
	many.WriteString("name: many\nduration: 1m\nlink: {rate: 20mbit, queue: 256p}\nconfigs:\n")
	for range 1000 {
		many.WriteString("  - {name: x, health: {mode: nope}, prober: {kind: nope}}\n")
	}
	manyPath := filepath.Join(dir, "many.yaml")
	if err := os.WriteFile(manyPath, []byte(many.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var bad strings.Builder
	bad.WriteString("name: bad\nduration: 1m\nlink: {rate: 20mbit, queue: 256p}\nconfigs:\n")
	for i := range 20 {
		fmt.Fprintf(&bad, "  - {name: c%d, health: {mode: nope}, prober: {kind: kubelet, endpoint: /}}\n", i)
	}
	badPath := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badPath, []byte(bad.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		spec     string
		mentions []string
	}{
		{big, []string{"--spec", "2000000 bytes", "1048576"}},
		{manyPath, []string{"--spec", "configs: 1000 configurations, at most 64"}},
		{badPath, []string{"--spec", "configs[0].health", "and 10 more"}},
	} {
		var out, errb bytes.Buffer
		code := scenarioCommand(t.Context(), []string{"--spec", tc.spec, "--out", filepath.Join(dir, "results")}, noEnv, &out, &errb)
		lines := strings.Count(errb.String(), "\n")
		if code != 2 || lines > 13 {
			t.Errorf("%s: exit %d, %d lines on stderr; want 2 and a few lines", tc.spec, code, lines)
		}
		for _, m := range tc.mentions {
			if !strings.Contains(errb.String(), m) {
				t.Errorf("%s: stderr does not say %q:\n%s", tc.spec, m, errb.String())
			}
		}
	}
}

// A configuration whose lab never carried its load and whose prober never
// probed is a failed run: the report says so, never "not detected", and
// the command exits 1.
func TestScenarioReportsAConfigurationThatNeverRan(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "dead.yaml")
	// The link is down from the start, so no load connection opens, and
	// the probes wait longer than the run.
	if err := os.WriteFile(spec, []byte(`
name: dead
seed: 1
duration: 3s
link: {rate: 20mbit, delay: 2ms, queue: 256p, outages: [{start: 0s, duration: 3s}]}
load: {conns: 5}
configs:
  - name: k8s
    health: {mode: probe, timeouts: [500ms]}
    prober: {kind: kubelet, endpoint: "/check/?timeout=500ms", period: 1s, timeout: 1s, initial_delay: 10s}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	var stdout, stderr bytes.Buffer
	if code := scenarioCommand(t.Context(), []string{"--spec", spec, "--out", out}, noEnv, &stdout, &stderr); code != 1 {
		t.Errorf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "k8s") || !strings.Contains(stderr.String(), "failed") {
		t.Errorf("stderr does not name the failed configuration:\n%s", stderr.String())
	}
	raw, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Configs map[string]map[string]json.RawMessage `json:"configs"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if why := string(rep.Configs["k8s"]["failed"]); !strings.Contains(why, "no probe") || !strings.Contains(why, "load") {
		t.Errorf("report.json: k8s failed %s; want no probe and no load named", why)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "k8s failed") || strings.Contains(string(md), "did not act on the outage") {
		t.Errorf("report.md does not say k8s failed, or reports its outage as missed:\n%s", md)
	}
}

// A run stopped by Ctrl-C writes what it measured and exits 130, a single
// run and --repeat alike: it exited 0 until then, as if it had passed.
func TestScenarioInterruptedExits130(t *testing.T) {
	dir := t.TempDir()
	spec := tinySpec(t, dir)
	stubRuns(t, func(_ context.Context, spec scenarios.Spec, _ scenarios.Options) (*scenarios.Report, error) {
		rep := fakeReport(spec)
		rep.Interrupted, rep.DurationSeconds = true, 2
		return rep, nil
	}, func(ctx context.Context, conditions []scenarios.Spec, opts matrix.Options) (*matrix.Report, error) {
		stopped, stop := context.WithCancel(ctx)
		stop() // the Ctrl-C, before the first run
		return matrix.Run(stopped, conditions, opts)
	})
	for _, extra := range [][]string{nil, {"--repeat", "2"}} {
		out := filepath.Join(dir, "results")
		var stdout, stderr bytes.Buffer
		args := append([]string{"--spec", spec, "--out", out}, extra...)
		if code := scenarioCommand(t.Context(), args, noEnv, &stdout, &stderr); code != 130 {
			t.Errorf("%v: exit %d, want 130\nstdout:\n%s\nstderr:\n%s", extra, code, stdout.String(), stderr.String())
		}
		if !strings.Contains(stderr.String(), "interrupted") || !strings.Contains(stdout.String(), "report: ") {
			t.Errorf("%v: does not say it was interrupted, or wrote no report\nstdout:\n%s\nstderr:\n%s", extra, stdout.String(), stderr.String())
		}
	}
}

// A Ctrl-C while the labs start stops the run before it measured anything:
// exit 130 all the same, where it exited 1 on the labs' "context canceled".
func TestScenarioInterruptedWhileStartingExits130(t *testing.T) {
	dir := t.TempDir()
	spec := tinySpec(t, dir)
	stubRuns(t, func(ctx context.Context, _ scenarios.Spec, _ scenarios.Options) (*scenarios.Report, error) {
		<-ctx.Done() // a lab's Start, waiting for its tunnel
		return nil, fmt.Errorf("lab: %w", ctx.Err())
	}, matrix.Run)
	for _, extra := range [][]string{nil, {"--repeat", "2"}} {
		ctx, stop := context.WithCancel(t.Context())
		stop()
		var stdout, stderr bytes.Buffer
		args := append([]string{"--spec", spec, "--out", filepath.Join(dir, "results")}, extra...)
		if code := scenarioCommand(ctx, args, noEnv, &stdout, &stderr); code != 130 || !strings.Contains(stderr.String(), "interrupted") {
			t.Errorf("%v: exit %d, want 130 saying it was interrupted\nstdout:\n%s\nstderr:\n%s", extra, code, stdout.String(), stderr.String())
		}
	}
}

// A second run never overwrites the first one's results: it writes into
// the next free folder and says so.
func TestScenarioKeepsAnEarlierRunsResults(t *testing.T) {
	dir := t.TempDir()
	spec := tinySpec(t, dir)
	out := filepath.Join(dir, "results")
	seeds := 0
	stubRuns(t, func(_ context.Context, spec scenarios.Spec, _ scenarios.Options) (*scenarios.Report, error) {
		seeds++
		return fakeReport(spec), nil
	}, nil)
	for i, want := range []string{out, out + "-2", out + "-3"} {
		var stdout, stderr bytes.Buffer
		if code := scenarioCommand(t.Context(), []string{"--spec", spec, "--out", out}, noEnv, &stdout, &stderr); code != 0 {
			t.Fatalf("run %d: exit %d, stderr %q", i+1, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "report: "+filepath.Join(want, "report.md")) {
			t.Errorf("run %d: stdout %q, want the report in %s", i+1, stdout.String(), want)
		}
		if i > 0 && !strings.Contains(stdout.String(), "holds an earlier run's results") {
			t.Errorf("run %d does not say why it chose %s", i+1, want)
		}
	}
	if seeds != 3 {
		t.Errorf("%d runs, want 3", seeds)
	}
}

// A configuration that breaks a bound of its expect fails the run: exit 1,
// naming the configuration, the run, the bound and what was measured, in
// a single run and over --repeat; the report keeps the breach.
func TestScenarioFailsABrokenExpectation(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "expect.yaml")
	// A 3 s outage that no kubelet probing each second detects within
	// 1 ms (detected late or missed, either breaks the bound); no restart
	// while the link works.
	if err := os.WriteFile(spec, []byte(`
name: expect
seed: 1
duration: 6s
link: {rate: 20mbit, delay: 2ms, queue: 256p, outages: [{start: 3s, duration: 3s}]}
load: {conns: 2}
configs:
  - name: k8s
    health: {mode: probe, timeouts: [500ms]}
    prober: {kind: kubelet, endpoint: "/check/?timeout=500ms", period: 1s, timeout: 1s}
    expect: {false_restarts: 0, detection: 1ms}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, extra := range [][]string{nil, {"--repeat", "2"}} {
		var out, junit, summary string
		var stdout, stderr bytes.Buffer
		// A run the machine froze (its report says the process could not
		// run) measured nothing: it is run again, up to three times.
		for try := 1; try <= 3; try++ {
			name := fmt.Sprintf("%d-%d", len(extra), try)
			out, junit, summary = filepath.Join(dir, "results-"+name), filepath.Join(dir, "junit-"+name+".xml"), filepath.Join(dir, "summary-"+name+".md")
			stdout.Reset()
			stderr.Reset()
			args := append([]string{"--spec", spec, "--out", out, "--junit", junit, "--summary", summary}, extra...)
			code := scenarioCommand(t.Context(), args, noEnv, &stdout, &stderr)
			if strings.Contains(stderr.String(), "could not run for up to") {
				t.Logf("%v: try %d stalled, run again:\n%s", extra, try, stderr.String())
				continue
			}
			if code != 1 {
				t.Errorf("%v: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", extra, code, stdout.String(), stderr.String())
			}
			break
		}
		want := "configuration k8s broke its expectation: detection "
		if extra != nil {
			want = "run 2 (expect, seed 2): " + want
		}
		if !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "want every outage within 1ms") ||
			strings.Contains(stderr.String(), "false_restarts") {
			t.Errorf("%v: stderr does not say %q ... (and only that):\n%s", extra, want, stderr.String())
		}
		// For CI: a failing test case per run, and a job summary.
		runs := 1
		if extra != nil {
			runs = 2
		}
		xmlDoc, err := os.ReadFile(junit)
		if err != nil || strings.Count(string(xmlDoc), `<testcase name="k8s"`) != runs ||
			strings.Count(string(xmlDoc), `<failure message="detection `) != runs {
			t.Errorf("%v: --junit %v:\n%s", extra, err, xmlDoc)
		}
		if md, err := os.ReadFile(summary); err != nil || !strings.Contains(string(md), "bound(s) broken") {
			t.Errorf("%v: --summary %v:\n%s", extra, err, md)
		}
		if extra == nil {
			if !strings.Contains(stdout.String(), "EXPECTATIONS BROKEN: k8s: detection") {
				t.Errorf("the table does not say the expectation broke:\n%s", stdout.String())
			}
			raw, err := os.ReadFile(filepath.Join(out, "report.json"))
			if err != nil || !strings.Contains(string(raw), `"bound": "detection"`) {
				t.Errorf("report.json has no breach: %v", err)
			}
		}
	}
}

// Shards of a --repeat run on "machines" of their own, merged: the whole
// matrix's runs and rates. A shard does not judge its bounds (exit 0); the
// merge does (exit 1, and --junit; --summary appended to what the file
// held). A shard merged twice is refused, and so is one that no matrix
// writes, before anything is written; a bad --shard is bad usage naming it.
func TestScenarioShardsMerge(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "tiny.yaml")
	if err := os.WriteFile(spec, []byte(`
name: tiny
seed: 1
duration: 3s
link: {rate: 20mbit, delay: 2ms, queue: 256p, outages: [{start: 2s, duration: 1s}]}
load: {conns: 2}
configs:
  - {name: k8s, health: {mode: probe}, prober: {kind: kubelet, endpoint: /check/, period: 1s}, expect: {detection: 1ms}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var shards []string
	for i := range 2 {
		out := filepath.Join(dir, fmt.Sprintf("shard-%d", i))
		var stdout, stderr bytes.Buffer
		args := []string{"--spec", spec, "--repeat", "2", "--shard", fmt.Sprintf("%d/2", i), "--out", out}
		if code := scenarioCommand(t.Context(), args, noEnv, &stdout, &stderr); code != 0 {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, code, stdout.String(), stderr.String())
		}
		if !strings.Contains(stdout.String(), "run 1 of 1: tiny, seed "+fmt.Sprint(i+1)) {
			t.Errorf("shard %d did not run its own run:\n%s", i, stdout.String())
		}
		shards = append(shards, filepath.Join(out, "matrix.json"))
	}
	merged, junit, summary := filepath.Join(dir, "merged"), filepath.Join(dir, "junit.xml"), filepath.Join(dir, "summary.md")
	// The CI system's summary of the steps before is kept: the merge's is
	// appended.
	if err := os.WriteFile(summary, []byte("## the build step\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := append([]string{"merge", "--out", merged, "--junit", junit, "--summary", summary}, shards...)
	if code := scenarioCommand(t.Context(), args, noEnv, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "run 2 (tiny, seed 2): configuration k8s broke its expectation: detection") {
		t.Fatalf("merge: exit %d, want 1 naming the broken bound\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if x, err := os.ReadFile(junit); err != nil || strings.Count(string(x), "<failure") != 2 {
		t.Errorf("merge --junit: %v\n%s", err, x)
	}
	if md, err := os.ReadFile(summary); err != nil || !strings.HasPrefix(string(md), "## the build step\n## tunnelprobe scenario: 2 bound(s) broken") {
		t.Errorf("merge --summary: %v, want the earlier summary kept and the merge's after it:\n%s", err, md)
	}
	raw, err := os.ReadFile(filepath.Join(merged, "matrix.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := matrix.ReadJSON(raw)
	if err != nil || len(rep.Runs) != 2 || rep.Runs[0].Seed != 1 || rep.Runs[1].Seed != 2 || rep.Overall["k8s"].Runs != 2 {
		t.Errorf("merged: %v, %+v", err, rep)
	}
	stderr.Reset()
	if code := scenarioCommand(t.Context(), append([]string{"merge", "--out", filepath.Join(dir, "twice")}, shards[0], shards[0]), noEnv, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "merged twice") {
		t.Errorf("a shard merged twice: exit %d, %s", code, stderr.String())
	}
	mergeRefusesBeforeWriting(t, dir, shards)
	stderr.Reset()
	if code := scenarioCommand(t.Context(), []string{"--repeat", "2", "--shard", "2/2"}, noEnv, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--shard") {
		t.Errorf("--shard 2/2: exit %d, %s", code, stderr.String())
	}
}

// mergeRefusesBeforeWriting merges shards with a broken copy of the first
// (an empty report, which panicked in the plot after --out was made), and
// with an output flag that cannot be written (--junit at a link into a
// missing folder, which failed after the merge), and a file that is not
// there into an --out that holds results: each is bad input (exit 2),
// naming the file and the field or the flag, and none writes anything, nor
// announces a folder it would write into.
func mergeRefusesBeforeWriting(t *testing.T, dir string, shards []string) {
	t.Helper()
	raw, err := os.ReadFile(shards[0])
	if err != nil {
		t.Fatal(err)
	}
	var broken matrix.Report
	if err := json.Unmarshal(raw, &broken); err != nil {
		t.Fatal(err)
	}
	broken.Runs[0].Report = &scenarios.Report{}
	bad := filepath.Join(dir, "broken.json")
	if raw, err = json.Marshal(&broken); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.xml")
	if err := os.Symlink(filepath.Join(dir, "missing", "junit.xml"), dangling); err != nil {
		t.Fatal(err)
	}
	out, junit := filepath.Join(dir, "refused", "results"), filepath.Join(dir, "refused.xml")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--junit", junit, bad, shards[1]}, 2, bad + ": runs[0].report.spec: "},
		{[]string{"--junit", dangling, shards[0], shards[1]}, 2, "for flag --junit: no such directory " + filepath.Join(dir, "missing")},
		{[]string{"--out", filepath.Dir(shards[0]), filepath.Join(dir, "absent.json"), shards[1]}, 2, "absent.json"},
	} {
		var stdout, stderr bytes.Buffer
		if code := scenarioCommand(t.Context(), append([]string{"merge", "--out", out}, tc.args...), noEnv, &stdout, &stderr); code != tc.code ||
			!strings.Contains(stderr.String(), tc.want) || strings.Contains(stderr.String(), "panic") {
			t.Errorf("merge %v: exit %d, want %d with %q\n%s", tc.args, code, tc.code, tc.want, stderr.String())
		}
		if strings.Contains(stdout.String(), "writing into") {
			t.Errorf("merge %v announced a folder it did not write: %s", tc.args, stdout.String())
		}
		for _, p := range []string{filepath.Dir(out), junit, filepath.Join(dir, "missing")} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("merge %v wrote %s", tc.args, p)
			}
		}
	}
}

// A scenario run collects at scenarioGCPercent, unless GOGC is set.
func TestScenarioGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	scenarioGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != scenarioGCPercent {
		t.Errorf("GC percent without GOGC: %d, want %d", got, scenarioGCPercent)
	}
	debug.SetGCPercent(50) // as the runtime would have set it from GOGC=50
	scenarioGC(func(k string) string {
		if k == "GOGC" {
			return "50"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 50 {
		t.Errorf("GC percent with GOGC=50: %d, want 50", got)
	}
}
