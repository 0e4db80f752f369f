package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

const loadMergeUsage = `Usage: tunnelprobe load merge [flags] FILE...

Merge the --json results of load runs that ran side by side (pods of an
Indexed Job, several machines) into one report, exactly: the raw latency
histograms are merged, so the percentiles are those of every sample
together; counters are added; the per-second series are aligned on their
second (Unix time) and added. Sweeps merge level by level; every file must
then have the same levels. Prints the merged summary; flags may come before
or between the files.
`

// loadMergeFlags are the flags of "load merge".
type loadMergeFlags struct {
	jsonOut string
	plotOut string
}

func (f *loadMergeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.jsonOut, "json", "", "write the merged report to this JSON `file`, in the schema of load --json")
	fs.StringVar(&f.plotOut, "plot", "", "write a PNG `file` of the merged run, or of the merged sweep")
}

// loadMerge is "tunnelprobe load merge"; args follow "merge".
func loadMerge(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	const name = "tunnelprobe load merge"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var f loadMergeFlags
	f.register(fs)
	files, err := parseInterspersed(fs, args, getenv)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "%s\nFlags (each also read from the environment variable shown):\n", loadMergeUsage)
		printFlags(stdout, fs)
		return 0
	case err == nil && len(files) == 0:
		err = errors.New("no FILE to merge")
	}
	if err != nil {
		return usageError(stderr, name, err)
	}
	for _, out := range []struct{ flag, path string }{{"json", f.jsonOut}, {"plot", f.plotOut}} {
		if out.path == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(out.path)); err != nil || !st.IsDir() {
			return usageError(stderr, name, fmt.Errorf("invalid value %q for flag --%s: no such directory", out.path, out.flag))
		}
	}

	reports := make([]loadgen.Report, len(files))
	for i, file := range files {
		if reports[i], err = loadgen.ReadJSON(file); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return 1
		}
	}
	merged, err := loadgen.MergeReports(reports, files)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}

	fmt.Fprintf(stdout, "merged %d results\n", len(files))
	code := printMerged(stdout, merged)
	if err := writeMerged(f, merged); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		code = 1
	}
	return code
}

// printMerged prints the summary of a merged report, a run or a sweep, and
// returns the exit code.
func printMerged(stdout io.Writer, merged loadgen.Report) int {
	code := 0
	if merged.Result != nil {
		if err := loadgen.WriteSummary(stdout, *merged.Result); err != nil {
			code = 1
		}
	} else {
		for i, l := range merged.Levels {
			fmt.Fprintf(stdout, "\nlevel %d/%d: %d connections\n", i+1, len(merged.Levels), l.ConnsRequested)
			if err := loadgen.WriteSummary(stdout, l); err != nil {
				code = 1
			}
		}
		fmt.Fprintln(stdout)
		if err := loadgen.WriteSweepTable(stdout, merged.Levels); err != nil {
			code = 1
		}
	}
	return code
}

// writeMerged writes --json and --plot of a merged report.
func writeMerged(f loadMergeFlags, merged loadgen.Report) error {
	var errs []error
	if f.jsonOut != "" {
		errs = append(errs, loadgen.WriteJSON(f.jsonOut, merged))
	}
	if f.plotOut != "" {
		if merged.Result != nil {
			errs = append(errs, loadgen.PlotRun(f.plotOut, *merged.Result))
		} else {
			errs = append(errs, loadgen.PlotSweep(f.plotOut, merged.Levels))
		}
	}
	return errors.Join(errs...)
}

// parseInterspersed parses args into fs, flags and positional arguments in
// any order ("--" ends the flags), then fills the flags args left alone from
// the environment as parseWithEnv does. It returns the positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string, getenv func(string) string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		rest := fs.Args()
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			positional = append(positional, rest...) // all after "--"
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	return positional, parseWithEnv(fs, nil, getenv)
}
