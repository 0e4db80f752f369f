package loadgen

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/tunnelprobe/tunnelprobe/internal/infile"
)

// MergeFiles reads the reports that WriteJSON wrote to files (ReadJSON) and
// merges them (MergeReports), as load merge does. Its error names the file
// and the field it refuses. A file given twice is refused, naming both,
// since its every figure would count twice: by identity (one file under
// two names, or a link to it), checked before any file is read, and by
// content (a copy: a run, or a level of a sweep, that another file holds
// too).
func MergeFiles(files []string) (Report, error) {
	infos := make([]fs.FileInfo, len(files))
	for i, file := range files {
		fi, err := infile.Stat(file, MaxReportSize, reportKind)
		if err != nil {
			return Report{}, err
		}
		for j := range i {
			if os.SameFile(fi, infos[j]) {
				return Report{}, fmt.Errorf("%s and %s are the same file: merged twice, its figures would count twice", files[j], file)
			}
		}
		infos[i] = fi
	}
	reports := make([]Report, len(files))
	for i, file := range files {
		var err error
		if reports[i], err = ReadJSON(file); err != nil {
			return Report{}, err
		}
	}
	if err := sameKind(reports, files); err != nil {
		return Report{}, err
	}
	if err := distinctRuns(reports, files); err != nil {
		return Report{}, err
	}
	return MergeReports(reports, files)
}

// runKey is what tells runs of load apart: when each started, to the
// nanosecond, how long it ran, what it counted and the latencies it
// measured. Two runs side by side never agree on all of it; a copy of a
// file does.
type runKey struct {
	start                                   int64
	duration                                float64
	target, path                            string
	processes, requested                    int
	achieved, up, down, probes, disruptions int64
	connect, probe                          Percentiles
}

func keyOf(r Result) runKey {
	return runKey{
		start: r.Start.UnixNano(), duration: r.DurationSeconds, target: r.Target, path: r.Path,
		processes: r.Processes, requested: r.ConnsRequested,
		achieved: r.ConnsAchieved, up: r.BytesUp, down: r.BytesDown, probes: r.Probes, disruptions: r.Disruptions,
		connect: r.ConnectLatencyMS, probe: r.ProbeLatencyMS,
	}
}

// distinctRuns refuses reports (read from files) in which one run, or one
// level of a sweep, is found twice, naming where.
func distinctRuns(reports []Report, files []string) error {
	seen := map[runKey]string{}
	for i, rep := range reports {
		results, names := rep.Levels, func(l int) string { return fmt.Sprintf("%s, level %d", files[i], l+1) }
		if rep.Result != nil {
			results, names = []Result{*rep.Result}, func(int) string { return files[i] }
		}
		for l, r := range results {
			k, here := keyOf(r), names(l)
			if there, ok := seen[k]; ok {
				return fmt.Errorf("%s holds the run of %s (the same start, duration and counts): a copy merged twice would count its figures twice", here, there)
			}
			seen[k] = here
		}
	}
	return nil
}
