package loadgen_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

func TestRunResultsMerge(t *testing.T) {
	s := startSink(t, "127.0.0.1:0")
	run := func(conns int) loadgen.Result {
		t.Helper()
		res, err := loadgen.Run(context.Background(), loadgen.Config{
			Target:     s.Addr,
			Conns:      conns,
			Duration:   300 * time.Millisecond,
			Rate:       8e6,
			Direction:  loadgen.Both,
			Probe:      check.TCP{Address: s.Addr},
			ProbeEvery: 30 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := run(10), run(30)
	m, err := loadgen.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}

	if m.BytesUp != a.BytesUp+b.BytesUp || m.BytesDown != a.BytesDown+b.BytesDown {
		t.Errorf("merged bytes %d/%d, want %d/%d", m.BytesUp, m.BytesDown, a.BytesUp+b.BytesUp, a.BytesDown+b.BytesDown)
	}
	if m.ConnsRequested != 40 || m.Processes != 2 || m.Probes != a.Probes+b.Probes {
		t.Errorf("requested %d, processes %d, probes %d", m.ConnsRequested, m.Processes, m.Probes)
	}
	if a.RampSeconds == nil || b.RampSeconds == nil {
		t.Fatalf("a run that ended has no ramp_seconds: %v, %v", a.RampSeconds, b.RampSeconds)
	}
	// b ran after a: side by side, the ramp ends with b's.
	wantRamp := b.Start.Add(time.Duration(*b.RampSeconds * float64(time.Second))).Sub(a.Start).Seconds()
	if m.RampSeconds == nil || math.Abs(*m.RampSeconds-wantRamp) > 1e-6 {
		t.Errorf("merged ramp_seconds %v, want %v", m.RampSeconds, wantRamp)
	}
	b.RampSeconds = nil
	if m, err := loadgen.Merge(a, b); err != nil || m.RampSeconds != nil {
		t.Errorf("merged with a ramp that did not end: ramp_seconds %v, %v; want nil", m.RampSeconds, err)
	}
	for _, h := range []struct {
		name       string
		a, b, m    *hdrhistogram.Snapshot
		aP, bP, mP loadgen.Percentiles
	}{
		{"connect", a.Histograms.Connect, b.Histograms.Connect, m.Histograms.Connect, a.ConnectLatencyMS, b.ConnectLatencyMS, m.ConnectLatencyMS},
		{"probe", a.Histograms.Probe, b.Histograms.Probe, m.Histograms.Probe, a.ProbeLatencyMS, b.ProbeLatencyMS, m.ProbeLatencyMS},
	} {
		ha, hb, hm := hdrhistogram.Import(h.a), hdrhistogram.Import(h.b), hdrhistogram.Import(h.m)
		if ha.TotalCount() == 0 || hb.TotalCount() == 0 {
			t.Fatalf("%s: empty histogram", h.name)
		}
		if hm.TotalCount() != ha.TotalCount()+hb.TotalCount() || h.mP.Count != h.aP.Count+h.bP.Count {
			t.Errorf("%s: merged count %d, want %d + %d", h.name, hm.TotalCount(), ha.TotalCount(), hb.TotalCount())
		}
		// One histogram fed every sample of both runs again.
		all := loadgen.NewLatencyHistogram()
		for _, src := range []*hdrhistogram.Histogram{ha, hb} {
			for _, bar := range src.Distribution() {
				if bar.Count > 0 {
					if err := all.RecordValues(bar.From, bar.Count); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		if got, want := h.mP, loadgen.Summarize(all); got != want {
			t.Errorf("%s: merged percentiles %+v, want %+v", h.name, got, want)
		}
	}
}

func TestMergeReportsRefusesMixedShapes(t *testing.T) {
	run := loadgen.Report{Result: &loadgen.Result{}}
	sweep := loadgen.Report{Levels: []loadgen.Result{{}, {}}}
	shortSweep := loadgen.Report{Levels: []loadgen.Result{{}}}
	for _, tc := range []struct {
		reports []loadgen.Report
		mention string
	}{
		{[]loadgen.Report{run, sweep}, "b.json is a sweep and a.json is not"},
		{[]loadgen.Report{sweep, shortSweep}, "b.json has 1 levels"},
	} {
		if _, err := loadgen.MergeReports(tc.reports, []string{"a.json", "b.json"}); err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("MergeReports: %v, want an error saying %q", err, tc.mention)
		}
	}
	if _, err := loadgen.MergeReports([]loadgen.Report{run}, nil); err == nil {
		t.Error("MergeReports without names succeeded")
	}
}

func TestReadJSONRefusesWhatIsNoReport(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"empty.json": "{}", "junk.json": "not json"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := loadgen.ReadJSON(path); err == nil || !strings.Contains(err.Error(), "not a load --json report") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
