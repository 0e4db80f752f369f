package main

import (
	"flag"
	"io"

	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/scenarios"
)

const scenarioReportUsage = `Usage: tunnelprobe scenario report FILE...

Print the report.json files of runs of one spec (scenario --spec or a suite,
run again; the container suite's) as one Markdown table: a row per
configuration, each figure run by run. Docs quote tables so, with the command
that made them. A file no run writes is refused as bad input (exit 2), naming
the file; so are runs of different specs (their names or configurations),
naming the specs.
`

// scenarioReport is "tunnelprobe scenario report"; args follow "report".
func scenarioReport(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	const name = "tunnelprobe scenario report"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	files, code, ok := cliflag.ParseCommandArgs(fs, args, getenv, scenarioReportUsage, "report.json FILE", stdout, stderr)
	if !ok {
		return code
	}
	var runs []*scenarios.Report
	for _, f := range files {
		r, err := scenarios.ReadReport(f)
		if err != nil {
			return cliflag.InputError(stderr, name, err)
		}
		runs = append(runs, r)
	}
	if err := scenarios.WriteRunsTable(stdout, runs); err != nil {
		return cliflag.InputError(stderr, name, err)
	}
	return 0
}
