package matrix

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/scenarios"
)

// writeShard writes rep, changed by change, as a matrix.json into dir.
func writeShard(t testing.TB, dir, name string, rep *Report, change func(*Report)) string {
	t.Helper()
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var r Report // a deep copy, for change to change
	if err := json.Unmarshal(js, &r); err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change(&r)
	}
	if js, err = json.Marshal(&r); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, js, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// x is configuration x's figures in run i of r, for a change to set.
func x(r *Report, i int, change func(c *scenarios.ConfigReport)) {
	c := r.Runs[i].Report.Configs["x"]
	change(&c)
	r.Runs[i].Report.Configs["x"] = c
}

// brokenShards change one field of a shard (0/2 of runShard's matrix) to
// what no matrix writes, and say what the merge says of it; FuzzMerge
// starts from them too.
var brokenShards = []struct {
	name   string
	change func(r *Report)
	want   string
}{
	{"detection without its time", func(r *Report) { x(r, 0, func(c *scenarios.ConfigReport) { c.Outages[0].DetectionSeconds = nil }) },
		"runs[0].report.configs.x.outages[0].detection_seconds: null, but detected is true"},
	{"negative count", func(r *Report) { x(r, 1, func(c *scenarios.ConfigReport) { c.FalseRestarts = -1000 }) },
		"runs[1].report.configs.x.false_restarts: -1000, outside 0 to the 1 restarts"},
	{"count past int", func(r *Report) { x(r, 0, func(c *scenarios.ConfigReport) { c.FalseRestarts = math.MaxInt64 }) },
		"runs[0].report.configs.x.false_restarts: 9223372036854775807, outside 0 to the 1 restarts"},
	{"empty report", func(r *Report) { r.Runs[0].Report = &scenarios.Report{} }, "runs[0].report.spec: "},
	{"no report", func(r *Report) { r.Runs[0].Report = nil }, "runs[0].report: missing"},
	{"passes added", func(r *Report) {
		for pass := 10; pass <= 19; pass++ {
			run := r.Runs[0]
			run.Pass = pass
			r.Runs = append(r.Runs, run)
		}
	}, "runs[3].pass: 10, but the matrix makes passes 1 to 3"},
	{"passes past any matrix", func(r *Report) { r.Passes = 1 << 62 }, "passes: 4611686018427387904, but a matrix makes 1 to 1000"},
	{"unknown condition", func(r *Report) { r.Runs[0].Condition = "zzz" }, `runs[0].condition: "zzz", not one of the matrix's conditions [a b]`},
	{"run of another shard", func(r *Report) { r.Runs[0].Condition = "b" }, "runs[0].pass: the run of b in pass 1 is not one shard 0/2 makes"},
	{"unknown configuration", func(r *Report) { r.Configs = []string{"y"} }, "runs[0].report.configs.x: not one of the matrix's configurations [y]"},
	{"no conditions", func(r *Report) { r.Conditions = nil }, fmt.Sprintf("conditions: 0, but a matrix runs 1 to %d (as many as the built-in ones)", len(scenarios.MatrixConditions()))},
	{"a condition twice", func(r *Report) { r.Conditions = []string{"a", "a"} }, `conditions[1]: "a", but each is named, once`},
	{"detected but not said", func(r *Report) { x(r, 0, func(c *scenarios.ConfigReport) { c.OutageDetected = false }) },
		"runs[0].report.configs.x.outage_detected: false, but the outages say true"},
	{"restarts not in the timeline", func(r *Report) { x(r, 0, func(c *scenarios.ConfigReport) { c.Restarts = 5 }) },
		"runs[0].report.configs.x.restarts: 5, but timeline.restarts holds 1"},
	{"wall time past any matrix", func(r *Report) { r.WallSeconds = 1e308 }, "wall_seconds: 1e+308 s, outside 0 to"},
	{"weeks of runs", func(r *Report) { r.Passes = 1000 }, "not a matrix that runs: 1000 passes of 1h0m0s take"},
}

// A shard with one field out of what a matrix writes is refused, naming the
// file and the field, rather than panicking in the rates or the plots
// (SIGSEGV on a detection without its time, cephes' "parameter out of
// bounds" on a negative or overflowing count, "w and h must both be > 0" on
// an empty report), or counting runs no matrix makes (passes 10 to 19 of a
// 3-pass matrix, a pass count of 2^62, a condition of no matrix).
func TestMergeFilesRefusesWhatNoMatrixWrites(t *testing.T) {
	dir := t.TempDir()
	first, second := runShard(t, Shard{0, 2}), runShard(t, Shard{1, 2})
	good := writeShard(t, dir, "good.json", second, nil)
	for _, tc := range brokenShards {
		t.Run(tc.name, func(t *testing.T) {
			bad := writeShard(t, dir, "bad.json", first, tc.change)
			files := []string{bad, good}
			if tc.name == "weeks of runs" {
				files = files[:1] // alone: the other shard is of 3 passes
			}
			rep, err := MergeFiles(files)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("MergeFiles: %v, %v\nwant an error with %q", rep, err, tc.want)
			}
			if want := bad + ": "; tc.name != "weeks of runs" && !strings.HasPrefix(err.Error(), want) {
				t.Errorf("the error does not start with the file: %v", err)
			}
		})
	}
}

// Files are checked before they are read: a device never ends, a file
// larger than a matrix writes is refused unread, and a shard given twice by
// name or through a link is refused naming both.
func TestMergeFilesChecksFilesFirst(t *testing.T) {
	dir := t.TempDir()
	shard := writeShard(t, dir, "shard.json", runShard(t, Shard{0, 2}), nil)
	zero, link, huge := filepath.Join(dir, "zero.json"), filepath.Join(dir, "link.json"), filepath.Join(dir, "huge.json")
	for target, name := range map[string]string{"/dev/zero": zero, shard: link} {
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxJSONSize + 1); err != nil { // sparse: its size is what counts
		t.Fatal(err)
	}
	f.Close()
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{[]string{shard, zero}, zero + ": a device, not a regular file as a matrix.json is"},
		{[]string{huge, shard}, huge + ": 2147483649 bytes, more than the 2147483648 (2048 MiB) a matrix.json can take"},
		{[]string{shard, link}, shard + " and " + link + " are the same file"},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := MergeFiles(tc.files)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("MergeFiles(%v): %v\nwant an error with %q", tc.files, err, tc.want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
			t.Errorf("MergeFiles(%v) allocated %d bytes before refusing", tc.files, alloc)
		}
	}
}

// A matrix.json of runs written smaller than a matrix writes them (300,000
// runs of {"report":{}} took 294 MB for 17 MB), or of more runs than any
// matrix makes, is refused before it is decoded, naming the array, in
// little more memory than the file.
func TestReadJSONRefusesDenseRuns(t *testing.T) {
	js, err := json.Marshal(runShard(t, Shard{}))
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(js, &top); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]string{
		9_000:   "runs: 9000 entries in 350965 bytes would take",
		300_000: fmt.Sprintf("runs: 300000 entries, more than its kind of file holds: at most %d", 1000*len(scenarios.MatrixConditions())),
	} {
		top["runs"] = json.RawMessage("[" + strings.Repeat(`{"condition":"a","pass":1,"report":{}},`, n-1) + `{}]`)
		dense, err := json.Marshal(top)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = ReadJSON(dense)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ReadJSON: %v\nwant an error starting %q", err, want)
		}
		if alloc, most := after.TotalAlloc-before.TotalAlloc, uint64(len(dense)/2+1<<20); alloc > most {
			t.Errorf("ReadJSON of %d bytes allocated %d, want at most %d", len(dense), alloc, most)
		}
	}
}
