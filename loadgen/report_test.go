package loadgen_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

// go test ./loadgen -run 'Summary|Sweep|JSON' -update rewrites the golden
// files from the current output.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fixture returns a Result as a two-process run of conns connections would
// produce it, with fixed figures so that the output is stable.
func fixture(t *testing.T, conns int, probeMS ...float64) loadgen.Result {
	t.Helper()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	connect, probe := loadgen.NewLatencyHistogram(), loadgen.NewLatencyHistogram()
	for i := range conns {
		loadgen.RecordLatency(connect, time.Duration(100+i%900)*time.Microsecond)
	}
	for _, ms := range probeMS {
		loadgen.RecordLatency(probe, time.Duration(ms*float64(time.Millisecond)))
	}
	r := loadgen.Result{
		Target:          "127.0.0.1:9000",
		Path:            "direct",
		Start:           start,
		DurationSeconds: 4,
		Processes:       2,
		ConnsRequested:  conns,
		ConnsAchieved:   int64(conns - conns/100),
		BytesUp:         int64(conns) * 1_250_000,
		BytesDown:       int64(conns) * 125_000,
		Disruptions:     3,
		Errors:          map[string]int64{"other": 1, "refused": 2, "timeout": 4},
		Probes:          int64(len(probeMS) + 1),
		ProbeFailures:   1,
		Histograms:      loadgen.Histograms{Connect: connect.Export(), Probe: probe.Export()},
	}
	r.ConnectLatencyMS = loadgen.Summarize(connect)
	r.ProbeLatencyMS = loadgen.Summarize(probe)
	for i := range 4 {
		r.Series = append(r.Series, loadgen.Second{
			T: start.Unix() + int64(i) + 1, BytesUp: r.BytesUp / 4, BytesDown: r.BytesDown / 4,
			Open: r.ConnsAchieved * int64(i+1) / 4, Connects: int64(conns / 4), Probes: 1,
			ProbeMaxMS: probeMS[i%len(probeMS)], ProbeFailures: int64(i / 3), RSSBytes: 8 << 20,
		})
	}
	return r
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update if the change is intended)\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestWriteSummary(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    func() loadgen.Result
	}{
		{"summary.golden", func() loadgen.Result {
			r := fixture(t, 1000, 12.5, 40, 250, 9.75)
			ramp := 0.8
			r.RampSeconds = &ramp
			return r
		}},
		{"summary_interrupted.golden", func() loadgen.Result {
			r := fixture(t, 10, 1)
			r.Interrupted, r.Probes, r.ProbeFailures, r.Errors = true, 0, 0, nil
			r.ProbeLatencyMS = loadgen.Percentiles{}
			return r
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := loadgen.WriteSummary(&b, tc.r()); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, b.Bytes())
		})
	}
}

func TestWriteSweepTable(t *testing.T) {
	levels := []loadgen.Result{fixture(t, 100, 2, 3), fixture(t, 1000, 20, 300), fixture(t, 5000, 900, 10000)}
	levels[2].Interrupted = true
	var b bytes.Buffer
	if err := loadgen.WriteSweepTable(&b, levels); err != nil {
		t.Fatal(err)
	}
	golden(t, "sweep.golden", b.Bytes())
}

// requiredFields are the top-level fields the issue promises in --json.
var requiredFields = []string{
	"conns_requested", "conns_achieved", "bytes_up", "bytes_down", "disruptions", "errors",
	"connect_latency_ms", "probe_latency_ms", "probe_failures", "series",
}

func TestWriteJSON(t *testing.T) {
	dir := t.TempDir()
	r := fixture(t, 100, 5, 7)
	r.Errors, r.Series = nil, nil // written as {} and [], never null

	single := filepath.Join(dir, "run.json")
	if err := (loadgen.Report{Result: &r}).WriteFiles(single, ""); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(single)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "report.json.golden", b)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	for _, f := range requiredFields {
		if v, ok := top[f]; !ok || string(v) == "null" {
			t.Errorf("field %q is %s", f, v)
		}
	}
	for _, f := range []string{"p50", "p90", "p99", "max"} {
		var p map[string]float64
		if err := json.Unmarshal(top["probe_latency_ms"], &p); err != nil {
			t.Fatal(err)
		}
		if _, ok := p[f]; !ok {
			t.Errorf("probe_latency_ms has no %q", f)
		}
	}
	if _, ok := top["levels"]; ok {
		t.Error("a single run has levels")
	}
	// The report reads back into a Result that merges: the histograms
	// survive the round trip.
	var back loadgen.Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Result == nil || back.ConnsRequested != 100 {
		t.Fatalf("read back %+v", back.Result)
	}
	m, err := loadgen.Merge(*back.Result, *back.Result)
	if err != nil {
		t.Fatalf("merge of a read-back report: %v", err)
	}
	want := r.ConnectLatencyMS
	want.Count *= 2
	if m.ConnectLatencyMS != want {
		t.Errorf("connect latency after a round trip and a merge: %+v, want %+v", m.ConnectLatencyMS, want)
	}

	sweep := filepath.Join(dir, "sweep.json")
	levels := []loadgen.Result{fixture(t, 10, 1), fixture(t, 20, 2)}
	if err := (loadgen.Report{Levels: levels}).WriteFiles(sweep, ""); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(sweep)
	if err != nil {
		t.Fatal(err)
	}
	var sw struct {
		Levels []map[string]json.RawMessage `json:"levels"`
	}
	top = nil
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	if len(top) != 1 {
		t.Errorf("sweep report has top-level fields %v, want levels only", keys(top))
	}
	if err := json.Unmarshal(b, &sw); err != nil {
		t.Fatal(err)
	}
	if len(sw.Levels) != 2 {
		t.Fatalf("%d levels, want 2", len(sw.Levels))
	}
	for i, l := range sw.Levels {
		for _, f := range requiredFields {
			if _, ok := l[f]; !ok {
				t.Errorf("level %d has no %q", i, f)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestWriteJSONBadPath(t *testing.T) {
	r := fixture(t, 1, 1)
	if err := (loadgen.Report{Result: &r}).WriteFiles(filepath.Join(t.TempDir(), "missing", "r.json"), ""); err == nil {
		t.Error("no error for a directory that does not exist")
	}
}

func keys(m map[string]json.RawMessage) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
