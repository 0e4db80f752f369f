package loadgen

import (
	"errors"
	"fmt"
	"io"

	"github.com/tunnelprobe/tunnelprobe/internal/output"
)

// NewReport returns the report of results: a sweep's, one level each, or
// with sweep false the single run results[0].
func NewReport(results []Result, sweep bool) Report {
	if sweep || len(results) == 0 {
		return Report{Levels: results}
	}
	return Report{Result: &results[0]}
}

// WriteFiles writes rep as JSON to jsonPath (WriteJSON) and as a PNG to
// plotPath (PlotRun for a run, PlotSweep for a sweep), each unless its
// path is empty and each atomically (a temporary file renamed into place,
// mode 0644 under the usual umask), and returns every error.
func (rep Report) WriteFiles(jsonPath, plotPath string) error {
	var errs []error
	if jsonPath != "" {
		errs = append(errs, output.File(jsonPath, func(w io.Writer) error { return WriteJSON(w, rep) }))
	}
	if plotPath != "" {
		if rep.Result != nil {
			errs = append(errs, output.File(plotPath, func(w io.Writer) error { return PlotRun(w, *rep.Result) }))
		} else {
			errs = append(errs, output.File(plotPath, func(w io.Writer) error { return PlotSweep(w, rep.Levels) }))
		}
	}
	return errors.Join(errs...)
}

// WriteLevel writes the summary of level i (from 0) of n, as a sweep
// reports each of its levels; a single run (n is 1) has no heading.
func WriteLevel(w io.Writer, i, n int, r Result) error {
	if n > 1 {
		fmt.Fprintf(w, "level %d/%d: %d connections\n", i+1, n, r.ConnsRequested)
	}
	err := WriteSummary(w, r)
	if n > 1 {
		fmt.Fprintln(w)
	}
	return err
}

// WriteSummaries writes the summary of rep: the run's, or each level's
// and the sweep table.
func (rep Report) WriteSummaries(w io.Writer) error {
	if rep.Result != nil {
		return WriteSummary(w, *rep.Result)
	}
	var errs []error
	for i, l := range rep.Levels {
		errs = append(errs, WriteLevel(w, i, len(rep.Levels), l))
	}
	return errors.Join(append(errs, WriteSweepTable(w, rep.Levels))...)
}
