// Package testpng checks PNG files that tests make: the plots of the load
// generator and the scenarios.
package testpng

import (
	"image/png"
	"os"
	"testing"
)

// Check fails t unless path holds a PNG of w×h pixels.
func Check(t testing.TB, path string, w, h int) {
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
