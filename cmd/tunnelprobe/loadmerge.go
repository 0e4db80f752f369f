package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
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

A file that load --json cannot have written (a negative count, a histogram
of another geometry or with samples out of its range, a series longer than
the run, a file over 256 MiB or no regular file) is refused, naming the file
and the field, as is a sum that would overflow and a file given twice (by
name, through a link, or a copy of it): bad input, exit 2.
`

// loadMergeFlags are the flags of "load merge".
type loadMergeFlags struct {
	jsonOut string
	plotOut string
}

func (f *loadMergeFlags) register(fs *flag.FlagSet) {
	fs.Var(cliflag.OutputFile(&f.jsonOut), "json", "write the merged report to this JSON `file`, in the schema of load --json")
	fs.Var(cliflag.OutputFile(&f.plotOut), "plot", "write a PNG `file` of the merged run, or of the merged sweep")
}

// loadMerge is "tunnelprobe load merge"; args follow "merge".
func loadMerge(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	const name = "tunnelprobe load merge"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var f loadMergeFlags
	f.register(fs)
	files, code, ok := cliflag.ParseCommandArgs(fs, args, getenv, loadMergeUsage, "FILE to merge", stdout, stderr)
	if !ok {
		return code
	}
	merged, err := loadgen.MergeFiles(files)
	if err != nil { // a file refused is bad input, as a bad flag is
		return cliflag.InputError(stderr, name, err)
	}

	fmt.Fprintf(stdout, "merged %d results\n", len(files))
	if merged.Result == nil {
		fmt.Fprintln(stdout)
	}
	err = errors.Join(merged.WriteSummaries(stdout), merged.WriteFiles(f.jsonOut, f.plotOut))
	return cliflag.ExitCode(stderr, name, err)
}
