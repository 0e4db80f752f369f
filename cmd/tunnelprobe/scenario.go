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
kubelet-faithful prober. The default suite takes about six minutes.
Writes report.md, report.json and timeline.png into --out.
With --matrix (every built-in link condition, about 25 minutes a pass) or
--repeat N (N passes, each with the next seed), writes the rates over every
run with their 95% intervals to matrix.md, matrix.json and matrix.png, and
each run's report into a folder of its own beside them.
`

func scenarioCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	const name = "tunnelprobe scenario"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	out := fs.String("out", "scenario-results", "`directory` for report.md, report.json and timeline.png (with --matrix or --repeat: matrix.md,\n"+
		"matrix.json, matrix.png and a folder per run)")
	jsonPath := fs.String("json", "", "also write report.json (or matrix.json) to this `file`")
	specPath := fs.String("spec", "", "run the scenario in this YAML or JSON `file` instead of a built-in suite")
	suite := fs.String("suite", "default", "the built-in `suite`: default, quick (under two minutes, as CI runs it), brownout or deep-queue")
	quick := fs.Bool("quick", false, "the same as --suite quick")
	seed := fs.Uint64("seed", 0, "override the scenario's `seed` (0 keeps the spec's); with --repeat, the first pass's")
	matrix := fs.Bool("matrix", false, "run every built-in link condition (docs/scenarios.md); excludes --spec, --suite and --quick")
	condition := fs.String("condition", "", "with --matrix: run only the condition of this `name`")
	var repeat int
	fs.Var(cliflag.Int(&repeat, 1, 1), "repeat", "run the suite, spec or matrix this `number` of times, each pass with the next seed")
	if code, ok := cliflag.ParseCommand(fs, args, getenv, scenarioUsage, stdout, stderr); !ok {
		return code
	}
	given := cliflag.Given(fs)
	if *matrix && (given["spec"] || given["suite"] || *quick) {
		return cliflag.UsageError(stderr, name, errors.New("--matrix excludes --spec, --suite and --quick: give one"))
	}
	spec, err := chooseSpec(given, *specPath, *suite, *quick)
	if err != nil {
		return cliflag.UsageError(stderr, name, err)
	}
	if !*matrix && repeat == 1 && *condition == "" {
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
		return writeResults(rep, *out, "report.md", *jsonPath, stdout, stderr)
	}
	conditions, err := chooseConditions(spec, *matrix, *condition)
	if err != nil {
		return cliflag.UsageError(stderr, name, err)
	}
	rep, err := scenarios.RunMatrix(ctx, conditions, scenarios.MatrixOptions{
		Options: scenarios.Options{Progress: stderr}, Repeat: repeat, Seed: *seed, Log: stdout,
	})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v; writing the runs before it\n", name, err)
	}
	if rep.Interrupted {
		fmt.Fprintf(stderr, "%s: interrupted after %d run(s); writing what was measured\n", name, len(rep.Runs))
	}
	if code := writeResults(rep, *out, "matrix.md", *jsonPath, stdout, stderr); code != 0 || err != nil {
		return 1
	}
	return 0
}

// results are a run's or a matrix's.
type results interface {
	WriteTable(io.Writer) error
	WriteResults(dir string) error
	WriteJSON(path string) error
}

// writeResults prints r's table, writes its files into out (naming main
// among them) and its JSON to jsonPath if set, and returns the exit code.
func writeResults(r results, out, main, jsonPath string, stdout, stderr io.Writer) int {
	const name = "tunnelprobe scenario"
	fmt.Fprintln(stdout)
	if err := r.WriteTable(stdout); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	if err := r.WriteResults(out); err != nil {
		fmt.Fprintf(stderr, "%s: writing results: %v\n", name, err)
		return 1
	}
	fmt.Fprintf(stdout, "\nreport: %s\n", filepath.Join(out, main))
	if jsonPath != "" {
		if err := r.WriteJSON(jsonPath); err != nil {
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

// chooseConditions returns what a matrix run covers: spec, or with
// --matrix the built-in conditions, or only the one --condition names. An
// error is a usage error.
func chooseConditions(spec scenarios.Spec, matrix bool, condition string) ([]scenarios.Spec, error) {
	switch {
	case !matrix && condition != "":
		return nil, errors.New("--condition needs --matrix")
	case !matrix:
		return []scenarios.Spec{spec}, nil
	case condition == "":
		return scenarios.MatrixConditions(), nil
	}
	c, err := scenarios.MatrixCondition(condition)
	if err != nil {
		return nil, fmt.Errorf("invalid value %q for flag --condition: %w", condition, err)
	}
	return []scenarios.Spec{c}, nil
}
