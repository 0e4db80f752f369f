package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
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

func scenarioCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	const name = "tunnelprobe scenario"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	out := fs.String("out", "scenario-results", "`directory` for report.md, report.json and timeline.png")
	jsonPath := fs.String("json", "", "also write report.json to this `file`")
	specPath := fs.String("spec", "", "run the scenario in this YAML or JSON `file` instead of a built-in suite")
	suite := fs.String("suite", "default", "the built-in `suite`: default, quick (under two minutes, as CI runs it), brownout or deep-queue")
	quick := fs.Bool("quick", false, "the same as --suite quick")
	seed := fs.Uint64("seed", 0, "override the scenario's `seed` (0 keeps the spec's)")
	if code, ok := cliflag.ParseCommand(fs, args, getenv, scenarioUsage, stdout, stderr); !ok {
		return code
	}
	spec, err := chooseSpec(cliflag.Given(fs), *specPath, *suite, *quick)
	if err != nil {
		return cliflag.UsageError(stderr, name, err)
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

// chooseSpec returns the scenario the flags name: the --spec file, or the
// built-in --suite (--quick: the quick one). An error is a usage error.
func chooseSpec(given map[string]bool, specPath, suite string, quick bool) (scenarios.Spec, error) {
	if quick {
		suite = "quick"
	}
	newSpec, ok := scenarios.Suites[suite]
	switch {
	case specPath != "" && (given["suite"] || quick):
		return scenarios.Spec{}, errors.New("--spec excludes --suite and --quick: give one")
	case specPath != "":
		spec, err := scenarios.ReadSpec(specPath)
		if err != nil {
			return spec, fmt.Errorf("invalid value for flag --spec: %w", err)
		}
		return spec, nil
	case !ok:
		return scenarios.Spec{}, fmt.Errorf("invalid value %q for flag --suite: want default, quick, brownout or deep-queue", suite)
	}
	return newSpec(), nil
}
