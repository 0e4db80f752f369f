package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/scenarios/matrix"
)

const scenarioMergeUsage = `Usage: tunnelprobe scenario merge [flags] FILE...

Merge the matrix.json files of a matrix's shards (scenario --shard i/n) into
the whole matrix, its rates recomputed from every run, never averaged, and
write it as the matrix does; exit 1 when a run broke a bound of its expect
(shards leave that to the merge). Files of different matrices and a shard
merged twice are refused.
`

// scenarioMerge is "tunnelprobe scenario merge"; args follow "merge".
func scenarioMerge(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	const name = "tunnelprobe scenario merge"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var outs scenarioOutputs
	outs.register(fs)
	files, code, ok := cliflag.ParseCommandArgs(fs, args, getenv, scenarioMergeUsage, "matrix.json FILE to merge", stdout, stderr)
	if !ok {
		return code
	}
	var err error
	if outs.dir, err = chooseOut(outs.dir, stdout); err != nil {
		return cliflag.UsageError(stderr, name, err)
	}
	rep, err := matrix.MergeFiles(files)
	if err != nil {
		return cliflag.ExitCode(stderr, name, err)
	}
	fmt.Fprintf(stdout, "merged %d file(s): %d of the %d runs the matrix makes\n", len(files), len(rep.Runs), rep.Passes*len(rep.Conditions))
	return writeMatrix(rep, outs, true, stdout, stderr)
}
