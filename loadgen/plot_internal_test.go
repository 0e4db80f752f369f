package loadgen

import (
	"slices"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// sweepLevels are three levels of a lab sweep: 10 and 100 connections
// without a failed probe, 1,000 with 1 of 8 failed, 7 passed at a p99
// equal to their max (fewer than 100 samples).
func sweepLevels() []Result {
	delivered := func(b int64) *int64 { return &b }
	level := func(conns int64, failed, probes int64, p99 float64, up int64) Result {
		return Result{Target: "10.99.0.1:9", Path: "lab", DurationSeconds: 10, ConnsRequested: int(conns), ConnsAchieved: conns,
			BytesUp: 2 * up, DeliveredUp: delivered(up), Probes: probes, ProbeFailures: failed,
			ProbeLatencyMS: Percentiles{P50: p99 / 3, P99: p99, Max: p99, Count: probes - failed}}
	}
	return []Result{level(1000, 1, 8, 1382, 25_000_000), level(10, 0, 9, 1005, 24_000_000), level(100, 0, 8, 1117, 25_000_000)}
}

// The sweep's points: by connections, failed probes in percent (12.5 for
// 1 of 8, not 0.125), up as delivered, and the samples each level rests
// on.
func TestSweepPoints(t *testing.T) {
	d := sweepPoints(sweepLevels())
	xs := func(xys plotter.XYs) []float64 {
		var out []float64
		for _, xy := range xys {
			out = append(out, xy.X)
		}
		return out
	}
	if got := xs(d.up); !slices.Equal(got, []float64{10, 100, 1000}) {
		t.Errorf("levels at %v, want 10, 100, 1000", got)
	}
	if got := d.failed[2].Y; got != 12.5 {
		t.Errorf("1 of 8 probes failed drawn at %v%%, want 12.5", got)
	}
	if got := d.up[0].Y; got != 19.2 {
		t.Errorf("up at 10 connections %v Mbit/s, want the 19.2 delivered", got)
	}
	if !slices.Equal(d.samples, []string{"9 probes passed", "8 probes passed", "7 probes passed"}) ||
		!slices.Equal(d.outOf, []string{"0 of 9", "0 of 8", "1 of 8"}) {
		t.Errorf("sample labels %q, %q", d.samples, d.outOf)
	}
	lines := d.latencyLines()
	if last := lines[len(lines)-1]; last.name != "max" || !last.dashed || lines[1].name != "p99" {
		t.Errorf("latency lines %+v, want max drawn last, dashed, over p99", lines)
	}
}

// A sweep that probed has a latency, a failed-probes and a throughput
// panel; its failed probes run on an axis to 100%. One that did not has
// the throughput only.
func TestSweepPanels(t *testing.T) {
	panels, err := sweepPanels(sweepLevels())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range panels {
		names = append(names, p.Y.Label.Text)
	}
	if !slices.Equal(names, []string{"probe latency (ms)", "failed probes (%)", "throughput (Mbit/s)"}) {
		t.Fatalf("panels %q", names)
	}
	if fp := panels[1]; fp.Y.Min != 0 || fp.Y.Max != 100 {
		t.Errorf("failed probes from %v to %v%%, want 0 to 100", fp.Y.Min, fp.Y.Max)
	}
	levels := sweepLevels()
	for i := range levels {
		levels[i].Probes, levels[i].ProbeFailures = 0, 0
	}
	if panels, err := sweepPanels(levels); err != nil || len(panels) != 1 || panels[0].Y.Label.Text != "throughput (Mbit/s)" {
		t.Errorf("a sweep without probes: %d panels, %v", len(panels), err)
	}
}
