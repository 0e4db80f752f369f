package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/testpng"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
)

// testSink serves a sink on a free loopback port until the test ends.
func testSink(t *testing.T, echo bool) (string, *sink.Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &sink.Server{Echo: echo}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return ln.Addr().String(), srv
}

// runLoadCommand runs the load command in the test's process.
func runLoadCommand(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out bytes.Buffer
	errb := newWatchBuffer()
	code = loadCommand(ctx, args, noEnv, &out, errb)
	return code, out.String(), errb.String()
}

// readReport reads a --json file both as loose fields and as a Report.
func readReport(t *testing.T, path string) (map[string]json.RawMessage, loadgen.Report) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	var rep loadgen.Report
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return fields, rep
}

// requiredFields are the top-level fields the issue promises in --json.
var requiredFields = []string{
	"conns_requested", "conns_achieved", "bytes_up", "bytes_down", "disruptions", "errors",
	"connect_latency_ms", "probe_latency_ms", "probe_failures", "series",
}

func checkFields(t *testing.T, what string, fields map[string]json.RawMessage) {
	t.Helper()
	for _, f := range requiredFields {
		if v, ok := fields[f]; !ok || string(v) == "null" {
			t.Errorf("%s: field %q is %s", what, f, v)
		}
	}
	for _, f := range []string{"connect_latency_ms", "probe_latency_ms"} {
		var p map[string]float64
		if err := json.Unmarshal(fields[f], &p); err != nil {
			t.Fatalf("%s: %s: %v", what, f, err)
		}
		for _, q := range []string{"p50", "p90", "p99", "max"} {
			if _, ok := p[q]; !ok {
				t.Errorf("%s: %s has no %s", what, f, q)
			}
		}
	}
}

func TestLoadDirect(t *testing.T) {
	t.Parallel()
	addr, srv := testSink(t, false)
	dir := t.TempDir()
	jsonFile, plotFile := filepath.Join(dir, "run.json"), filepath.Join(dir, "run.png")
	code, stdout, stderr := runLoadCommand(t, t.Context(), "--target", addr, "--conns", "24", "--duration", "2s",
		"--probe", "tcp://"+addr, "--probe-every", "100ms", "--json", jsonFile, "--plot", plotFile)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	fields, rep := readReport(t, jsonFile)
	checkFields(t, "run", fields)
	r := rep.Result
	if r == nil || r.ConnsRequested != 24 || r.ConnsAchieved != 24 || r.Interrupted || r.Path != "direct" {
		t.Errorf("result %+v, want 24 of 24 connections, direct, not interrupted", r)
	}
	if r != nil && (r.Probes == 0 || r.BytesUp == 0) {
		t.Errorf("%d probes and %d bytes up, want some of both", r.Probes, r.BytesUp)
	}
	if srv.Stats().Conns < 24 {
		t.Errorf("the sink saw %d connections, want at least 24", srv.Stats().Conns)
	}
	testpng.Check(t, plotFile, 960, 960)
	for _, want := range []string{"24 requested, 24 achieved", "throughput", "probe ms"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary does not say %q:\n%s", want, stdout)
		}
	}
	// stderr is no terminal: plain progress lines.
	if !strings.Contains(stderr, "open 24/24") {
		t.Errorf("no progress line on stderr:\n%s", stderr)
	}
}

// TestLoadProcs splits a run over two child processes (this test binary,
// see the init hook in sink_test.go) and checks the merged result. 5 s:
// the merged series peaks at 31 only in a second in which both children
// had all theirs open, and on a loaded CI machine one child once took
// longer than a 2 s run to open its 15 (28 of 31).
func TestLoadProcs(t *testing.T) {
	t.Parallel()
	addr, srv := testSink(t, false)
	jsonFile := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := runLoadCommand(t, t.Context(), "--target", addr, "--conns", "31", "--procs", "2",
		"--duration", "5s", "--probe", "tcp://"+addr, "--probe-every", "200ms", "--json", jsonFile)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	fields, rep := readReport(t, jsonFile)
	checkFields(t, "merged run", fields)
	r := rep.Result
	if r.Processes != 2 || r.ConnsRequested != 31 || r.ConnsAchieved != 31 {
		t.Errorf("processes %d, connections %d of %d; want 2, 31 of 31", r.Processes, r.ConnsAchieved, r.ConnsRequested)
	}
	if r.Probes == 0 {
		t.Error("no probes: the first child should probe")
	}
	// The series is the sum of both children's.
	var peak int64
	for _, s := range r.Series {
		peak = max(peak, s.Open)
	}
	if peak != 31 {
		t.Errorf("series peaks at %d open connections, want 31", peak)
	}
	if srv.Stats().Conns < 31 {
		t.Errorf("the sink saw %d connections, want at least 31", srv.Stats().Conns)
	}
	if !strings.Contains(stdout, "processes       2") && !strings.Contains(stdout, "processes  2") {
		t.Errorf("summary does not show 2 processes:\n%s", stdout)
	}
}

func TestLoadSweep(t *testing.T) {
	t.Parallel()
	addr, _ := testSink(t, false)
	dir := t.TempDir()
	jsonFile, plotFile := filepath.Join(dir, "sweep.json"), filepath.Join(dir, "sweep.png")
	code, stdout, stderr := runLoadCommand(t, t.Context(), "--target", addr, "--sweep", "3,6", "--duration", "2s",
		"--probe", "tcp://"+addr, "--probe-every", "200ms", "--json", jsonFile, "--plot", plotFile)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	var sw struct {
		Levels []map[string]json.RawMessage `json:"levels"`
	}
	if err := json.Unmarshal(b, &sw); err != nil {
		t.Fatal(err)
	}
	if len(sw.Levels) != 2 {
		t.Fatalf("%d levels, want 2", len(sw.Levels))
	}
	for i, want := range []string{"3", "6"} {
		checkFields(t, "level "+want, sw.Levels[i])
		if got := string(sw.Levels[i]["conns_requested"]); got != want {
			t.Errorf("level %d requested %s connections, want %s", i, got, want)
		}
	}
	testpng.Check(t, plotFile, 960, 960)
	if !strings.Contains(stdout, "achieved") || !strings.Contains(stdout, "level 2/2") {
		t.Errorf("no sweep table or level summaries:\n%s", stdout)
	}
}

// TestLoadInterrupt stops runs mid-way, as Ctrl-C does, and checks that
// they return promptly, still write their report and exit 130, as an
// interrupted scenario does.
func TestLoadInterrupt(t *testing.T) {
	t.Parallel()
	for _, procs := range []string{"1", "2"} {
		t.Run("procs="+procs, func(t *testing.T) {
			t.Parallel()
			addr, _ := testSink(t, false)
			jsonFile := filepath.Join(t.TempDir(), "run.json")
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			errb := newWatchBuffer()
			done := make(chan int, 1)
			go func() {
				var out bytes.Buffer
				done <- loadCommand(ctx, []string{"--target", addr, "--conns", "10", "--procs", procs,
					"--duration", "60s", "--json", jsonFile}, noEnv, &out, errb)
			}()
			// The first progress line: the run is under way.
			errb.waitFor(t, `open \d+/10`)
			stopped := time.Now()
			cancel()
			code := <-done
			// The command stops on the interrupt, not after its 60 s: in
			// about 50 ms on an idle machine (TestMain turns off the race
			// detector's sleep at the children's exit), 4.5 s was seen on
			// a loaded CI machine; how fast is no unit test's business.
			d := time.Since(stopped)
			t.Logf("stopped in %v", d)
			if d > 30*time.Second {
				t.Errorf("took %v to stop: it ran on after the interrupt", d)
			}
			if code != cliflag.ExitInterrupted {
				t.Errorf("exit %d after an interrupt, want %d; stderr:\n%s", code, cliflag.ExitInterrupted, errb)
			}
			_, rep := readReport(t, jsonFile)
			if rep.Result == nil || !rep.Interrupted {
				t.Errorf("report %+v, want interrupted", rep.Result)
			}
		})
	}
}

// A Ctrl-C while the lab starts stops the run before it measured anything:
// exit 130 saying so, not 0, which a script would take for a whole run.
func TestLoadInterruptedWhileTheLabStartsExits130(t *testing.T) {
	t.Parallel()
	ctx, stop := context.WithCancel(t.Context())
	stop()
	var stdout, stderr bytes.Buffer
	code := loadCommand(ctx, []string{"--lab", "--conns", "2", "--duration", "10s"}, noEnv, &stdout, &stderr)
	if code != cliflag.ExitInterrupted || !strings.Contains(stderr.String(), "interrupted while the lab started") {
		t.Errorf("exit %d, want %d saying it was interrupted\nstdout:\n%s\nstderr:\n%s", code, cliflag.ExitInterrupted, stdout.String(), stderr.String())
	}
}

func TestLoadSOCKS5(t *testing.T) {
	t.Parallel()
	addr, _ := testSink(t, false)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proxy := &harness.SOCKS5{Dial: (&net.Dialer{}).DialContext}
	if err := proxy.Start(ln); err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	jsonFile := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := runLoadCommand(t, t.Context(), "--target", addr, "--socks5", ln.Addr().String(),
		"--conns", "8", "--duration", "2s", "--probe", "tcp://"+addr, "--probe-every", "200ms", "--json", jsonFile)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	_, rep := readReport(t, jsonFile)
	if r := rep.Result; r.ConnsAchieved != 8 || !strings.HasPrefix(r.Path, "socks5 ") || r.Probes == 0 || r.ProbeFailures != 0 {
		t.Errorf("result: %d connections over %q, %d probes, %d failed; want 8 over socks5, probes passing",
			r.ConnsAchieved, r.Path, r.Probes, r.ProbeFailures)
	}
}

// TestLoadLab measures a tunnel with nothing else running: the lab's sink
// as the target, its TLS target as the probe. With --procs the children
// reach the lab through its SOCKS5 ingress. 6 s: on a loaded CI machine a
// 2 s run once ended before its first probe through the lab did.
func TestLoadLab(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ procs, direction string }{{"1", "up"}, {"2", "both"}} {
		t.Run("procs="+tc.procs+",direction="+tc.direction, func(t *testing.T) {
			t.Parallel()
			jsonFile := filepath.Join(t.TempDir(), "run.json")
			code, stdout, stderr := runLoadCommand(t, t.Context(), "--lab", "--link-rate", "50mbit", "--link-delay", "1ms",
				"--conns", "4", "--procs", tc.procs, "--direction", tc.direction, "--duration", "6s", "--probe-every", "200ms",
				"--json", jsonFile)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			_, rep := readReport(t, jsonFile)
			r := rep.Result
			if r.ConnsAchieved != 4 || !strings.HasPrefix(r.Path, "lab (wireguard, rate 50mbit, ") || !strings.Contains(r.Path, "mtu unlimited") || r.Probes == 0 || r.ProbeFailures != 0 || r.BytesUp == 0 {
				t.Errorf("result: %d connections over %q, %d bytes up, %d probes, %d failed; want 4 over the lab, traffic, probes passing",
					r.ConnsAchieved, r.Path, r.BytesUp, r.Probes, r.ProbeFailures)
			}
			if down := r.BytesDown > 0; down != (tc.direction == "both") {
				t.Errorf("%d bytes down with --direction %s", r.BytesDown, tc.direction)
			}
			// Up, what the lab's sink received: never more than was
			// written, nor than the 50 Mbit/s link carries.
			if d := r.DeliveredUp; d == nil || *d <= 0 || *d > r.BytesUp || float64(*d)*8/r.DurationSeconds > 50e6*1.05 {
				t.Errorf("delivered up %v of %d written in %.1f s, want a count within the link's rate", d, r.BytesUp, r.DurationSeconds)
			}
			if !strings.Contains(stdout, " Mbit/s delivered (") {
				t.Errorf("the summary does not say what was delivered:\n%s", stdout)
			}
		})
	}
}

// A lab level's delivered throughput is what the lab's sink received in
// the level's measured window, so it never exceeds what the link carries
// in it: greedy connections on a slow link hold far more in their send
// buffers, and that drains through the link in the end-of-run handshake,
// after the window (a 20 Mbit/s link once reported 21.95 delivered).
func TestLoadLabDeliveredWithinTheWindow(t *testing.T) {
	t.Parallel()
	const rate = 2e6 // bit/s
	for _, procs := range []string{"1", "2"} {
		t.Run("procs="+procs, func(t *testing.T) {
			t.Parallel()
			jsonFile := filepath.Join(t.TempDir(), "sweep.json")
			code, stdout, stderr := runLoadCommand(t, t.Context(), "--lab", "--link-rate", "2mbit", "--link-delay", "1ms",
				"--sweep", "8,16", "--procs", procs, "--duration", "2s", "--json", jsonFile)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			_, rep := readReport(t, jsonFile)
			if len(rep.Levels) != 2 {
				t.Fatalf("%d levels, want 2", len(rep.Levels))
			}
			for _, r := range rep.Levels {
				// The payload, without the headers the link also carries.
				if r.DeliveredUp == nil {
					t.Errorf("%d connections: no count of what the lab's sink received", r.ConnsRequested)
				} else if d := *r.DeliveredUp; d <= 0 || float64(d)*8 > rate*r.DurationSeconds {
					t.Errorf("%d connections: delivered up %d bytes in %.2f s, at most %.0f fit through the link",
						r.ConnsRequested, d, r.DurationSeconds, rate*r.DurationSeconds/8)
				}
			}
		})
	}
}

func TestLoadBadFlags(t *testing.T) {
	t.Parallel()
	target := []string{"--target", "127.0.0.1:9"}
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--conns", "0"}, "-conns"},
		{[]string{"--rate", "-1"}, "-rate"},
		{[]string{"--direction", "sideways"}, "-direction"},
		{[]string{"--probe", "ftp://x"}, "-probe"},
		{[]string{"--probe", "tcp://x"}, "-probe"},
		{[]string{"--source", "127.0.0.9-127.0.0.2"}, "-source"},
		{[]string{"--sweep", "10,x"}, "-sweep"},
		{[]string{"--sweep", "10,0"}, "-sweep"},
		{[]string{"--nope"}, "-nope"},
		{[]string{"--connect-rate", "-5"}, "-connect-rate"},
		{[]string{"--duration", "0"}, "-duration"},
		{[]string{"--probe-timeout", "0s"}, "-probe-timeout"},
		{[]string{"--procs", "0"}, "-procs"},
		{[]string{"--connect-rate", "10", "--ramp", "1s"}, "--ramp"},
		{[]string{"--conns", "5", "--sweep", "1,2"}, "--sweep"},
		{[]string{"--lab", "--socks5", "127.0.0.1:1080"}, "--socks5"},
		{[]string{"--socks5", "127.0.0.1:1080", "--source", "127.0.0.2"}, "--source"},
		{[]string{"--socks5", "nohost"}, "--socks5"},
		{[]string{"--json", "/nonexistent/dir/run.json"}, "--json"},
		{[]string{"--plot", "/nonexistent/dir/run.png"}, "--plot"},
		{[]string{"--lab", "--link-rate", "0"}, "--link-rate"},
		{[]string{"--link-loss", "2"}, "--link-loss"},
		{[]string{"--link-mtu", "5"}, "--link-mtu"},
	} {
		args := append(slices.Clone(target), tc.args...)
		code, _, stderr := runLoadCommand(t, t.Context(), args...)
		if code != 2 || !strings.Contains(stderr, tc.flag) {
			t.Errorf("load %v: exit %d, stderr %q; want 2 naming %s", tc.args, code, stderr, tc.flag)
		}
	}
	for _, args := range [][]string{nil, {"--target", "nohost"}, {"--target", ":9"}} {
		code, _, stderr := runLoadCommand(t, t.Context(), args...)
		if code != 2 || !strings.Contains(stderr, "--target") {
			t.Errorf("load %v: exit %d, stderr %q; want 2 naming --target", args, code, stderr)
		}
	}
}

func TestLoadEnvironment(t *testing.T) {
	t.Parallel()
	env := func(k string) string {
		return map[string]string{"TUNNELPROBE_LOAD_TARGET": "127.0.0.1:9", "TUNNELPROBE_LOAD_DIRECTION": "sideways"}[k]
	}
	var stdout, stderr bytes.Buffer
	if code := loadCommand(t.Context(), nil, env, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "TUNNELPROBE_LOAD_DIRECTION") {
		t.Errorf("exit %d, stderr %q; want 2 naming TUNNELPROBE_LOAD_DIRECTION", code, stderr.String())
	}
}

func TestLoadNothingListens(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	code, stdout, stderr := runLoadCommand(t, t.Context(), "--target", addr, "--conns", "2", "--duration", "1s", "--reconnect=false")
	if code != 1 {
		t.Errorf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func TestParseLoadProbe(t *testing.T) {
	t.Parallel()
	// The syntax is target.Parse's; load takes tls and tcp.
	for _, in := range []string{"tls://example.test:8443", "tls://example.test", "tcp://127.0.0.1:9", "tcp://[::1]:9/"} {
		if _, err := parseLoadProbe(in); err != nil {
			t.Errorf("parseLoadProbe(%q): %v", in, err)
		}
	}
	for _, in := range []string{"ftp://x", "tcp://x", "tls://", "tls://x/path", "tls://x?q=1", "x:443", "tls://u@x:1", "https://x/", "dns://x"} {
		if _, err := parseLoadProbe(in); err == nil {
			t.Errorf("parseLoadProbe(%q) = nil, want an error", in)
		}
	}
}

// TestChildConfig checks that the children's share of the run, as data,
// builds back into the parent's settings, with the connections and rates
// split exactly and the probe given to the first child only.
func TestChildConfig(t *testing.T) {
	t.Parallel()
	var f loadFlags
	fs := flag.NewFlagSet("parent", flag.ContinueOnError)
	f.register(fs)
	if err := fs.Parse([]string{"--target", "127.0.0.1:9", "--connect-rate", "1000", "--rate", "100mbit",
		"--direction", "both", "--reconnect=false", "--source", "127.0.0.2-127.0.0.3", "--probe", "tcp://127.0.0.1:9",
		"--duration", "3s", "--probe-every", "250ms"}); err != nil {
		t.Fatal(err)
	}
	if err := f.finish(cliflag.Given(fs)); err != nil {
		t.Fatal(err)
	}
	spec := f.spec
	const conns, n = 1001, 3
	spec.Conns = conns
	var total int
	var rate, connectRate float64
	for i, cc := range spec.Split(n) {
		// What a child reads from its stdin.
		b, err := json.Marshal(cc)
		if err != nil {
			t.Fatal(err)
		}
		var got loadgen.ChildConfig
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		c, err := got.Build()
		if err != nil {
			t.Fatalf("child %d: %v", i, err)
		}
		total += c.Conns
		rate += float64(c.Rate)
		connectRate += c.ConnectRate
		if c.Direction != f.spec.Direction || !c.NoReconnect || c.Duration != 3*time.Second || c.ProbeEvery != 250*time.Millisecond ||
			!slices.Equal(c.Sources, f.spec.Sources) || c.Target != f.spec.Target {
			t.Errorf("child %d does not have the parent's settings: %s", i, b)
		}
		if (i == 0) != (c.Probe != nil) {
			t.Errorf("child %d: probe %v; only the first child probes", i, c.Probe)
		}
	}
	if total != conns || rate < 99_999_990 || rate > 100_000_010 || connectRate < 999.999 || connectRate > 1000.001 {
		t.Errorf("children add up to %d connections, %v bit/s, %v connects/s; want %d, 1e8, 1000", total, rate, connectRate, conns)
	}
}

func TestLoadWarnsOfMoreConnectionsThanDescriptors(t *testing.T) {
	t.Parallel()
	limit := loadgen.OpenFileLimit()
	if limit == 0 {
		t.Skip("no open-file limit on this system")
	}
	for _, tc := range []struct {
		f    loadFlags
		warn bool
	}{
		{loadFlags{spec: loadgen.ChildConfig{Conns: 2 * limit}, procs: 1}, true},
		{loadFlags{spec: loadgen.ChildConfig{Conns: 2 * limit}, procs: 4}, false},
		{loadFlags{spec: loadgen.ChildConfig{Conns: limit / 2}, procs: 1}, false},
		{loadFlags{spec: loadgen.ChildConfig{Conns: 2 * limit}, procs: 1, lab: true}, false}, // the netstack takes no descriptors
	} {
		var stderr bytes.Buffer
		tc.f.warnOverDescriptors(&stderr)
		if got := strings.Contains(stderr.String(), "warning:"); got != tc.warn {
			t.Errorf("%d conns over %d procs (lab %v): %q, want a warning: %v", tc.f.spec.Conns, tc.f.procs, tc.f.lab, stderr.String(), tc.warn)
		}
	}
}
