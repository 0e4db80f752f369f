package main

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/net/proxy"
	"golang.org/x/term"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/middleware"
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
	// startLead is how far ahead of "now" a parent schedules the start of
	// its children, so that the start line reaches every one of them
	// before the instant it names.
	startLead = 100 * time.Millisecond
	// maxSources bounds --source: each address already adds some 28,000
	// ports, so a longer list is a typo.
	maxSources = 1024
)

// loadFlags are the flags of the load command.
type loadFlags struct {
	target      string
	lab         bool
	link        linkFlagValues
	socks5      string
	conns       int
	connectRate floatValue
	ramp        time.Duration
	duration    time.Duration
	rate        rateValue
	direction   directionValue
	reconnect   bool
	procs       int
	sources     sourceList
	probe       probeValue
	probeEvery  time.Duration
	probeTO     time.Duration
	tlsCA       certPoolValue
	tlsInsecure bool
	sweep       intList
	jsonOut     string
	plotOut     string
}

// linkFlagValues are the lab's link settings. They carry a link- prefix
// here because --rate is the load's own pacing.
type linkFlagValues struct {
	rate, delay, queue, loss string
	seed                     uint64
}

// loadExclusive lists flags that set the same thing, for parseWithEnv: a
// value on the command line hides the environment's value of the others.
var loadExclusive = [][]string{{"connect-rate", "ramp"}, {"conns", "sweep"}, {"socks5", "lab"}}

func (f *loadFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.target, "target", "", "`host:port` to load, e.g. a tunnelprobe sink; required unless --lab (then an address inside the tunnel, the lab's sink by default)")
	fs.BoolVar(&f.lab, "lab", false, "start the in-process tunnel lab (see the --link-* flags) and load through it")
	fs.StringVar(&f.link.rate, "link-rate", "20mbit", "with --lab: link `rate` per direction, \"20mbit\", \"5MB/s\" or \"unlimited\"")
	fs.StringVar(&f.link.delay, "link-delay", "10ms", "with --lab: one-way link `delay`")
	fs.StringVar(&f.link.queue, "link-queue", "256p", "with --lab: queue `limit` per direction, packets (\"256p\") or bytes (\"256KB\")")
	fs.StringVar(&f.link.loss, "link-loss", "0", "with --lab: random loss `probability`, 0..1 or \"1%\"")
	fs.Uint64Var(&f.link.seed, "link-seed", 1, "with --lab: `seed` of the random loss")
	fs.StringVar(&f.socks5, "socks5", "", "dial through the SOCKS5 proxy at `address`")
	fs.Var(newInt(&f.conns, 100, 1), "conns", "`count` of connections to open and hold")
	fs.Var(&f.connectRate, "connect-rate", "ramp: open `N` new connections per second, 0 for as fast as possible; excludes --ramp")
	fs.Var(newDuration(&f.ramp, 0, true), "ramp", "ramp: open the connections evenly over this `duration`; excludes --connect-rate")
	fs.Var(newDuration(&f.duration, 30*time.Second, false), "duration", "`duration` to hold the connections once opened")
	fs.Var(&f.rate, "rate", "aggregate paced `rate` over all connections, \"100mbit\", \"5MB/s\", bits/s; \"greedy\" writes as fast as the path allows")
	f.direction = directionValue{text: "up"}
	fs.Var(&f.direction, "direction", "`direction` of the traffic: up, down or both")
	fs.BoolVar(&f.reconnect, "reconnect", true, "redial broken connections with back-off (each counted as a disruption)")
	fs.Var(newInt(&f.procs, 1, 1), "procs", "`count` of processes to split the connections over (each has its own open-file limit)")
	fs.Var(&f.sources, "source", "source `addresses` to spread connections over, a range 127.0.0.2-127.0.0.9 or a comma list (direct path only)")
	fs.Var(&f.probe, "probe", "health check `url` to run under load through the same path: tls://host:port or tcp://host:port")
	fs.Var(newDuration(&f.probeEvery, time.Second, false), "probe-every", "`duration` between probes")
	fs.Var(newDuration(&f.probeTO, 10*time.Second, false), "probe-timeout", "`duration` after which a probe counts as failed")
	fs.Var(&f.tlsCA, "tls-ca", "PEM `file` of the CA certificates that verify a tls probe, instead of the system's")
	fs.BoolVar(&f.tlsInsecure, "tls-insecure", false, "accept any certificate in a tls probe")
	fs.Var(&f.sweep, "sweep", "run one level per `list` entry of connection counts, e.g. 100,500,1000,5000; excludes --conns")
	fs.StringVar(&f.jsonOut, "json", "", "write every result to this JSON `file` (schema in the README)")
	fs.StringVar(&f.plotOut, "plot", "", "write a PNG `file`: a run over time, or a sweep's probe latency against connections")
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
	for _, out := range []struct{ flag, path string }{{"json", f.jsonOut}, {"plot", f.plotOut}} {
		if out.path == "" {
			continue
		}
		// Found now rather than after a run of many minutes.
		if st, err := os.Stat(filepath.Dir(out.path)); err != nil || !st.IsDir() {
			return fmt.Errorf("invalid value %q for flag --%s: no such directory", out.path, out.flag)
		}
	}
	return nil
}

// levels returns the connection counts to run, one per level.
func (f *loadFlags) levels() []int {
	if len(f.sweep.values) > 0 {
		return f.sweep.values
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
		return loadMerge(ctx, args[1:], getenv, stdout, stderr) // loadmerge.go
	}
	isChild := len(args) > 0 && args[0] == childMode
	if isChild {
		args, getenv = args[1:], noEnv
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var f loadFlags
	f.register(fs)
	metrics := registerLoadMetrics(fs) // loadmetrics.go; children never get --metrics
	if code, ok := parseCommand(fs, args, getenv, loadUsage, stdout, stderr, loadExclusive...); !ok {
		return code
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := f.check(set); err != nil {
		return usageError(stderr, name, err)
	}
	linkSet, err := f.link.settings()
	if err != nil {
		return usageError(stderr, name, err)
	}
	if isChild {
		return loadChild(ctx, &f, stdout, stderr)
	}

	terminal := isTerminal(stderr)
	stderr = &lockedWriter{w: stderr} // children's stderr and the progress line share it
	stopMetrics, err := metrics.start(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	defer stopMetrics()
	path, err := openPath(ctx, &f, linkSet)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	defer path.close()
	if err := f.buildConfig(path, f.conns).Validate(); err != nil {
		return usageError(stderr, name, err)
	}

	levels := f.levels()
	var results []loadgen.Result
	code := 0
	for i, conns := range levels {
		prefix := ""
		if len(levels) > 1 {
			prefix = fmt.Sprintf("level %d/%d: ", i+1, len(levels))
		}
		prog := newProgress(stderr, terminal, prefix, conns, f.expected(conns))
		onSecond := metrics.observe(conns, prog.second)
		var res loadgen.Result
		if f.procs > 1 && conns > 1 {
			res, err = runProcs(ctx, &f, path, conns, onSecond, stderr)
		} else {
			cfg := f.buildConfig(path, conns)
			cfg.OnSecond = onSecond
			res, err = loadgen.Run(ctx, cfg)
		}
		prog.done()
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			code = 1
			if res.Histograms.Connect == nil {
				break // nothing was measured
			}
		}
		res.Path = path.name
		results = append(results, res)
		if len(levels) > 1 {
			fmt.Fprintf(stdout, "level %d/%d: %d connections\n", i+1, len(levels), conns)
		}
		if err := loadgen.WriteSummary(stdout, res); err != nil {
			code = 1
		}
		if len(levels) > 1 {
			fmt.Fprintln(stdout)
		}
		if ctx.Err() != nil || code != 0 {
			break
		}
	}
	if len(levels) > 1 && len(results) > 0 {
		if err := loadgen.WriteSweepTable(stdout, results); err != nil {
			code = 1
		}
	}
	if err := writeLoadOutputs(&f, results); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		code = 1
	}
	if code == 0 && ctx.Err() == nil {
		for _, r := range results {
			if r.ConnsAchieved == 0 {
				fmt.Fprintf(stderr, "%s: no connection to %s could be opened\n", name, r.Target)
				code = 1
				break
			}
		}
	}
	return code
}

// writeLoadOutputs writes --json and --plot for results: a run's, or a
// sweep's when --sweep was given.
func writeLoadOutputs(f *loadFlags, results []loadgen.Result) error {
	if len(results) == 0 {
		return nil
	}
	sweep := len(f.sweep.values) > 0
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

// expected returns how long a level of conns connections should take:
// the ramp, then the hold.
func (f *loadFlags) expected(conns int) time.Duration {
	ramp := f.ramp
	if r := f.connectRate.v; r > 0 {
		ramp = time.Duration(float64(conns) / r * float64(time.Second))
	}
	return ramp + f.duration
}

// loadPath is the way to the target: what dials, what probes, and how
// children reach the same path.
type loadPath struct {
	name   string
	target string
	dialer middleware.Dialer // nil: the host network, with --source
	probe  middleware.Checker
	// Children reach the lab through its SOCKS5 ingress, and verify its
	// TLS target with its CA, written to a file.
	childSOCKS5, childProbe, childCAFile string
	close                                func()
}

// openPath builds the path the flags ask for, starting the lab for --lab.
func openPath(ctx context.Context, f *loadFlags, link harness.Settings) (*loadPath, error) {
	p := &loadPath{name: "direct", target: f.target, close: func() {}}
	roots := f.tlsCA.pool
	probeURL := f.probe.text
	switch {
	case f.socks5 != "":
		d, err := proxy.SOCKS5("tcp", f.socks5, nil, &net.Dialer{})
		if err != nil {
			return nil, fmt.Errorf("--socks5: %w", err)
		}
		cd, ok := d.(proxy.ContextDialer)
		if !ok {
			return nil, errors.New("--socks5: the proxy dialer cannot be cancelled")
		}
		p.name, p.dialer, p.childSOCKS5 = "socks5 "+f.socks5, middleware.DialerFunc(cd.DialContext), f.socks5
	case f.lab:
		cfg := harness.Config{Link: link, Seed: f.link.seed}
		if f.procs > 1 {
			cfg.SOCKS5 = "127.0.0.1:0" // for the children
		}
		lab := harness.New(cfg)
		if err := lab.Start(ctx); err != nil {
			return nil, fmt.Errorf("lab: %w", err)
		}
		p.close = func() { lab.Close() }
		p.name = fmt.Sprintf("lab (rate %s, delay %s, queue %s, loss %g)", link.Rate, link.Delay, f.link.queue, link.Loss)
		p.dialer = middleware.DialerFunc(lab.Dial)
		if p.target == "" {
			// The lab's sink speaks loadgen/sink's protocol: each
			// connection's header asks for up, down or both.
			p.target = lab.SinkAddr().String()
		}
		if roots == nil {
			roots = lab.CA().Pool
		}
		if probeURL == "" {
			probeURL = "tls://" + net.JoinHostPort(harness.TLSHost, "443")
		}
		if f.procs > 1 {
			p.childSOCKS5 = lab.SOCKS5Addr().String()
			if f.tlsCA.file == "" {
				file, err := writeTemp("tunnelprobe-lab-ca-*.pem", lab.CA().PEM)
				if err != nil {
					p.close()
					return nil, err
				}
				p.childCAFile = file
				p.close = func() { lab.Close(); os.Remove(file) }
			}
		}
	}
	p.childProbe = probeURL
	if probeURL != "" {
		pv := probeValue{}
		if err := pv.Set(probeURL); err != nil {
			p.close()
			return nil, err
		}
		p.probe = pv.checker(p.dialer, roots, f.tlsInsecure)
	}
	return p, nil
}

func writeTemp(pattern string, b []byte) (string, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return "", err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// buildConfig returns the configuration of a run of conns connections on
// path.
func (f *loadFlags) buildConfig(p *loadPath, conns int) loadgen.Config {
	return loadgen.Config{
		Target:       p.target,
		Dialer:       p.dialer,
		Sources:      f.sources.addrs,
		Conns:        conns,
		ConnectRate:  f.connectRate.v,
		Ramp:         f.ramp,
		Duration:     f.duration,
		Rate:         f.rate.bits,
		Direction:    f.direction.d,
		NoReconnect:  !f.reconnect,
		Probe:        p.probe,
		ProbeEvery:   f.probeEvery,
		ProbeTimeout: f.probeTO,
		PathName:     p.name,
	}
}

// childArgs returns the command line of child i, which runs share of the
// conns connections: rates are split in proportion, and only the first
// child probes, so that the path sees one probe at a time as with one
// process.
func childArgs(f *loadFlags, p *loadPath, i, share, conns int) []string {
	frac := float64(share) / float64(conns)
	args := []string{"load", childMode,
		"--target", p.target,
		"--conns", strconv.Itoa(share),
		"--duration", f.duration.String(),
		"--direction", f.direction.text,
		"--reconnect=" + strconv.FormatBool(f.reconnect),
		"--probe-every", f.probeEvery.String(),
		"--probe-timeout", f.probeTO.String(),
	}
	if f.connectRate.v > 0 {
		args = append(args, "--connect-rate", strconv.FormatFloat(f.connectRate.v*frac, 'g', -1, 64))
	}
	if f.ramp > 0 {
		args = append(args, "--ramp", f.ramp.String())
	}
	if f.rate.bits > 0 {
		args = append(args, "--rate", strconv.FormatFloat(max(1, math.Round(f.rate.bits*frac)), 'f', 0, 64))
	}
	if f.sources.text != "" {
		args = append(args, "--source", f.sources.text)
	}
	if p.childSOCKS5 != "" {
		args = append(args, "--socks5", p.childSOCKS5)
	}
	if i == 0 && p.childProbe != "" {
		args = append(args, "--probe", p.childProbe)
		switch {
		case f.tlsCA.file != "":
			args = append(args, "--tls-ca", f.tlsCA.file)
		case p.childCAFile != "":
			args = append(args, "--tls-ca", p.childCAFile)
		}
		if f.tlsInsecure {
			args = append(args, "--tls-insecure")
		}
	}
	return args
}

// runProcs runs one level of conns connections split over child processes
// (see childArgs) that start at the same instant, and merges their results.
// The end of ctx stops the children as Ctrl-C would, and what they measured
// is still merged.
func runProcs(ctx context.Context, f *loadFlags, p *loadPath, conns int, onSecond func(loadgen.Second), stderr io.Writer) (loadgen.Result, error) {
	n := min(f.procs, conns)
	childCtx, cancel := context.WithCancel(ctx)
	defer cancel()

	type proc struct {
		c      *child
		ready  chan struct{} // closed when the child says it is ready
		done   chan struct{} // closed when its stdout ends
		result *loadgen.Result
		err    error
	}
	merger := newSecondMerger(n, onSecond)
	procs := make([]*proc, 0, n)
	var readers sync.WaitGroup
	var startErr error
	for i := range n {
		share := conns / n
		if i < conns%n {
			share++
		}
		c, err := startChild(childCtx, stderr, childArgs(f, p, i, share, conns)...)
		if err != nil {
			startErr = err
			break
		}
		pr := &proc{c: c, ready: make(chan struct{}), done: make(chan struct{})}
		procs = append(procs, pr)
		readers.Go(func() {
			defer close(pr.done)
			readyClosed := false
			for {
				m, err := pr.c.next()
				if err != nil {
					if !errors.Is(err, io.EOF) {
						pr.err = err
					}
					return
				}
				switch {
				case m.Ready && !readyClosed:
					readyClosed = true
					close(pr.ready)
				case m.Second != nil:
					merger.add(i, *m.Second)
				case m.Result != nil:
					pr.result = m.Result
				case m.Error != "":
					pr.err = fmt.Errorf("load process %d: %s", i+1, m.Error)
				}
			}
		})
	}

	// Wait until every child is ready, then give them all one start time.
	if startErr == nil {
		timeout := time.NewTimer(childStartTimeout)
	wait:
		for i, pr := range procs {
			select {
			case <-pr.ready:
			case <-pr.done:
				startErr = fmt.Errorf("load process %d exited before it was ready", i+1)
				break wait
			case <-timeout.C:
				startErr = fmt.Errorf("load processes not ready after %v", childStartTimeout)
				break wait
			case <-ctx.Done():
				break wait
			}
		}
		timeout.Stop()
	}
	if startErr == nil && ctx.Err() == nil {
		start := time.Now().Add(startLead).UnixNano()
		for _, pr := range procs {
			// A child that cannot be told to start fails and says why.
			fmt.Fprintf(pr.c.stdin, "%d\n", start)
			pr.c.stdin.Close()
		}
	} else {
		cancel() // stop the children: SIGTERM
	}
	readers.Wait()
	for _, pr := range procs {
		if err := pr.c.wait(); err != nil && pr.err == nil && pr.result == nil {
			pr.err = fmt.Errorf("load process: %w", err)
		}
	}
	if startErr != nil {
		return loadgen.Result{}, startErr
	}

	var results []loadgen.Result
	var errs []error
	for i, pr := range procs {
		switch {
		case pr.err != nil:
			errs = append(errs, pr.err)
		case pr.result == nil:
			errs = append(errs, fmt.Errorf("load process %d reported no result", i+1))
		}
		if pr.result != nil {
			results = append(results, *pr.result)
		}
	}
	if len(results) == 0 {
		if ctx.Err() != nil {
			return loadgen.Result{}, nil
		}
		return loadgen.Result{}, errors.Join(append(errs, errors.New("no result from any load process"))...)
	}
	merged, err := loadgen.Merge(results...)
	if err != nil {
		return loadgen.Result{}, err
	}
	merged.Target = p.target
	// Requested is what was asked for, also of a child that failed.
	merged.ConnsRequested = conns
	return merged, errors.Join(errs...)
}

// loadChild is a load process started by a --procs parent. It says it is
// ready, waits for the start time its parent writes on stdin, runs, and
// reports each second and its result in JSON lines on stdout.
func loadChild(ctx context.Context, f *loadFlags, stdout, stderr io.Writer) int {
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	send := func(m childMsg) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(m) // a parent that went away has no use for it
	}
	path, err := openPath(ctx, f, harness.Settings{})
	if err != nil {
		send(childMsg{Error: err.Error()})
		return 1
	}
	defer path.close()
	cfg := f.buildConfig(path, f.conns)
	if err := cfg.Validate(); err != nil {
		send(childMsg{Error: err.Error()})
		return 1
	}
	send(childMsg{Ready: true})

	// Stdin is read in a goroutine so that a signal ends the wait. It
	// ends when the parent writes the line or closes the pipe, at the
	// latest when the process exits.
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(os.Stdin).ReadString('\n')
		line <- s
	}()
	var startAt time.Time
	select {
	case s := <-line:
		ns, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			send(childMsg{Error: "no start time from the parent"})
			return 1
		}
		startAt = time.Unix(0, ns)
	case <-ctx.Done():
		send(childMsg{Result: emptyResult(cfg)})
		return 0
	}
	t := time.NewTimer(time.Until(startAt))
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		send(childMsg{Result: emptyResult(cfg)})
		return 0
	}

	cfg.OnSecond = func(s loadgen.Second) { send(childMsg{Second: &s}) }
	res, err := loadgen.Run(ctx, cfg)
	if err != nil {
		send(childMsg{Error: err.Error()})
		return 1
	}
	send(childMsg{Result: &res})
	return 0
}

// emptyResult is the result of a child stopped before it started.
func emptyResult(cfg loadgen.Config) *loadgen.Result {
	return &loadgen.Result{
		Target: cfg.Target, Path: cfg.PathName, Start: time.Now(), Processes: 1, Interrupted: true,
		ConnsRequested: cfg.Conns, Errors: map[string]int64{},
		Histograms: loadgen.Histograms{Connect: loadgen.NewLatencyHistogram().Export(), Probe: loadgen.NewLatencyHistogram().Export()},
	}
}

// secondMerger adds up the seconds that n children report, for the
// progress line: a second is shown once every child has reported it, or
// once a later second is complete (a child that stopped reporting does not
// stall the line).
type secondMerger struct {
	mu      sync.Mutex
	n       int
	emit    func(loadgen.Second)
	pending map[int64]*pendingSecond
	last    int64
}

type pendingSecond struct {
	sum     loadgen.Second
	reports int
}

func newSecondMerger(n int, emit func(loadgen.Second)) *secondMerger {
	return &secondMerger{n: n, emit: emit, pending: map[int64]*pendingSecond{}}
}

func (m *secondMerger) add(_ int, s loadgen.Second) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.T <= m.last {
		return // already shown
	}
	p := m.pending[s.T]
	if p == nil {
		p = &pendingSecond{sum: loadgen.Second{T: s.T}}
		m.pending[s.T] = p
	}
	p.sum.Add(s)
	p.reports++
	if p.reports < m.n {
		return
	}
	// s.T is complete: show it, and drop the older ones that never were.
	for t := range m.pending {
		if t <= s.T {
			delete(m.pending, t)
		}
	}
	m.last = s.T
	if m.emit != nil {
		m.emit(p.sum)
	}
}

// progress shows a run's progress on stderr: a progress bar on a terminal,
// otherwise one plain line per second.
type progress struct {
	mu     sync.Mutex
	w      io.Writer
	bar    *progressbar.ProgressBar
	prefix string
	conns  int
	first  int64 // the T of the first second shown
}

func newProgress(w io.Writer, terminal bool, prefix string, conns int, expected time.Duration) *progress {
	p := &progress{w: w, prefix: prefix, conns: conns}
	if terminal {
		p.bar = progressbar.NewOptions64(int64(max(expected.Seconds(), 1)),
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(prefix+"starting"),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionShowDescriptionAtLineEnd(),
			progressbar.OptionSetWidth(20),
		)
	}
	return p
}

// isTerminal says whether w is a terminal, where a progress bar can
// redraw itself.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (p *progress) second(s loadgen.Second) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// s covers [T, T+1) and the first second reported is the run's first
	// (children start a little after this progress was made).
	if p.first == 0 {
		p.first = s.T
	}
	elapsed := s.T + 1 - p.first
	line := fmt.Sprintf("%s%ds open %d/%d up %.1f Mbit/s down %.1f Mbit/s connects %d errors %d disruptions %d",
		p.prefix, elapsed, s.Open, p.conns, float64(s.BytesUp)*8/1e6, float64(s.BytesDown)*8/1e6,
		s.Connects, s.ConnectErrors, s.Disruptions)
	if s.Probes > 0 {
		line += fmt.Sprintf(" probe max %.1f ms failed %d", s.ProbeMaxMS, s.ProbeFailures)
	}
	if p.bar != nil {
		p.bar.Describe(line)
		_ = p.bar.Set64(min(elapsed, p.bar.GetMax64()))
		return
	}
	fmt.Fprintln(p.w, line)
}

func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Exit()
		fmt.Fprintln(p.w)
	}
}

// floatValue is a non-negative number flag.
type floatValue struct{ v float64 }

func (v *floatValue) String() string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(v.v, 'g', -1, 64)
}

func (v *floatValue) Set(s string) error {
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	switch {
	case err != nil || math.IsNaN(x) || math.IsInf(x, 0):
		return errors.New("not a number")
	case x < 0:
		return errors.New("must not be negative")
	}
	v.v = x
	return nil
}

// rateValue is --rate: "greedy" (0) or a rate as the lab's link takes it.
type rateValue struct {
	text string
	bits float64
}

func (v *rateValue) String() string {
	if v == nil || v.text == "" {
		return "greedy"
	}
	return v.text
}

func (v *rateValue) Set(s string) error {
	if strings.EqualFold(strings.TrimSpace(s), "greedy") {
		v.text, v.bits = s, 0
		return nil
	}
	r, err := harness.ParseRate(s)
	if err != nil {
		return errors.New(`want "greedy" or a rate such as 100mbit, 5MB/s or a number of bits/s`)
	}
	v.text, v.bits = s, float64(r)
	return nil
}

// directionValue is --direction.
type directionValue struct {
	text string
	d    loadgen.Direction
}

func (v *directionValue) String() string {
	if v == nil {
		return ""
	}
	return v.text
}

func (v *directionValue) Set(s string) error {
	d, err := loadgen.ParseDirection(s)
	if err != nil {
		return errors.New("want up, down or both")
	}
	v.text, v.d = s, d
	return nil
}

// intList is --sweep: a comma list of counts of at least 1.
type intList struct{ values []int }

func (l *intList) String() string {
	if l == nil {
		return ""
	}
	s := make([]string, len(l.values))
	for i, n := range l.values {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func (l *intList) Set(s string) error {
	var values []int
	for part := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return fmt.Errorf("%q is not a whole number", part)
		}
		if n < 1 {
			return fmt.Errorf("%d: each level needs at least 1 connection", n)
		}
		values = append(values, n)
	}
	l.values = values
	return nil
}

// sourceList is --source: addresses as ranges or a comma list.
type sourceList struct {
	text  string
	addrs []netip.Addr
}

func (l *sourceList) String() string {
	if l == nil {
		return ""
	}
	return l.text
}

func (l *sourceList) Set(s string) error {
	addrs, err := parseSources(s)
	if err != nil {
		return err
	}
	l.text, l.addrs = s, addrs
	return nil
}

// parseSources parses a comma list whose items are addresses or ranges
// "first-last" of one family, in order, each address at most once.
func parseSources(s string) ([]netip.Addr, error) {
	var out []netip.Addr
	seen := map[netip.Addr]bool{}
	add := func(a netip.Addr) error {
		if seen[a] {
			return fmt.Errorf("%s is listed twice", a)
		}
		if len(out) == maxSources {
			return fmt.Errorf("more than %d addresses", maxSources)
		}
		seen[a] = true
		out = append(out, a)
		return nil
	}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		lo, hi, isRange := strings.Cut(item, "-")
		first, err := netip.ParseAddr(strings.TrimSpace(lo))
		if err != nil || first.Zone() != "" {
			return nil, fmt.Errorf("%q is not an IP address", lo)
		}
		first = first.Unmap()
		if !isRange {
			if err := add(first); err != nil {
				return nil, err
			}
			continue
		}
		last, err := netip.ParseAddr(strings.TrimSpace(hi))
		if err != nil || last.Zone() != "" {
			return nil, fmt.Errorf("%q is not an IP address", hi)
		}
		last = last.Unmap()
		switch {
		case first.Is4() != last.Is4():
			return nil, fmt.Errorf("range %s mixes IPv4 and IPv6", item)
		case last.Less(first):
			return nil, fmt.Errorf("range %s runs backwards", item)
		}
		for a := first; ; a = a.Next() {
			if err := add(a); err != nil {
				return nil, err
			}
			if a == last {
				break
			}
		}
	}
	for _, a := range out[1:] {
		if a.Is4() != out[0].Is4() {
			return nil, errors.New("mixes IPv4 and IPv6 addresses")
		}
	}
	return out, nil
}

// probeValue is --probe: tls://host:port or tcp://host:port.
type probeValue struct {
	text, scheme, addr string
}

func (v *probeValue) String() string {
	if v == nil {
		return ""
	}
	return v.text
}

func (v *probeValue) Set(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "tls" && u.Scheme != "tcp") {
		return errors.New("want tls://host:port or tcp://host:port")
	}
	if u.Hostname() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return errors.New("want tls://host:port or tcp://host:port, with nothing after the port")
	}
	addr := u.Host
	if u.Port() == "" {
		if u.Scheme == "tcp" {
			return errors.New("a tcp probe needs a port")
		}
		addr = middleware.WithDefaultPort(u.Host, "443")
	}
	v.text, v.scheme, v.addr = s, u.Scheme, addr
	return nil
}

// checker returns the check v names, dialing through d.
func (v *probeValue) checker(d middleware.Dialer, roots *x509.CertPool, insecure bool) middleware.Checker {
	if v.scheme == "tcp" {
		return middleware.TCPCheck{Address: v.addr, Dialer: d}
	}
	return middleware.TLSCheck{Address: v.addr, RootCAs: roots, InsecureSkipVerify: insecure, Dialer: d}
}

// settings parses the --link-* flags; each error names its flag.
func (l *linkFlagValues) settings() (harness.Settings, error) {
	var s harness.Settings
	var err error
	if s.Rate, err = harness.ParseRate(l.rate); err != nil {
		return s, fmt.Errorf("invalid value for flag --link-rate: %w", err)
	}
	if s.Delay, err = harness.ParseDelay(l.delay); err != nil {
		return s, fmt.Errorf("invalid value for flag --link-delay: %w", err)
	}
	if s.Queue, err = harness.ParseQueue(l.queue); err != nil {
		return s, fmt.Errorf("invalid value for flag --link-queue: %w", err)
	}
	if s.Loss, err = harness.ParseLoss(l.loss); err != nil {
		return s, fmt.Errorf("invalid value for flag --link-loss: %w", err)
	}
	return s, nil
}
