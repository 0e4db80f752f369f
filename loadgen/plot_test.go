package loadgen_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/internal/testpng"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

func TestPlotRun(t *testing.T) {
	dir := t.TempDir()
	r := fixture(t, 1000, 12.5, 40, 250, 9.75)
	path := filepath.Join(dir, "run.png")
	if err := (loadgen.Report{Result: &r}).WriteFiles("", path); err != nil {
		t.Fatal(err)
	}
	testpng.Check(t, path, 960, 960)

	// A run stopped before its first second still plots.
	empty := filepath.Join(dir, "empty.png")
	r.Series = nil
	if err := (loadgen.Report{Result: &r}).WriteFiles("", empty); err != nil {
		t.Fatal(err)
	}
	testpng.Check(t, empty, 960, 960)
}

// A run without --probe has no probe panel, rather than an empty one.
func TestPlotRunWithoutProbes(t *testing.T) {
	r := fixture(t, 100, 1)
	r.Probes, r.ProbeFailures = 0, 0
	for i := range r.Series {
		r.Series[i].Probes, r.Series[i].ProbeFailures, r.Series[i].ProbeMaxMS = 0, 0, 0
	}
	path := filepath.Join(t.TempDir(), "run.png")
	if err := (loadgen.Report{Result: &r}).WriteFiles("", path); err != nil {
		t.Fatal(err)
	}
	testpng.Check(t, path, 960, 640)
}

func TestPlotSweep(t *testing.T) {
	dir := t.TempDir()
	levels := []loadgen.Result{fixture(t, 5000, 900, 10000), fixture(t, 100, 2, 3), fixture(t, 1000, 20, 300)}
	if d := os.Getenv("TUNNELPROBE_PLOT_DIR"); d != "" {
		dir = d // for a person to look at
	}
	path := filepath.Join(dir, "sweep.png")
	if err := (loadgen.Report{Levels: levels}).WriteFiles("", path); err != nil {
		t.Fatal(err)
	}
	testpng.Check(t, path, 960, 960)

	// No level, so no probe: the throughput panel alone.
	empty := filepath.Join(dir, "empty.png")
	if err := (loadgen.Report{Levels: nil}).WriteFiles("", empty); err != nil {
		t.Fatal(err)
	}
	testpng.Check(t, empty, 960, 320)
}
