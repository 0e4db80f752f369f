package loadgen_test

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

// checkPNG fails unless path holds a PNG of w×h pixels.
func checkPNG(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Errorf("%s is %dx%d, want %dx%d", path, b.Dx(), b.Dy(), w, h)
	}
}

func TestPlotRun(t *testing.T) {
	dir := t.TempDir()
	r := fixture(t, 1000, 12.5, 40, 250, 9.75)
	path := filepath.Join(dir, "run.png")
	if err := loadgen.PlotRun(path, r); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, 960, 960)

	// A run stopped before its first second still plots.
	empty := filepath.Join(dir, "empty.png")
	r.Series = nil
	if err := loadgen.PlotRun(empty, r); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, empty, 960, 960)
}

func TestPlotSweep(t *testing.T) {
	dir := t.TempDir()
	levels := []loadgen.Result{fixture(t, 5000, 900, 10000), fixture(t, 100, 2, 3), fixture(t, 1000, 20, 300)}
	path := filepath.Join(dir, "sweep.png")
	if err := loadgen.PlotSweep(path, levels); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, 960, 720)

	empty := filepath.Join(dir, "empty.png")
	if err := loadgen.PlotSweep(empty, nil); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, empty, 960, 720)
}
