package loadgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/tunnelprobe/tunnelprobe/internal/infile"
)

// MaxReportSize is the largest file ReadJSON reads. load --json writes
// about 420 bytes of series a second of a run, so a run of minutes takes
// well under a megabyte, a day-long soak some 36 MB, and 256 MiB holds a
// week; a histogram's 23,552 counts take a few hundred kB at most. A
// larger file is refused before it is read: with the checks of
// reportShape, which keep what a file decodes into no larger than its
// text, this bounds the memory a file can take.
const MaxReportSize = 256 << 20

// reportKind names what ReadJSON reads, in its errors.
const reportKind = "a report of load --json"

// ReadJSON reads a report that WriteJSON wrote (load --json); the error
// says when the file is not one, naming the field that load cannot have
// written (see Report.Validate). Its memory is bounded by the file's size:
// a file larger than MaxReportSize, or not a regular one (a device, a
// pipe), is refused unread, and no array of it is decoded into more memory
// than its JSON text takes (see reportShape), however small its entries are
// written.
func ReadJSON(file string) (Report, error) {
	b, _, err := infile.Read(file, MaxReportSize, reportKind)
	if err != nil {
		return Report{}, err
	}
	var shape reportShape
	if err := json.Unmarshal(b, &shape); err != nil {
		return Report{}, fmt.Errorf("%s: not a load --json report: %w", file, err)
	}
	if err := shape.check(); err != nil {
		return Report{}, fmt.Errorf("%s: %w", file, err)
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

// reportShape is a report read for the sizes of its arrays only, before
// it is read in full: encoding/json decodes an array into as many
// elements as it has, so a Second written as {} (2 bytes) would take the
// 128 bytes of a Second, and 30 MB of them gigabytes.
type reportShape struct {
	resultShape
	Levels levelShapes `json:"levels"`
}

// resultShape holds the sizes of a Result's arrays and maps.
type resultShape struct {
	Series     jsonSize `json:"series"`
	Errors     jsonSize `json:"errors"`
	Histograms struct {
		Connect snapshotShape `json:"connect"`
		Probe   snapshotShape `json:"probe"`
	} `json:"histograms"`
}

type snapshotShape struct {
	Counts jsonSize
}

// jsonSize is the number of elements of a JSON array (or members of an
// object) and the length of its text. A key given twice is decoded
// twice, so both add up.
type jsonSize struct {
	n, bytes int
}

func (s *jsonSize) UnmarshalJSON(b []byte) error {
	s.n += jsonElements(b)
	s.bytes += len(b)
	return nil
}

// levelShapes are the shapes of a sweep's levels, decoded only when the
// levels are not more than their text could hold (see dense).
type levelShapes struct {
	size   jsonSize
	levels []resultShape
}

func (l *levelShapes) UnmarshalJSON(b []byte) error {
	if err := l.size.UnmarshalJSON(b); err != nil {
		return err
	}
	if dense(l.size, resultBytes) {
		return nil // check refuses it
	}
	var levels []resultShape
	if err := json.Unmarshal(b, &levels); err != nil {
		return err
	}
	l.levels = append(l.levels, levels...)
	return nil
}

// In memory, a Second and a Result take these many bytes.
var (
	secondBytes = int(reflect.TypeFor[Second]().Size())
	resultBytes = int(reflect.TypeFor[Result]().Size())
)

// dense reports whether the elements of s take more memory, at each bytes,
// than their JSON text takes: load --json writes every field of a Second
// (over 220 bytes even without indentation) and of a Result, so a real
// report never is.
func dense(s jsonSize, each int) bool {
	return s.n > s.bytes/each
}

// check refuses a report whose arrays would take more memory than its text
// (see dense), or have more entries than load writes: one count for each
// error kind at most, and no more counts than the latency histogram has.
func (sh reportShape) check() error {
	if dense(sh.Levels.size, resultBytes) {
		return fmt.Errorf("levels: %d levels in %d bytes, but load writes every field of a level, more than the %d bytes each takes in memory",
			sh.Levels.size.n, sh.Levels.size.bytes, resultBytes)
	}
	if err := sh.resultShape.check(); err != nil {
		return err
	}
	for i, l := range sh.Levels.levels {
		if err := l.check(); err != nil {
			return fmt.Errorf("levels[%d].%w", i, err)
		}
	}
	return nil
}

func (sh resultShape) check() error {
	if dense(sh.Series, secondBytes) {
		return fmt.Errorf("series: %d entries in %d bytes, but load writes every field of an entry, more than the %d bytes each takes in memory",
			sh.Series.n, sh.Series.bytes, secondBytes)
	}
	if sh.Errors.n > len(ErrorKinds) {
		return fmt.Errorf("errors: %d counts, but load writes one for each kind at most (%d)", sh.Errors.n, len(ErrorKinds))
	}
	for _, h := range []struct {
		name string
		s    snapshotShape
	}{{"connect", sh.Histograms.Connect}, {"probe", sh.Histograms.Probe}} {
		if h.s.Counts.n > latencyGeometry.counts {
			return fmt.Errorf("histograms.%s.Counts: %d counts, but the latency histogram has %d", h.name, h.s.Counts.n, latencyGeometry.counts)
		}
	}
	return nil
}

// jsonElements returns the number of elements of raw, a JSON array, or of
// members of raw, a JSON object; 0 for anything else. encoding/json has
// checked raw's syntax, so counting the commas outside strings and nested
// values is enough.
func jsonElements(raw []byte) int {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || (raw[0] != '[' && raw[0] != '{') {
		return 0
	}
	commas, depth, empty := 0, 0, true
	inString, escaped := false, false
	for _, c := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		if depth == 1 && c != ']' && c != '}' {
			empty = false
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case ',':
			if depth == 1 {
				commas++
			}
		}
	}
	if empty {
		return 0
	}
	return commas + 1
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
