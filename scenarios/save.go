package scenarios

import (
	"errors"
	"fmt"
	"io"

	"github.com/tunnelprobe/tunnelprobe/internal/output"
)

// Results are a run's report or a matrix's, as Save writes them.
type Results interface {
	WriteResults(dir string) error
	WriteJSON(w io.Writer) error
}

// RescuedPattern names the folder that takes the results when their own
// folder cannot, in the temporary folder or else the working one.
const RescuedPattern = "tunnelprobe-scenario-rescued-*"

// Save writes r's files into dir and its JSON to jsonPath if set, and
// returns the folder they went into: dir, or, when writing into dir failed,
// a new rescue folder (RescuedPattern), so that nothing measured is lost.
// The error says every write that failed; savedIn is "" only when the files
// are lost.
func Save(r Results, dir, jsonPath string) (savedIn string, err error) {
	savedIn = dir
	if err = r.WriteResults(dir); err != nil {
		err = fmt.Errorf("writing results: %w", err)
		rescued, rerr := output.Rescue(RescuedPattern, r.WriteResults)
		if rerr != nil {
			return "", errors.Join(err, fmt.Errorf("the results are lost: %w", rerr))
		}
		savedIn = rescued
		err = fmt.Errorf("%w; wrote them into %s instead", err, rescued)
	}
	if jsonPath != "" {
		if jerr := output.File(jsonPath, r.WriteJSON); jerr != nil {
			err = errors.Join(err, fmt.Errorf("writing --json: %w (the same JSON is in %s)", jerr, savedIn))
		}
	}
	return savedIn, err
}

// WriteCIFiles writes runs as JUnit XML to junit (replacing it,
// atomically) and as a CI job summary appended to summary (CI systems
// append each step's summary to $GITHUB_STEP_SUMMARY), each if set (see
// WriteJUnit and WriteCISummary).
func WriteCIFiles(junit, summary string, runs []CIRun) error {
	var errs []error
	if junit != "" {
		errs = append(errs, output.File(junit, func(w io.Writer) error { return WriteJUnit(w, runs) }))
	}
	if summary != "" {
		errs = append(errs, output.Append(summary, func(w io.Writer) error { return WriteCISummary(w, runs) }))
	}
	return errors.Join(errs...)
}
