package loadgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/tunnelprobe/tunnelprobe/internal/infile"
	"github.com/tunnelprobe/tunnelprobe/internal/jsonsize"
)

// MaxReportSize is the largest file ReadJSON reads. load --json writes
// about 420 bytes of series a second of a run, so a run of minutes takes
// well under a megabyte, a day-long soak some 36 MB, and 256 MiB holds a
// week; a histogram's 23,552 counts take a few hundred kB at most. A
// larger file is refused before it is read: with maxDecodedPerByte, this
// bounds the memory a file can take.
const MaxReportSize = 256 << 20

// maxDecodedPerByte bounds the memory a report decodes into, per byte of
// it, past decodedSlack: a histogram's counts written as 0, (2 bytes for
// 8 in memory) take 4 times their text, and everything else load writes
// less (it writes every field of a second, over 220 bytes for 128), while
// a series of {} would take 40 times.
const (
	maxDecodedPerByte = 4
	decodedSlack      = 1 << 20
)

// arrayLimits are the most entries that load writes into the arrays of a
// report of known length, checked before it is decoded: one count for each
// error kind, and no more counts than the latency histogram has (a file of
// 256 MiB of counts would decode into a gigabyte).
var arrayLimits = func() map[string]int {
	limits := map[string]int{}
	for _, at := range []string{"", "levels."} {
		limits[at+"errors"] = len(ErrorKinds)
		limits[at+"histograms.connect.Counts"] = latencyGeometry.counts
		limits[at+"histograms.probe.Counts"] = latencyGeometry.counts
	}
	return limits
}()

// reportKind names what ReadJSON reads, in its errors.
const reportKind = "a report of load --json"

// ReadJSON reads a report that WriteJSON wrote (load --json); the error
// says when the file is not one, naming the field that load cannot have
// written (see Report.Validate). Its memory is bounded by the file's size:
// a file larger than MaxReportSize, or not a regular one (a device, a
// pipe), is refused unread, and one that would decode into more than
// maxDecodedPerByte times its size (an array of entries written smaller
// than load writes them) before it is decoded.
func ReadJSON(file string) (Report, error) {
	b, _, err := infile.Read(file, MaxReportSize, reportKind)
	if err != nil {
		return Report{}, err
	}
	switch err := jsonsize.Bound(b, reflect.TypeFor[Report](), maxDecodedPerByte, decodedSlack, arrayLimits); {
	case errors.Is(err, jsonsize.ErrTooDense):
		return Report{}, fmt.Errorf("%s: %w, but load writes every field of an entry", file, err)
	case errors.Is(err, jsonsize.ErrTooMany):
		return Report{}, fmt.Errorf("%s: %w (load writes one count for each error kind at most, and no more counts than the latency histogram has)", file, err)
	case err != nil:
		return Report{}, fmt.Errorf("%s: not a load --json report: %w", file, err)
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
	if err := rep.Validate(); err != nil {
		return Report{}, fmt.Errorf("%s: %w", file, err)
	}
	return rep, nil
}

// MergeReports merges reports of runs that ran side by side exactly (see
// Merge): single runs into one run, sweeps level by level; every sweep must
// have the same levels. names (the files they were read from) name the
// reports in the errors, also when a sum overflows.
func MergeReports(reports []Report, names []string) (Report, error) {
	if len(reports) == 0 || len(names) != len(reports) {
		return Report{}, errors.New("loadgen: MergeReports needs one name per report, and a report")
	}
	files := names
	if err := sameKind(reports, files); err != nil {
		return Report{}, err
	}
	sweep := reports[0].Result == nil
	levels := len(reports[0].Levels)
	name := func(i int) string { return files[i] }
	if !sweep {
		results := make([]Result, len(reports))
		for i, r := range reports {
			results[i] = *r.Result
		}
		m, err := merge(results, name)
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
		m, err := merge(results, name)
		if err != nil {
			return Report{}, fmt.Errorf("level %d: %w", l+1, err)
		}
		out.Levels = append(out.Levels, m)
	}
	return out, nil
}

// sameKind refuses reports (read from files) that do not merge: runs with
// sweeps, or sweeps of different numbers of levels.
func sameKind(reports []Report, files []string) error {
	sweep := reports[0].Result == nil
	levels := len(reports[0].Levels)
	for i, r := range reports {
		switch {
		case (r.Result == nil) != sweep:
			return fmt.Errorf("%s is a sweep and %s is not: merge runs with runs, sweeps with sweeps", sweepFile(files, reports), runFile(files, reports))
		case sweep && len(r.Levels) != levels:
			return fmt.Errorf("%s has %d levels, %s has %d: sweeps merge only level by level", files[i], len(r.Levels), files[0], levels)
		}
	}
	return nil
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
