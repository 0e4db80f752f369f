package loadgen_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

func TestMergeFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := validRun(t), validRun(t)
	b.Start = b.Start.Add(time.Nanosecond) // another run, side by side
	files := []string{
		writeReport(t, dir, "a.json", loadgen.Report{Result: &a}),
		writeReport(t, dir, "b.json", loadgen.Report{Result: &b}),
	}
	merged, err := loadgen.MergeFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	if merged.Result == nil || merged.ConnsRequested != a.ConnsRequested+b.ConnsRequested {
		t.Errorf("merged %+v, want one run of %d connections requested", merged.Result, a.ConnsRequested+b.ConnsRequested)
	}

	sweep := writeReport(t, dir, "sweep.json", loadgen.Report{Levels: []loadgen.Result{validRun(t)}})
	if _, err := loadgen.MergeFiles([]string{files[0], sweep}); err == nil || !strings.Contains(err.Error(), "sweep.json is a sweep") {
		t.Errorf("a run with a sweep: %v, want an error naming the sweep", err)
	}
	missing := dir + "/missing.json"
	if _, err := loadgen.MergeFiles([]string{files[0], missing}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing file: %v, want an error naming it", err)
	}
}
