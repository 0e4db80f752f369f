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

	"golang.org/x/term"

	"github.com/tunnelprobe/tunnelprobe/internal/childproc"
	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/internal/syncbuf"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/check/cafile"
)

const loadUsage = `Usage: tunnelprobe load [flags]
       tunnelprobe load merge [flags] FILE...   (merge --json results; see load merge --help)

Open --conns TCP connections to --target (a "tunnelprobe sink", for example),
keep them busy for --duration and measure throughput, disruptions and, with
--probe, how long a health check takes while the path is loaded.

Paths: direct (default), through a SOCKS5 proxy (--socks5), or through an
in-process lab over a shaped link (--lab, with the --link-* flags, and
--tunnel for WireGuard or OpenVPN;
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

// loadFlags are the flags of the load command. Most of them set spec, the
// run as data: what this process builds its run from, and what --procs
// children are sent.
type loadFlags struct {
	spec      loadgen.ChildConfig // Conns: --conns; the path: see openPath
	reconnect bool
	lab       bool
	link      *linkFlags   // --link-*: --rate is the load's own pacing
	tunnel    *tunnelFlags // --tunnel, --transport
	procs     int
	sweep     []int
	jsonOut   string
	plotOut   string
	tlsCA     cafile.File // into spec.ProbeCAPEM
	// delivered, set by openPath where the path counts what its target
	// received (the lab's sink), reads that count.
	delivered func() int64
}

// loadExclusive lists flags that set the same thing, for cliflag.Parse: a
// value on the command line hides the environment's value of the others.
var loadExclusive = [][]string{{"connect-rate", "ramp"}, {"conns", "sweep"}, {"socks5", "lab"}}

func (f *loadFlags) register(fs *flag.FlagSet) {
	s := &f.spec
	fs.StringVar(&s.Target, "target", "", "`host:port` to load, e.g. a tunnelprobe sink; required unless --lab (then an address inside the tunnel, the lab's sink by default)")
	fs.BoolVar(&f.lab, "lab", false, "start the in-process tunnel lab (see the --link-* flags) and load through it")
	f.link = registerLinkFlags(fs, "link-", "with --lab: ")
	f.tunnel = registerTunnelFlags(fs, "with --lab: ")
	fs.Var(cliflag.Addr(&s.SOCKS5, "", true), "socks5", "dial through the SOCKS5 proxy at `address`")
	fs.Var(cliflag.Int(&s.Conns, 100, 1), "conns", "`count` of connections to open and hold")
	fs.Var(cliflag.Float(&s.ConnectRate), "connect-rate", "ramp: open `N` new connections per second, 0 for as fast as possible; excludes --ramp")
	fs.Var(cliflag.Duration(&s.Ramp, 0, true), "ramp", "ramp: open the connections evenly over this `duration`; excludes --connect-rate")
	fs.Var(cliflag.Duration(&s.Duration, 30*time.Second, false), "duration", "`duration` to hold the connections once opened")
	fs.Var(cliflag.Func(&s.Rate, parseLoadRate, formatLoadRate), "rate",
		"aggregate paced `rate` over all connections, \"100mbit\", \"5MB/s\", bits/s; \"greedy\" writes as fast as the path allows")
	fs.TextVar(&s.Direction, "direction", loadgen.Up, "`direction` of the traffic: up, down or both")
	fs.BoolVar(&f.reconnect, "reconnect", true, "redial broken connections with back-off (each counted as a disruption)")
	fs.Var(cliflag.Int(&f.procs, 1, 1), "procs", "`count` of processes to split the connections over (each has its own open-file limit)")
	fs.Var(cliflag.Func(&s.Sources, loadgen.ParseSources, loadgen.FormatSources), "source",
		"source `addresses` to spread connections over, a range 127.0.0.2-127.0.0.9 or a comma list (direct path only)")
	fs.Var(cliflag.String(&s.Probe, parseLoadProbe), "probe",
		"health check `url` to run under load through the same path: tls://host:port or tcp://host:port")
	fs.Var(cliflag.Duration(&s.ProbeEvery, time.Second, false), "probe-every", "`duration` between probes")
	fs.Var(cliflag.Duration(&s.ProbeTimeout, 10*time.Second, false), "probe-timeout", "`duration` after which a probe counts as failed")
	fs.TextVar(&f.tlsCA, "tls-ca", cafile.File{},
		"PEM `file` of the CA certificates that verify a tls probe, instead of the system's")
	fs.BoolVar(&s.ProbeInsecure, "tls-insecure", false, "accept any certificate in a tls probe")
	fs.Var(cliflag.IntList(&f.sweep, 1), "sweep", "run one level per `list` entry of connection counts, e.g. 100,500,1000,5000; excludes --conns")
	fs.Var(cliflag.OutputFile(&f.jsonOut), "json", "write every result to this JSON `file` (schema in docs/load.md)")
	fs.Var(cliflag.OutputFile(&f.plotOut), "plot", "write a PNG `file`: a run over time, or a sweep's probe latency against connections")
}

// finish completes spec with what flags outside it say (--reconnect,
// --tls-ca) and reports the first inconsistency between flags, naming
// them. set holds the flags given on the command line or in the
// environment.
func (f *loadFlags) finish(set map[string]bool) error {
	s := &f.spec
	s.NoReconnect, s.ProbeCAPEM = !f.reconnect, f.tlsCA.PEM
	switch {
	case set["connect-rate"] && set["ramp"]:
		return errors.New("--connect-rate and --ramp exclude each other")
	case set["conns"] && set["sweep"]:
		return errors.New("--conns and --sweep exclude each other")
	case f.lab && s.SOCKS5 != "":
		return errors.New("--lab and --socks5 exclude each other")
	case !f.lab && s.Target == "":
		return errors.New("flag --target is required (or --lab)")
	case len(s.Sources) > 0 && (f.lab || s.SOCKS5 != ""):
		return errors.New("flag --source applies to direct connections only, not with --lab or --socks5")
	case !f.lab && (set["tunnel"] || set["transport"]):
		return errors.New("flags --tunnel and --transport need --lab")
	}
	if f.lab {
		if err := f.tunnel.check(set); err != nil {
			return err
		}
	}
	if s.Target != "" {
		if host, port, err := net.SplitHostPort(s.Target); err != nil || host == "" || port == "" {
			return fmt.Errorf("invalid value %q for flag --target: not a host:port", s.Target)
		}
	}
	return nil
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
	if err := f.finish(cliflag.Given(fs)); err != nil {
		return cliflag.UsageError(stderr, name, err)
	}

	terminal := isTerminal(stderr)
	stderr = &syncbuf.Writer{W: stderr} // children's stderr and the progress line share it
	stopMetrics, err := metrics.start(stderr)
	if err != nil {
		return cliflag.ExitCode(stderr, name, err)
	}
	defer stopMetrics()
	stopped := ctx // Ctrl-C or SIGTERM; the path's context also ends with the path
	pathCtx, dialer, closePath, err := f.openPath(ctx)
	if err != nil {
		if stopped.Err() != nil {
			fmt.Fprintf(stderr, "%s: interrupted while the lab started, nothing measured\n", name)
			return cliflag.ExitInterrupted
		}
		return cliflag.ExitCode(stderr, name, err)
	}
	defer closePath()
	ctx = pathCtx
	if _, err := f.spec.BuildOver(dialer); err != nil {
		return cliflag.UsageError(stderr, name, err)
	}
	f.warnOverDescriptors(stderr)

	sweep := f.newSweep(dialer)
	if sweep.Procs > 1 && slices.Max(sweep.LevelCounts()) > 1 {
		if sweep.Command, err = childproc.Self(stderr, "load", childMode); err != nil {
			return cliflag.ExitCode(stderr, name, err)
		}
	}
	showLevels(&sweep, metrics, f.delivered, terminal, stdout, stderr)
	results, err := sweep.Run(ctx)
	err = f.writeResults(ctx, results, err, stdout)
	if err = errors.Join(err, closePath()); err == nil && stopped.Err() != nil {
		// What was measured is written; a script must not take the
		// cut-short run for a whole one.
		return cliflag.ExitInterrupted
	}
	return cliflag.ExitCode(stderr, name, err)
}

// writeResults writes what the run measured, results, which it ended with
// runErr: the sweep's table and the --json and --plot files. A run that
// went to its end and opened no connection fails.
func (f *loadFlags) writeResults(ctx context.Context, results []loadgen.Result, runErr error, stdout io.Writer) error {
	err := runErr
	if len(f.sweep) > 1 && len(results) > 0 {
		err = errors.Join(err, loadgen.WriteSweepTable(stdout, results))
	}
	if len(results) > 0 {
		err = errors.Join(err, loadgen.NewReport(results, len(f.sweep) > 0).WriteFiles(f.jsonOut, f.plotOut))
	}
	if err == nil && ctx.Err() == nil {
		err = loadgen.CheckOpened(results)
	}
	return err
}

// newSweep returns the levels the flags ask for, run in this process
// through dialer (nil: the host network or --socks5) or over --procs
// children.
func (f *loadFlags) newSweep(dialer check.Dialer) loadgen.Sweep {
	return loadgen.Sweep{Config: f.spec, Levels: f.sweep, Procs: f.procs, Dialer: dialer}
}

// showLevels sets sweep's hooks: a progress line on stderr (and the
// --metrics) while a level runs, its summary on stdout once it is over,
// with what its target received in the level's measured window when
// delivered (nil: unknown) counts it. That is read at the window's edges,
// not at OnStart and OnEnd: what the send buffers still hold at the end
// drains through the path in the end-of-run handshake, after the window,
// and would make a rate above what the path carries.
func showLevels(sweep *loadgen.Sweep, metrics *loadMetrics, delivered func() int64, terminal bool, stdout, stderr io.Writer) {
	n := len(sweep.LevelCounts())
	var prog *loadgen.Progress // of the level running; levels run one at a time
	var atStart, atEnd *int64  // delivered at the start and the end of the level's window
	read := func() *int64 {
		if delivered == nil {
			return nil
		}
		d := delivered()
		return &d
	}
	sweep.OnStart = func(i int, c loadgen.ChildConfig) func(loadgen.Second) {
		atStart, atEnd = nil, nil
		prefix := ""
		if n > 1 {
			prefix = fmt.Sprintf("level %d/%d: ", i+1, n)
		}
		prog = loadgen.NewProgress(stderr, terminal, prefix, c.Conns, c.Expected())
		return metrics.observe(c.Conns, prog.Second)
	}
	sweep.OnWindowStart = func(int) { atStart = read() }
	sweep.OnWindowEnd = func(int) { atEnd = read() }
	sweep.OnEnd = func(i int, r *loadgen.Result) error {
		prog.Done()
		if r == nil {
			return nil
		}
		if atStart != nil && atEnd != nil {
			d := *atEnd - *atStart
			r.DeliveredUp = &d
		}
		return loadgen.WriteLevel(stdout, i, n, *r)
	}
}

// warnOverDescriptors warns when a process would be asked for more
// connections than it may open descriptors: the rest would only fail with
// "too many open files". A run through the in-process lab takes none.
func (f *loadFlags) warnOverDescriptors(stderr io.Writer) {
	if f.lab && f.procs <= 1 {
		return
	}
	if short := f.newSweep(nil).DescriptorShortfall(loadgen.OpenFileLimit()); short != nil {
		fmt.Fprintf(stderr, "tunnelprobe load: warning: %d connections in one process, which may open %d files (one a connection):"+
			" expect too_many_open_files errors; --procs %d would spread them\n", short.PerProcess, short.Limit, short.Procs)
	}
}

// isTerminal says whether w is a terminal, where a progress bar can redraw
// itself.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
