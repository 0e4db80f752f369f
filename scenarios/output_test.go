package scenarios

import (
	"os"
	"path/filepath"
	"testing"
)

// CheckOutputDir creates the folder when asked, finds one that cannot take
// a file, and leaves nothing behind.
func TestCheckOutputDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := CheckOutputDir(dir, false); err == nil {
		t.Error("a missing folder passed without create")
	}
	if err := CheckOutputDir(dir, true); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("left %v (%v); want an empty folder", entries, err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{file, filepath.Join(file, "results")} {
		if err := CheckOutputDir(bad, true); err == nil {
			t.Errorf("%s passed", bad)
		}
	}
}
