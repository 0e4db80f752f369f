package loadgen_test

import (
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

func TestPlotSweep(t *testing.T) {
	dir := t.TempDir()
	levels := []loadgen.Result{fixture(t, 5000, 900, 10000), fixture(t, 100, 2, 3), fixture(t, 1000, 20, 300)}
	path := filepath.Join(dir, "sweep.png")
	if err := (loadgen.Report{Levels: levels}).WriteFiles("", path); err != nil {
		t.Fatal(err)
	}
	testpng.Check(t, path, 960, 720)

	empty := filepath.Join(dir, "empty.png")
	if err := (loadgen.Report{Levels: nil}).WriteFiles("", empty); err != nil {
		t.Fatal(err)
	}
	testpng.Check(t, empty, 960, 720)
}
