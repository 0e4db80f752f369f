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
(shards leave that to the merge). Files of different matrices, a shard
merged twice and a file no matrix writes (a field out of its range, a run
the matrix does not make, no regular file, over 2 GiB) are refused as bad
input (exit 2), naming the file and the field, before anything is written.
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
	// A file refused is bad input, as a bad flag is; --out is chosen (and
	// made) only once every file is found sound: a refused merge leaves
	// nothing behind and announces no folder.
	rep, err := matrix.MergeFiles(files)
	if err != nil {
		return cliflag.InputError(stderr, name, err)
	}
	if outs.dir, err = chooseOut(outs.dir, false, stdout); err != nil {
		return cliflag.UsageError(stderr, name, err)
	}
	fmt.Fprintf(stdout, "merged %d file(s): %d of the %d runs the matrix makes\n", len(files), len(rep.Runs), rep.Passes*len(rep.Conditions))
	return writeMatrix(rep, outs, true, stdout, stderr)
}
