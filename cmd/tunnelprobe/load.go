package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

const loadUsage = `Usage: tunnelprobe load [flags]
       tunnelprobe load merge [flags] FILE...   (merge --json results; see load merge --help)

Open --conns TCP connections to --target (a "tunnelprobe sink", for example),
keep them busy for --duration and measure throughput, disruptions and, with
--probe, how long a health check takes while the path is loaded.

Paths: direct (default), through a SOCKS5 proxy (--socks5), or through an
in-process WireGuard lab over a shaped link (--lab, with the --link-* flags;
it targets the lab's sink and, unless --probe says otherwise, probes the
lab's TLS target).

A live progress line goes to stderr, a summary to stdout; --json and --plot
write the full results. Ctrl-C or SIGTERM stops the run and still writes
every output for what was measured.

Examples:
  tunnelprobe sink --listen 127.0.0.1:9000 &
  tunnelprobe load --target 127.0.0.1:9000 --conns 1000 --duration 10s --json run.json --plot run.png
  tunnelprobe load --lab --link-rate 20mbit --sweep 10,100,1000 --duration 20s --plot sweep.png
`

const (
	// maxSources bounds --source: each address already adds some 28,000
	// ports, so a longer list is a typo.
	maxSources = 1024
)

// loadFlags are the flags of the load command.
type loadFlags struct {
	target      string
	lab         bool
	link        *linkFlags // --link-*: --rate is the load's own pacing
	socks5      string
	conns       int
	connectRate float64
	ramp        time.Duration
	duration    time.Duration
	rate        rateValue
	direction   loadgen.Direction
	reconnect   bool
	procs       int
	sources     sourceList
	probe       probeValue
	probeEvery  time.Duration
	probeTO     time.Duration
	tlsCA       caFile
	tlsInsecure bool
	sweep       []int
	jsonOut     string
	plotOut     string
}

// loadExclusive lists flags that set the same thing, for parseWithEnv: a
// value on the command line hides the environment's value of the others.
var loadExclusive = [][]string{{"connect-rate", "ramp"}, {"conns", "sweep"}, {"socks5", "lab"}}

func (f *loadFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.target, "target", "", "`host:port` to load, e.g. a tunnelprobe sink; required unless --lab (then an address inside the tunnel, the lab's sink by default)")
	fs.BoolVar(&f.lab, "lab", false, "start the in-process tunnel lab (see the --link-* flags) and load through it")
	f.link = registerLinkFlags(fs, "link-", "with --lab: ")
	fs.Var(cliflag.Addr(&f.socks5, "", true), "socks5", "dial through the SOCKS5 proxy at `address`")
	fs.Var(cliflag.Int(&f.conns, 100, 1), "conns", "`count` of connections to open and hold")
	fs.Var(cliflag.Float(&f.connectRate), "connect-rate", "ramp: open `N` new connections per second, 0 for as fast as possible; excludes --ramp")
	fs.Var(cliflag.Duration(&f.ramp, 0, true), "ramp", "ramp: open the connections evenly over this `duration`; excludes --connect-rate")
	fs.Var(cliflag.Duration(&f.duration, 30*time.Second, false), "duration", "`duration` to hold the connections once opened")
	fs.Var(&f.rate, "rate", "aggregate paced `rate` over all connections, \"100mbit\", \"5MB/s\", bits/s; \"greedy\" writes as fast as the path allows")
	fs.TextVar(&f.direction, "direction", loadgen.Up, "`direction` of the traffic: up, down or both")
	fs.BoolVar(&f.reconnect, "reconnect", true, "redial broken connections with back-off (each counted as a disruption)")
	fs.Var(cliflag.Int(&f.procs, 1, 1), "procs", "`count` of processes to split the connections over (each has its own open-file limit)")
	fs.Var(&f.sources, "source", "source `addresses` to spread connections over, a range 127.0.0.2-127.0.0.9 or a comma list (direct path only)")
	fs.Var(&f.probe, "probe", "health check `url` to run under load through the same path: tls://host:port or tcp://host:port")
	fs.Var(cliflag.Duration(&f.probeEvery, time.Second, false), "probe-every", "`duration` between probes")
	fs.Var(cliflag.Duration(&f.probeTO, 10*time.Second, false), "probe-timeout", "`duration` after which a probe counts as failed")
	fs.Var(cliflag.Func(&f.tlsCA, loadCAFile, caFile.String), "tls-ca", "PEM `file` of the CA certificates that verify a tls probe, instead of the system's")
	fs.BoolVar(&f.tlsInsecure, "tls-insecure", false, "accept any certificate in a tls probe")
	fs.Var(cliflag.IntList(&f.sweep, 1), "sweep", "run one level per `list` entry of connection counts, e.g. 100,500,1000,5000; excludes --conns")
	fs.Var(cliflag.OutputFile(&f.jsonOut), "json", "write every result to this JSON `file` (schema in docs/load.md)")
	fs.Var(cliflag.OutputFile(&f.plotOut), "plot", "write a PNG `file`: a run over time, or a sweep's probe latency against connections")
}

// check reports the first inconsistency between flags, naming them.
// set holds the flags given on the command line or in the environment.
func (f *loadFlags) check(set map[string]bool) error {
	switch {
	case set["connect-rate"] && set["ramp"]:
		return errors.New("--connect-rate and --ramp exclude each other")
	case set["conns"] && set["sweep"]:
		return errors.New("--conns and --sweep exclude each other")
	case f.lab && f.socks5 != "":
		return errors.New("--lab and --socks5 exclude each other")
	case !f.lab && f.target == "":
		return errors.New("flag --target is required (or --lab)")
	case len(f.sources.addrs) > 0 && (f.lab || f.socks5 != ""):
		return errors.New("flag --source applies to direct connections only, not with --lab or --socks5")
	}
	if f.target != "" {
		if host, port, err := net.SplitHostPort(f.target); err != nil || host == "" || port == "" {
			return fmt.Errorf("invalid value %q for flag --target: not a host:port", f.target)
		}
	}
	if f.socks5 != "" {
		if _, _, err := net.SplitHostPort(f.socks5); err != nil {
			return fmt.Errorf("invalid value %q for flag --socks5: not a host:port", f.socks5)
		}
	}
	return nil
}

// levels returns the connection counts to run, one per level.
func (f *loadFlags) levels() []int {
	if len(f.sweep) > 0 {
		return f.sweep
	}
	return []int{f.conns}
}

// runLoad is the load command.
func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return loadCommand(ctx, args, os.Getenv, stdout, stderr)
}

func loadCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	const name = "tunnelprobe load"
	if len(args) > 0 && args[0] == "merge" {
		return loadMerge(args[1:], getenv, stdout, stderr) // loadmerge.go
	}
	if len(args) > 0 && args[0] == childMode {
		// A --procs child: its parent gives it its part of the run as data.
		return cliflag.ExitCode(stderr, name, loadgen.RunChild(ctx, os.Stdin, stdout))
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var f loadFlags
	f.register(fs)
	metrics := registerLoadMetrics(fs) // loadmetrics.go; children never get --metrics
	if code, ok := cliflag.ParseCommand(fs, args, getenv, loadUsage, stdout, stderr, loadExclusive...); !ok {
		return code
	}
	if err := f.check(cliflag.Given(fs)); err != nil {
		return cliflag.UsageError(stderr, name, err)
	}

	terminal := isTerminal(stderr)
	stderr = &lockedWriter{w: stderr} // children's stderr and the progress line share it
	stopMetrics, err := metrics.start(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	defer stopMetrics()
	path, err := openPath(ctx, &f, f.link.set)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	defer path.close()
	if err := f.buildConfig(path, f.conns).Validate(); err != nil {
		return cliflag.UsageError(stderr, name, err)
	}
	f.warnOverDescriptors(stderr)

	results, code := runLevels(ctx, &f, path, metrics, terminal, stdout, stderr)
	if len(f.levels()) > 1 && len(results) > 0 {
		if err := loadgen.WriteSweepTable(stdout, results); err != nil {
			code = 1
		}
	}
	if err := writeLoadOutputs(&f, results); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		code = 1
	}
	if code == 0 && ctx.Err() == nil {
		code = cliflag.ExitCode(stderr, name, noneOpened(results))
	}
	return code
}

// noneOpened names the first level of results where no connection opened.
func noneOpened(results []loadgen.Result) error {
	for _, r := range results {
		if r.ConnsAchieved == 0 {
			return fmt.Errorf("no connection to %s could be opened", r.Target)
		}
	}
	return nil
}

// runLevels runs each level of connections in turn (one, without
// --sweep), in this process or over --procs children, printing a progress
// line and a summary of each. It stops after a level that failed or was
// interrupted, and returns what was measured and the exit code so far.
func runLevels(ctx context.Context, f *loadFlags, path *loadPath, metrics *loadMetrics, terminal bool, stdout, stderr io.Writer) ([]loadgen.Result, int) {
	const name = "tunnelprobe load"
	levels := f.levels()
	var results []loadgen.Result
	for i, conns := range levels {
		prefix := ""
		if len(levels) > 1 {
			prefix = fmt.Sprintf("level %d/%d: ", i+1, len(levels))
		}
		prog := newProgress(stderr, terminal, prefix, conns, f.expected(conns))
		onSecond := metrics.observe(conns, prog.second)
		var res loadgen.Result
		var err error
		if f.procs > 1 && conns > 1 {
			res, err = runProcs(ctx, f, path, conns, onSecond, stderr)
		} else {
			cfg := f.buildConfig(path, conns)
			cfg.OnSecond = onSecond
			res, err = loadgen.Run(ctx, cfg)
		}
		prog.done()
		code := 0
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			code = 1
			if res.Histograms.Connect == nil {
				return results, code // nothing was measured
			}
		}
		res.Path = path.name
		results = append(results, res)
		if len(levels) > 1 {
			fmt.Fprintf(stdout, "%s%d connections\n", prefix, conns)
		}
		if err := loadgen.WriteSummary(stdout, res); err != nil {
			code = 1
		}
		if len(levels) > 1 {
			fmt.Fprintln(stdout)
		}
		if ctx.Err() != nil || code != 0 {
			return results, code
		}
	}
	return results, 0
}

// writeLoadOutputs writes --json and --plot for results: a run's, or a
// sweep's when --sweep was given.
func writeLoadOutputs(f *loadFlags, results []loadgen.Result) error {
	if len(results) == 0 {
		return nil
	}
	sweep := len(f.sweep) > 0
	var errs []error
	if f.jsonOut != "" {
		rep := loadgen.Report{Result: &results[0]}
		if sweep {
			rep = loadgen.Report{Levels: results}
		}
		errs = append(errs, loadgen.WriteJSON(f.jsonOut, rep))
	}
	if f.plotOut != "" {
		if sweep {
			errs = append(errs, loadgen.PlotSweep(f.plotOut, results))
		} else {
			errs = append(errs, loadgen.PlotRun(f.plotOut, results[0]))
		}
	}
	return errors.Join(errs...)
}

// warnOverDescriptors warns when a process would be asked for more
// connections than it may open descriptors: the rest would only fail with
// "too many open files". A run through the in-process lab takes none.
func (f *loadFlags) warnOverDescriptors(stderr io.Writer) {
	limit := loadgen.OpenFileLimit()
	if f.lab && f.procs <= 1 || limit == 0 {
		return
	}
	most := slices.Max(f.levels())
	perProc := (most + f.procs - 1) / f.procs
	// Leave some for the process itself: its stdio, the poller, a sink.
	if usable := limit - 64; perProc > usable {
		fmt.Fprintf(stderr, "tunnelprobe load: warning: %d connections in one process, which may open %d files (one a connection):"+
			" expect too_many_open_files errors; --procs %d would spread them\n", perProc, limit, (most+usable-1)/usable)
	}
}

// expected returns how long a level of conns connections should take:
// the ramp, then the hold.
func (f *loadFlags) expected(conns int) time.Duration {
	ramp := f.ramp
	if r := f.connectRate; r > 0 {
		ramp = time.Duration(float64(conns) / r * float64(time.Second))
	}
	return ramp + f.duration
}

// buildConfig returns the configuration of a run of conns connections on
// path.
func (f *loadFlags) buildConfig(p *loadPath, conns int) loadgen.Config {
	return loadgen.Config{
		Target:       p.target,
		Dialer:       p.dialer,
		Sources:      f.sources.addrs,
		Conns:        conns,
		ConnectRate:  f.connectRate,
		Ramp:         f.ramp,
		Duration:     f.duration,
		Rate:         f.rate.bits,
		Direction:    f.direction,
		NoReconnect:  !f.reconnect,
		Probe:        p.probe,
		ProbeEvery:   f.probeEvery,
		ProbeTimeout: f.probeTO,
		PathName:     p.name,
	}
}
