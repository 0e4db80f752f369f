package matrix

import (
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/scenarios"
)

// FuzzMerge: no pair of shards read by ReadJSON panics the merge or
// anything written of it (the rates, the tables, matrix.png, each run's
// report, plots and CI files); what ReadJSON accepts merges or is refused.
func FuzzMerge(f *testing.F) {
	first, second := runShard(f, Shard{0, 2}), runShard(f, Shard{1, 2})
	for _, pair := range [][2]*Report{{first, second}, {runShard(f, Shard{}), nil}} {
		var js [2][]byte
		for i, r := range pair {
			if r != nil {
				b, err := json.Marshal(r)
				if err != nil {
					f.Fatal(err)
				}
				js[i] = b
			}
		}
		f.Add(js[0], js[1])
	}
	// The shards of the attacks, each with the other shard.
	secondJS, err := json.Marshal(second)
	if err != nil {
		f.Fatal(err)
	}
	for _, bs := range brokenShards {
		f.Add(brokenShard(f, first, bs.change), secondJS)
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var reports []*Report
		for _, data := range [][]byte{a, b} {
			if len(data) == 0 {
				continue
			}
			r, err := ReadJSON(data)
			if err != nil {
				return
			}
			reports = append(reports, r)
		}
		if len(reports) == 0 {
			return
		}
		m, err := Merge(reports...)
		if err != nil {
			return
		}
		writeAll(t, m)
	})
}

// writeAll writes everything the merge writes of m, to nowhere.
func writeAll(t *testing.T, m *Report) {
	t.Helper()
	for _, write := range []func(io.Writer) error{m.WriteTable, m.WriteMarkdown, m.WriteJSON, m.PlotMatrix} {
		if err := write(io.Discard); err != nil {
			t.Fatalf("writing the merged matrix: %v", err)
		}
	}
	for _, run := range m.Runs {
		r := run.Report
		for _, write := range []func(io.Writer) error{r.WriteTable, r.WriteMarkdown, r.WriteJSON, r.PlotSummary, r.PlotTimeline} {
			if err := write(io.Discard); err != nil {
				t.Fatalf("writing run %s/%d: %v", run.Condition, run.Pass, err)
			}
		}
		_, _ = r.Breaches(), r.Failures()
	}
	runs := m.CIRuns()
	if err := scenarios.WriteJUnit(io.Discard, runs); err != nil {
		t.Fatal(err)
	}
	if err := scenarios.WriteCISummary(io.Discard, runs); err != nil {
		t.Fatal(err)
	}
}

// brokenShard is rep, changed by change, as JSON.
func brokenShard(f *testing.F, rep *Report, change func(*Report)) []byte {
	f.Helper()
	js, err := os.ReadFile(writeShard(f, f.TempDir(), "broken.json", rep, change))
	if err != nil {
		f.Fatal(err)
	}
	return js
}
