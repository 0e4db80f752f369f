package matrix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/tunnelprobe/tunnelprobe/internal/infile"
	"github.com/tunnelprobe/tunnelprobe/internal/jsonsize"
	"github.com/tunnelprobe/tunnelprobe/scenarios"
)

// Merge adds up the reports of a matrix's shards (Options.Shard, run on
// several machines) into the whole matrix's: the runs gathered in the
// whole matrix's order and the rates recomputed from them, from the summed
// counts and hours, never averaged. It refuses a report that no matrix
// writes (see ReadJSON), reports of different matrices (conditions,
// configurations, passes, a condition's spec or its first seed), a run
// found twice, as a shard merged twice gives, and passes of the
// conditions that would take longer than MinDuration allows. The merged
// report's wall time is the shards' summed, its memory the largest.
func Merge(reports ...*Report) (*Report, error) {
	if len(reports) == 0 {
		return nil, fmt.Errorf("merge: no report")
	}
	for i, r := range reports {
		if err := r.validate(); err != nil {
			return nil, fmt.Errorf("merge: report %d: %w", i+1, err)
		}
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
	if err := out.checkDuration(); err != nil {
		return nil, err
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

// checkDuration refuses a merge whose passes over its runs' conditions
// would take longer than MinDuration allows a matrix: no matrix made them.
func (m *Report) checkDuration() error {
	var specs []scenarios.Spec
	for _, cond := range m.Conditions {
		if i := slices.IndexFunc(m.Runs, func(r RunReport) bool { return r.Condition == cond }); i >= 0 {
			specs = append(specs, m.Runs[i].Report.Spec)
		}
	}
	if _, err := MinDuration(specs, m.Passes); err != nil {
		return fmt.Errorf("merge: not a matrix that runs: %w", err)
	}
	return nil
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

// MaxJSONSize bounds a matrix.json that MergeFiles reads, and the shards
// it merges together, since they hold together what the whole matrix
// holds: a pass of the ten built-in conditions writes about 5 MiB,
// timelines included, and the most passes a week of runs allows (318, see
// MinDuration) about 1.6 GB.
const MaxJSONSize = 2 << 30

// maxDecodedPerByte bounds the memory a matrix.json decodes into, per byte
// of it, past decodedSlack: the timelines that make most of a matrix.json
// take less memory than their text, even written without indentation,
// while an array of {} would take up to a hundred times more.
const (
	maxDecodedPerByte = 3
	decodedSlack      = 1 << 20
)

// arrayLimits are the most entries a matrix writes into the arrays of a
// matrix.json of known length, counted before it is decoded: runs of at
// most MaxRepeat passes over the built-in conditions, specs within their
// count limits, an outage report per outage.
var arrayLimits = map[string]int{
	"conditions":                    maxConditions,
	"configs":                       scenarios.MaxConfigs,
	"runs":                          MaxRepeat * maxConditions,
	"runs.report.spec.configs":      scenarios.MaxConfigs,
	"runs.report.spec.link.outages": scenarios.MaxOutages,
	"runs.report.spec.link.changes": scenarios.MaxLinkChanges,
	"runs.report.configs":           scenarios.MaxConfigs,
	"runs.report.order":             scenarios.MaxConfigs,
	"runs.report.configs.*.outages": scenarios.MaxOutages,
}

// jsonKind names a matrix.json in the errors.
const jsonKind = "a matrix.json"

// MergeFiles reads the matrix.json files of a matrix's shards and merges
// them (see Merge); an error names the file, and the field it refuses
// (see ReadJSON). A file given twice (by name or through a link), or
// shards larger together than MaxJSONSize, are refused before any is read.
func MergeFiles(files []string) (*Report, error) {
	if err := checkFiles(files); err != nil {
		return nil, err
	}
	reports := make([]*Report, len(files))
	for i, name := range files {
		data, _, err := infile.Read(name, MaxJSONSize, jsonKind)
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

// checkFiles refuses files that are not regular ones of at most
// MaxJSONSize, together too, or one given twice.
func checkFiles(files []string) error {
	infos := make([]fs.FileInfo, len(files))
	var total int64
	for i, name := range files {
		fi, err := infile.Stat(name, MaxJSONSize, jsonKind)
		if err != nil {
			return err
		}
		for j := range i {
			if os.SameFile(fi, infos[j]) {
				return fmt.Errorf("%s and %s are the same file: a shard merged twice?", files[j], name)
			}
		}
		infos[i] = fi
		if total += fi.Size(); total > MaxJSONSize {
			return fmt.Errorf("%s: the files up to it take %d bytes, more than the %d (%d MiB) that the shards of a matrix hold together",
				name, total, int64(MaxJSONSize), MaxJSONSize>>20)
		}
	}
	return nil
}

// ReadJSON reads a matrix.json, refusing what a matrix cannot have
// written, naming the field by its JSON path (runs[3].pass: see
// Report.validate), and before decoding it, one that would decode into
// more than maxDecodedPerByte times its size (an array of {} decodes into
// as many whole elements) or has more entries than arrayLimits allow.
func ReadJSON(data []byte) (*Report, error) {
	if err := jsonsize.Bound(data, reflect.TypeFor[Report](), maxDecodedPerByte, decodedSlack, arrayLimits); err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	if err := r.validate(); err != nil {
		return nil, err
	}
	return &r, nil
}
