package matrix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Merge adds up the reports of a matrix's shards (Options.Shard, run on
// several machines) into the whole matrix's: the runs gathered in the
// whole matrix's order and the rates recomputed from them, from the summed
// counts and hours, never averaged. It refuses reports of different
// matrices (conditions, configurations, passes, a condition's spec or its
// first seed) and a run found twice, as a shard merged twice gives. The
// merged report's wall time is the shards' summed, its memory the largest.
func Merge(reports ...*Report) (*Report, error) {
	if len(reports) == 0 {
		return nil, fmt.Errorf("merge: no report")
	}
	first := reports[0]
	out := &Report{Started: first.Started, Conditions: first.Conditions, Configs: first.Configs, Passes: first.Passes}
	specs := map[string][]byte{} // a condition's spec, seed left out
	seeds := map[string]uint64{} // a condition's first pass's seed
	where := map[[2]string]int{} // a run's condition and pass, and the report it came from
	for i, r := range reports {
		if !slices.Equal(r.Conditions, first.Conditions) || !slices.Equal(r.Configs, first.Configs) || r.Passes != first.Passes {
			return nil, fmt.Errorf("merge: report %d is of another matrix: conditions %v, configurations %v, %d passes; report 1 has %v, %v, %d",
				i+1, r.Conditions, r.Configs, r.Passes, first.Conditions, first.Configs, first.Passes)
		}
		for _, run := range r.Runs {
			key := [2]string{run.Condition, fmt.Sprint(run.Pass)}
			if j, ok := where[key]; ok {
				return nil, fmt.Errorf("merge: the run of %s in pass %d is in reports %d and %d: a shard merged twice?", run.Condition, run.Pass, j, i+1)
			}
			where[key] = i + 1
			if err := sameCondition(run, specs, seeds); err != nil {
				return nil, fmt.Errorf("merge: report %d: %w", i+1, err)
			}
			out.Runs = append(out.Runs, run)
		}
		if r.Started.Before(out.Started) {
			out.Started = r.Started
		}
		out.WallSeconds += r.WallSeconds
		out.PeakRSSBytes = max(out.PeakRSSBytes, r.PeakRSSBytes)
		out.Interrupted = out.Interrupted || r.Interrupted
	}
	slices.SortStableFunc(out.Runs, func(a, b RunReport) int {
		if a.Pass != b.Pass {
			return a.Pass - b.Pass
		}
		return slices.Index(out.Conditions, a.Condition) - slices.Index(out.Conditions, b.Condition)
	})
	out.rate()
	return out, nil
}

// sameCondition checks that run's condition has the spec and first seed
// that the runs before it had (recorded in specs and seeds).
func sameCondition(run RunReport, specs map[string][]byte, seeds map[string]uint64) error {
	if run.Report == nil {
		return fmt.Errorf("the run of %s in pass %d has no report", run.Condition, run.Pass)
	}
	spec := run.Report.Spec
	spec.Seed = 0
	js, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	seed := run.Seed - uint64(run.Pass-1)
	if prev, ok := specs[run.Condition]; ok && (!bytes.Equal(prev, js) || seeds[run.Condition] != seed) {
		return fmt.Errorf("the run of %s in pass %d has another spec or seed than the same condition's other runs: shards of different matrices?", run.Condition, run.Pass)
	}
	specs[run.Condition], seeds[run.Condition] = js, seed
	return nil
}

// MaxJSONSize bounds a matrix.json that MergeFiles reads: a pass of the
// ten conditions writes about 5 MiB, timelines included.
const MaxJSONSize = 1 << 30

// MergeFiles reads the matrix.json files of a matrix's shards and merges
// them (see Merge); an error names the file.
func MergeFiles(files []string) (*Report, error) {
	reports := make([]*Report, len(files))
	for i, name := range files {
		data, err := readBounded(name)
		if err == nil {
			reports[i], err = ReadJSON(data)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	rep, err := Merge(reports...)
	if err != nil {
		return nil, fmt.Errorf("%w (files in order: %s)", err, strings.Join(files, ", "))
	}
	return rep, nil
}

// readBounded reads a file of at most MaxJSONSize bytes.
func readBounded(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxJSONSize+1))
	if err == nil && len(data) > MaxJSONSize {
		err = fmt.Errorf("larger than %d MiB, more than a matrix.json holds", MaxJSONSize>>20)
	}
	return data, err
}

// ReadJSON reads a matrix.json.
func ReadJSON(data []byte) (*Report, error) {
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	if len(r.Conditions) == 0 || r.Passes < 1 {
		return nil, fmt.Errorf("not a matrix.json: no conditions or passes")
	}
	return &r, nil
}
