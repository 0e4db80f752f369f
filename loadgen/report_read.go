package loadgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// ReadJSON reads a report that WriteJSON wrote (load --json); the error
// says when the file is not one.
func ReadJSON(file string) (Report, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return Report{}, err
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return Report{}, fmt.Errorf("%s: not a load --json report: %w", file, err)
	}
	if rep.Result == nil && len(rep.Levels) == 0 {
		return Report{}, fmt.Errorf("%s: not a load --json report: neither a result nor levels", file)
	}
	if rep.Result != nil && len(rep.Levels) > 0 {
		return Report{}, fmt.Errorf("%s: both a result and levels", file)
	}
	return rep, nil
}

// MergeReports merges reports of runs that ran side by side exactly (see
// Merge): single runs into one run, sweeps level by level; every sweep must
// have the same levels. names (the files they were read from) name the
// reports in the errors.
func MergeReports(reports []Report, names []string) (Report, error) {
	if len(reports) == 0 || len(names) != len(reports) {
		return Report{}, errors.New("loadgen: MergeReports needs one name per report, and a report")
	}
	files := names
	sweep := reports[0].Result == nil
	levels := len(reports[0].Levels)
	for i, r := range reports {
		switch {
		case (r.Result == nil) != sweep:
			return Report{}, fmt.Errorf("%s is a sweep and %s is not: merge runs with runs, sweeps with sweeps", sweepFile(files, reports), runFile(files, reports))
		case sweep && len(r.Levels) != levels:
			return Report{}, fmt.Errorf("%s has %d levels, %s has %d: sweeps merge only level by level", files[i], len(r.Levels), files[0], levels)
		}
	}
	if !sweep {
		results := make([]Result, len(reports))
		for i, r := range reports {
			results[i] = *r.Result
		}
		m, err := Merge(results...)
		if err != nil {
			return Report{}, err
		}
		return Report{Result: &m}, nil
	}
	var out Report
	for l := range levels {
		results := make([]Result, len(reports))
		for i, r := range reports {
			results[i] = r.Levels[l]
		}
		m, err := Merge(results...)
		if err != nil {
			return Report{}, fmt.Errorf("level %d: %w", l+1, err)
		}
		out.Levels = append(out.Levels, m)
	}
	return out, nil
}

// sweepFile names the first sweep of reports.
func sweepFile(files []string, reports []Report) string {
	for i, r := range reports {
		if r.Result == nil {
			return files[i]
		}
	}
	return ""
}

// runFile names the first single run of reports.
func runFile(files []string, reports []Report) string {
	for i, r := range reports {
		if r.Result != nil {
			return files[i]
		}
	}
	return ""
}
