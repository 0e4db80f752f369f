package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/internal/output"
	"github.com/tunnelprobe/tunnelprobe/scenarios"
	"github.com/tunnelprobe/tunnelprobe/scenarios/matrix"
)

const scenarioUsage = `Usage: tunnelprobe scenario [flags]
       tunnelprobe scenario merge [flags] FILE...   (add up the shards' matrix.json; see merge --help)
       tunnelprobe scenario report FILE...          (runs' report.json as one Markdown table)

Compare health configurations on a loaded tunnel, then through a real outage:
which restarts a working tunnel for nothing, and which detects a dead one
fastest? Each runs on its own in-process lab (WireGuard over a shaped link),
all on the same link and load, probed by a kubelet-faithful prober; the
default suite takes about six minutes. With --matrix (every built-in link
condition, ~42 min a pass) or --repeat N, the rates over every run, 95%.
`

// runScenario and runMatrix are scenarios.Run and matrix.Run, unless a test
// replaces them to see what the command does around a run, with no lab.
var (
	runScenario = scenarios.Run
	runMatrix   = matrix.Run
)

// scenarioSubcommands are scenario's commands on what runs wrote.
var scenarioSubcommands = map[string]func(args []string, getenv func(string) string, stdout, stderr io.Writer) int{
	"merge":  scenarioMerge,  // scenariomerge.go
	"report": scenarioReport, // scenarioreport.go
}

// scenarioName names the command in its messages.
const scenarioName = "tunnelprobe scenario"

func scenarioCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	const name = scenarioName
	if len(args) > 0 && scenarioSubcommands[args[0]] != nil {
		return scenarioSubcommands[args[0]](args[1:], getenv, stdout, stderr)
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var outs scenarioOutputs
	outs.register(fs)
	specPath := fs.String("spec", "", "run the scenario in this YAML or JSON `file` instead of a built-in suite")
	suite := fs.String("suite", "default", "the built-in `suite`: default, quick (under two minutes, as CI runs it), brownout or deep-queue")
	quick := fs.Bool("quick", false, "the same as --suite quick")
	seed := fs.Uint64("seed", 0, "override the scenario's `seed` (0 keeps the spec's); with --repeat, the first pass's")
	allConditions := fs.Bool("matrix", false, "run every built-in link condition (docs/scenarios.md); excludes --spec, --suite and --quick")
	condition := fs.String("condition", "", "with --matrix: run only the condition of this `name`")
	var shard matrix.Shard
	fs.Func("shard", "run only shard `i/n` (i from 0) of the runs of --matrix or --repeat, as a Kubernetes Indexed Job's pod;\n"+
		"scenario merge adds the shards' matrix.json up", func(s string) (err error) { shard, err = matrix.ParseShard(s); return err })
	var repeat int
	fs.Var(cliflag.Int(&repeat, 1, 1), "repeat", "run the suite, spec or matrix this `number` of times, each pass with the next seed\n"+
		"(at most 1000 passes and a week in all)")
	if code, ok := cliflag.ParseCommand(fs, args, getenv, scenarioUsage, stdout, stderr); !ok {
		return code
	}
	given := cliflag.Given(fs)
	scenarioGC(getenv)
	if *allConditions && (given["spec"] || given["suite"] || *quick) {
		return cliflag.UsageError(stderr, name, errors.New("--matrix excludes --spec, --suite and --quick: give one"))
	}
	spec, err := chooseSpec(given, *specPath, *suite, *quick)
	if err != nil {
		return cliflag.UsageError(stderr, name, err)
	}
	single := !*allConditions && repeat == 1 && *condition == "" && shard.Count == 0
	var conditions []scenarios.Spec
	var took time.Duration
	if !single {
		if conditions, err = chooseConditions(spec, *allConditions, *condition, stdout); err != nil {
			return cliflag.UsageError(stderr, name, err)
		}
		if took, err = matrix.MinDuration(conditions, repeat); err != nil {
			return cliflag.UsageError(stderr, name, fmt.Errorf("invalid value %d for flag --repeat: %w", repeat, err))
		}
	}
	if outs.dir, err = chooseOut(outs.dir, true, stdout); err != nil {
		return cliflag.UsageError(stderr, name, err)
	}
	if single {
		if *seed != 0 {
			spec.Seed = *seed
		}
		return runOne(ctx, spec, outs, rerunCommand(spec, *specPath), stdout, stderr)
	}
	fmt.Fprintf(stdout, "%d run(s) (%d condition(s), %d pass(es)): at least %v, the runs' durations; each takes a few seconds more to start its labs\n",
		len(conditions)*repeat, len(conditions), repeat, took)
	return runMany(ctx, conditions, matrix.Options{
		Options: scenarios.Options{Progress: stderr}, Repeat: repeat, Seed: *seed, Log: stdout, Shard: shard,
	}, outs, stdout, stderr)
}

// scenarioGCPercent is the garbage collector's target for a scenario run,
// unless GOGC says otherwise: a run's live heap is mostly its labs'
// packet and connection buffers, and the default (100) lets the heap grow
// to twice that before collecting. 25 collects at 1.25 times, for a few
// per cent more CPU (docs/scenarios.md, "What a run takes").
const scenarioGCPercent = 25

// scenarioGC sets scenarioGCPercent unless the environment sets GOGC.
func scenarioGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(scenarioGCPercent)
	}
}

// chooseOut returns the folder the results go into: out, or, when out holds
// an earlier run's results, which are never overwritten, the next free
// out-2, out-3..., said on stdout. It is checked before any lab starts, not
// after a run of many minutes, and created if create is set (else only
// found creatable, for a command that may refuse its input yet); an error
// names --out.
func chooseOut(out string, create bool, stdout io.Writer) (string, error) {
	if free := output.FreeDir(out, "report.md", "matrix.md"); free != out {
		fmt.Fprintf(stdout, "%s holds an earlier run's results: writing into %s\n", out, free)
		out = free
	}
	err := output.CheckNewDir(out)
	if create {
		err = output.CheckDir(out, true)
	}
	if err != nil {
		return "", fmt.Errorf("invalid value %q for flag --out: %w", out, err)
	}
	return out, nil
}

// scenarioOutputs are where a run's results go besides the terminal.
type scenarioOutputs struct{ dir, json, junit, summary string }

func (o *scenarioOutputs) register(fs *flag.FlagSet) {
	fs.StringVar(&o.dir, "out", "scenario-results", "`directory` for report.md, report.json, summary.png and timeline.png (with --matrix or --repeat:\n"+
		"matrix.md, matrix.json, matrix.png and a folder per run); one holding an earlier run's results is kept,\n"+
		"and this run writes into the next free DIRECTORY-2, DIRECTORY-3...")
	fs.Var(cliflag.OutputFile(&o.json), "json", "also write report.json (or matrix.json) to this `file`")
	fs.Var(cliflag.OutputFile(&o.junit), "junit", "also write JUnit XML to this `file`, for CI: a test case per configuration and run,\n"+
		"failing for each bound of its expect that it broke")
	fs.Var(cliflag.OutputFile(&o.summary), "summary", "also append a Markdown summary to this `file`, fit for a CI job summary ($GITHUB_STEP_SUMMARY)")
}

// rerunCommand is the command that runs spec again, read from specPath or
// a built-in suite, with its seed: the same link loss and probers' jitter,
// not the same figures, whose timing under load is the machine's.
func rerunCommand(spec scenarios.Spec, specPath string) string {
	source := "--suite " + spec.Name
	if specPath != "" {
		source = "--spec " + specPath
	}
	return fmt.Sprintf("tunnelprobe scenario %s --seed %d", source, spec.Seed)
}

// runOne runs spec once and writes its report where outs say, and says how
// to run it again (rerun).
func runOne(ctx context.Context, spec scenarios.Spec, outs scenarioOutputs, rerun string, stdout, stderr io.Writer) int {
	out := outs.dir
	const name = scenarioName
	fmt.Fprintf(stdout, "scenario %q: %d configurations, %s, seed %d (repeat with --seed %d)\n",
		spec.Name, len(spec.Configs), spec.Duration, spec.Seed, spec.Seed)
	rep, err := runScenario(ctx, spec, scenarios.Options{Progress: stderr})
	if err != nil && ctx.Err() != nil { // Run keeps what it measured: this stop came before
		fmt.Fprintf(stderr, "%s: interrupted while its labs started, nothing measured (%v)\n", name, err)
		return cliflag.ExitInterrupted
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	if rep.Interrupted {
		fmt.Fprintf(stderr, "%s: interrupted after %.0fs; writing what was measured\n", name, rep.DurationSeconds)
	}
	code := max(writeResults(rep, out, "report.md", outs.json, stdout, stderr),
		cliflag.ExitCode(stderr, scenarioName, scenarios.WriteCIFiles(outs.junit, outs.summary,
			[]scenarios.CIRun{{Name: fmt.Sprintf("%s (seed %d)", spec.Name, spec.Seed), Report: rep}})))
	if code == 0 {
		fmt.Fprintf(stdout, "picture: %s (each configuration at a glance), %s (over time)\n",
			filepath.Join(out, "summary.png"), filepath.Join(out, "timeline.png"))
	}
	fmt.Fprintf(stdout, "rerun: %s\n", rerun)
	// A configuration that was not measured makes the run a failed one,
	// whatever the others measured.
	for _, f := range rep.Failures() {
		fmt.Fprintf(stderr, "%s: configuration %s failed, not measured: %s\n", name, f.Config, f.Why)
		code = 1
	}
	for _, b := range rep.Breaches() {
		fmt.Fprintf(stderr, "%s: configuration %s broke its expectation: %s\n", name, b.Config, b.Breach)
		code = 1
	}
	if code == 0 && rep.Interrupted {
		return cliflag.ExitInterrupted
	}
	return code
}

// runMany runs the conditions as opts says and writes the matrix where
// outs say.
func runMany(ctx context.Context, conditions []scenarios.Spec, opts matrix.Options, outs scenarioOutputs, stdout, stderr io.Writer) int {
	rep, err := runMatrix(ctx, conditions, opts)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v; writing the runs before it\n", scenarioName, err)
	}
	if rep.Interrupted {
		fmt.Fprintf(stderr, "%s: interrupted after %d run(s); writing what was measured\n", scenarioName, len(rep.Runs))
	}
	// A shard is part of a matrix: scenario merge judges the whole.
	if code := writeMatrix(rep, outs, opts.Shard.Count == 0, stdout, stderr); code != 0 || err != nil {
		return 1
	}
	if rep.Interrupted {
		return cliflag.ExitInterrupted
	}
	return 0
}

// writeMatrix says which runs failed and, if judge, which broke their
// bounds, and writes the matrix where outs say; it returns 1 for a bound
// broken (judged) or a file not written.
func writeMatrix(rep *matrix.Report, outs scenarioOutputs, judge bool, stdout, stderr io.Writer) int {
	broken := false
	runs := rep.CIRuns()
	for _, r := range runs {
		for _, f := range r.Report.Failures() {
			fmt.Fprintf(stderr, "%s: %s: configuration %s failed, left out of its rates: %s\n", scenarioName, r.Name, f.Config, f.Why)
		}
		for _, b := range r.Report.Breaches() {
			fmt.Fprintf(stderr, "%s: %s: configuration %s broke its expectation: %s\n", scenarioName, r.Name, b.Config, b.Breach)
			broken = broken || judge
		}
	}
	code := max(writeResults(rep, outs.dir, "matrix.md", outs.json, stdout, stderr),
		cliflag.ExitCode(stderr, scenarioName, scenarios.WriteCIFiles(outs.junit, outs.summary, runs)))
	if broken {
		return 1
	}
	return code
}

// writeResults prints r's table and saves its files into out (naming main
// among them) and its JSON to jsonPath if set (scenarios.Save), and
// returns the exit code: 1 if anything failed, the results then rescued.
func writeResults(r interface {
	scenarios.Results
	WriteTable(io.Writer) error
}, out, main, jsonPath string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stdout)
	err := r.WriteTable(stdout)
	savedIn, saveErr := scenarios.Save(r, out, jsonPath)
	if savedIn != "" {
		fmt.Fprintf(stdout, "\nreport: %s\n", filepath.Join(savedIn, main))
	}
	return cliflag.ExitCode(stderr, scenarioName, errors.Join(err, saveErr))
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
		if err == nil {
			err = tunnelAvailable(spec)
		}
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
// --matrix the built-in conditions, or only the one --condition names;
// --matrix leaves out, and says so on stdout, what this machine cannot
// run. An error is a usage error.
func chooseConditions(spec scenarios.Spec, allConditions bool, condition string, stdout io.Writer) ([]scenarios.Spec, error) {
	switch {
	case !allConditions && condition != "":
		return nil, errors.New("--condition needs --matrix")
	case !allConditions:
		return []scenarios.Spec{spec}, nil
	case condition == "":
		var runnable []scenarios.Spec
		for _, c := range scenarios.MatrixConditions() {
			if err := tunnelAvailable(c); err != nil {
				fmt.Fprintf(stdout, "leaving condition %s out: %v\n", c.Name, err)
				continue
			}
			runnable = append(runnable, c)
		}
		return runnable, nil
	}
	c, err := scenarios.MatrixCondition(condition)
	if err == nil {
		err = tunnelAvailable(c)
	}
	if err != nil {
		return nil, fmt.Errorf("invalid value %q for flag --condition: %w", condition, err)
	}
	return []scenarios.Spec{c}, nil
}

// tunnelAvailable says what this machine lacks to run spec's tunnel.
func tunnelAvailable(spec scenarios.Spec) error {
	if err := spec.Tunnel.Available(); err != nil {
		return fmt.Errorf("%s asks for an %s tunnel: %w", spec.Name, spec.Tunnel, err)
	}
	return nil
}
