package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/scenarios"
)

const scenarioUsage = `Usage: tunnelprobe scenario [flags]

Compare health configurations on a loaded tunnel, then through a real outage:
which restarts a working tunnel for nothing, and which detects a dead one
fastest? Each configuration runs on its own in-process lab (WireGuard over a
shaped link) with the same link and load, side by side, probed by a
kubelet-faithful prober. The default suite takes about four minutes.
Writes report.md, report.json and timeline.png into --out.
`

func runScenario(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "tunnelprobe scenario"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	out := fs.String("out", "scenario-results", "`directory` for report.md, report.json and timeline.png")
	jsonPath := fs.String("json", "", "also write report.json to this `file`")
	specPath := fs.String("spec", "", "run the scenario in this YAML or JSON `file` instead of the built-in suite")
	quick := fs.Bool("quick", false, "run the shorter built-in suite (under two minutes), as CI does")
	seed := fs.Uint64("seed", 0, "override the scenario's `seed` (0 keeps the spec's)")
	if code, ok := cliflag.ParseCommand(fs, args, os.Getenv, scenarioUsage, stdout, stderr); !ok {
		return code
	}
	spec := scenarios.DefaultSuite()
	switch {
	case *specPath != "" && *quick:
		return cliflag.UsageError(stderr, name, fmt.Errorf("--spec and --quick exclude each other: give one"))
	case *specPath != "":
		var err error
		if spec, err = scenarios.ReadSpec(*specPath); err != nil {
			return cliflag.UsageError(stderr, name, fmt.Errorf("invalid value for flag --spec: %w", err))
		}
	case *quick:
		spec = scenarios.QuickSuite()
	}
	if *seed != 0 {
		spec.Seed = *seed
	}
	fmt.Fprintf(stdout, "scenario %q: %d configurations, %s, seed %d (repeat with --seed %d)\n",
		spec.Name, len(spec.Configs), spec.Duration, spec.Seed, spec.Seed)

	rep, err := scenarios.Run(ctx, spec, scenarios.Options{Progress: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	if rep.Interrupted {
		fmt.Fprintf(stderr, "%s: interrupted after %.0fs; writing what was measured\n", name, rep.DurationSeconds)
	}
	fmt.Fprintln(stdout)
	if err := rep.WriteTable(stdout); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	if err := rep.WriteResults(*out); err != nil {
		fmt.Fprintf(stderr, "%s: writing results: %v\n", name, err)
		return 1
	}
	fmt.Fprintf(stdout, "\nreport: %s\n", filepath.Join(*out, "report.md"))
	if *jsonPath != "" {
		if err := rep.WriteJSON(*jsonPath); err != nil {
			fmt.Fprintf(stderr, "%s: writing --json: %v\n", name, err)
			return 1
		}
	}
	return 0
}
