package matrix

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/scenarios"
)

// runShard runs the two tiny conditions over 3 passes, as shard sh.
func runShard(t testing.TB, sh Shard) *Report {
	t.Helper()
	f := &fakeRun{}
	rep, err := Run(context.Background(), []scenarios.Spec{validCondition("a", 1), validCondition("b", 4)}, Options{
		Repeat: 3, Shard: sh, run: f.run, cpuTimes: func() (float64, float64, error) { return 0, 0, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	// Through matrix.json, as scenario merge reads the shards.
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// Two shards, merged, are the unsharded matrix of the same seeds: the same
// runs in the same order, the same rates; a shard merged twice, or one of
// another matrix, is refused.
func TestMergeOfShardsIsTheWholeMatrix(t *testing.T) {
	whole := runShard(t, Shard{})
	first, second := runShard(t, Shard{0, 2}), runShard(t, Shard{1, 2})
	if first.Shard != "0/2" || len(first.Runs) != 3 || len(second.Runs) != 3 {
		t.Fatalf("shards %q with %d and %d runs, want 3 each of 6", first.Shard, len(first.Runs), len(second.Runs))
	}
	merged, err := Merge(second, first)
	if err != nil {
		t.Fatal(err)
	}
	order := func(r *Report) (s []string) {
		for _, run := range r.Runs {
			s = append(s, run.Condition+"/"+string(rune('0'+run.Pass))+"/"+string(rune('0'+run.Seed)))
		}
		return s
	}
	if got, want := strings.Join(order(merged), " "), strings.Join(order(whole), " "); got != want {
		t.Errorf("merged runs %s, want %s", got, want)
	}
	for _, m := range []struct {
		name      string
		got, want any
	}{{"overall", merged.Overall, whole.Overall}, {"by condition", merged.ByCondition, whole.ByCondition}} {
		got, _ := json.Marshal(m.got)
		want, _ := json.Marshal(m.want)
		if string(got) != string(want) {
			t.Errorf("%s rates:\n%s\nwant\n%s", m.name, got, want)
		}
	}
	if _, err := Merge(first, second, first); err == nil || !strings.Contains(err.Error(), "merged twice") {
		t.Errorf("a shard merged twice: %v", err)
	}
	other := runShard(t, Shard{1, 2})
	other.Runs[0].Report.Spec.Duration = scenarios.D(other.Runs[0].Report.Spec.Duration.Duration * 2)
	if _, err := Merge(first, other); err == nil || !strings.Contains(err.Error(), "another spec") {
		t.Errorf("shards of different specs: %v", err)
	}
	fewer := runShard(t, Shard{1, 2})
	fewer.Passes, fewer.Runs = 2, fewer.Runs[:2] // the shard of a matrix of two passes
	if _, err := Merge(first, fewer); err == nil || !strings.Contains(err.Error(), "another matrix") {
		t.Errorf("shards of different matrices: %v", err)
	}
}

func TestParseShard(t *testing.T) {
	for in, want := range map[string]string{"0/4": "", "3/4": "", "4/4": "from 0 to n-1", "1/0": "at least 1", "1of4": "not i/n", "-1/4": "from 0", "01/4": "not i/n"} {
		_, err := ParseShard(in)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// A configuration's margin over runs is the closest it came in any.
func TestRatesKeepTheClosestMargin(t *testing.T) {
	run := func(inARow int, slowest float64) RunReport {
		return RunReport{Condition: "a", Report: &scenarios.Report{Configs: map[string]scenarios.ConfigReport{"x": {
			WorkingSeconds: 60, Margin: scenarios.Margin{MostFailedInARow: inARow, FailureThreshold: 3, SlowestPassMS: slowest, TimeoutMS: 10000},
		}}}}
	}
	r := rates("x", []RunReport{run(2, 300), run(0, 9100), run(1, 50)})
	if want := (scenarios.Margin{MostFailedInARow: 2, FailureThreshold: 3, SlowestPassMS: 9100, TimeoutMS: 10000}); r.Margin != want {
		t.Errorf("margin %+v, want %+v", r.Margin, want)
	}
}
