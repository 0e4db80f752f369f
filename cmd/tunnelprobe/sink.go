package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/childproc"
	"github.com/tunnelprobe/tunnelprobe/internal/httpserve"
	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
)

const sinkUsage = `Usage: tunnelprobe sink [flags]

A TCP sink for the load generator: it reads and discards what it receives, or
echoes it back with --echo, and counts connections and bytes. It prints its
counters when stopped (Ctrl-C, SIGTERM) and serves them as JSON on --stats.
--procs N runs N processes on one port (SO_REUSEPORT), each with its own limit
of open files, and sums their counters.
`

// childMode is the first argument of a command run as a child of a
// --procs parent. Children take no flags and nothing from the environment:
// their parent writes their settings as data (a JSON line) on their stdin,
// and they answer in JSON lines on stdout (sinkChildMsg for a sink,
// loadgen.ChildMessage for a load).
const childMode = "__child"

const (
	// childStartTimeout bounds how long a parent waits for its children
	// to report that they are ready.
	childStartTimeout = 30 * time.Second
	// statsEvery is how often a sink child reports its counters.
	statsEvery = time.Second
)

// sinkChildMsg is one line a sink child writes to its parent.
type sinkChildMsg struct {
	// Addr is the address the child listens on: it is ready.
	Addr string `json:"addr,omitempty"`
	// Stats are the child's counters, sent every second and on exit.
	Stats *sink.Stats `json:"stats,omitempty"`
	// Error is why the child gives up.
	Error string `json:"error,omitempty"`
}

// startSinkChild starts a sink child of this program, its stderr going to
// stderr, stopped by the end of ctx (see package childproc).
func startSinkChild(ctx context.Context, stderr io.Writer) (*childproc.Child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot start a child process: %w", err)
	}
	cmd := exec.CommandContext(ctx, exe, "sink", childMode)
	cmd.Stderr = stderr
	return childproc.Start(cmd)
}

// lockedWriter serialises writes from several goroutines (children's stderr
// copiers, the progress line) to one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// sinkFlags are the flags of the sink command.
type sinkFlags struct {
	listen string
	echo   bool
	procs  int
	stats  string
}

func (f *sinkFlags) register(fs *flag.FlagSet) {
	fs.Var(newAddr(&f.listen, "127.0.0.1:9000", false), "listen", "`address` to listen on; port 0 picks a free port")
	fs.BoolVar(&f.echo, "echo", false, "write back everything received instead of discarding it")
	fs.Var(newInt(&f.procs, 1, 1), "procs", "`count` of processes sharing the port (SO_REUSEPORT), each with its own open-file limit")
	fs.Var(newAddr(&f.stats, "", true), "stats", "`address` to serve the counters on as JSON (GET /); empty for none")
}

// sinkTotals is what --stats serves and what is printed on exit.
type sinkTotals struct {
	sink.Stats
	Processes int `json:"processes"`
}

func addStats(a, b sink.Stats) sink.Stats {
	a.Conns += b.Conns
	a.Open += b.Open
	a.BytesIn += b.BytesIn
	a.BytesOut += b.BytesOut
	return a
}

// runSink is the sink command.
func runSink(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return sinkCommand(ctx, args, os.Getenv, stdout, stderr)
}

func sinkCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	const name = "tunnelprobe sink"
	if len(args) > 0 && args[0] == childMode {
		// A --procs child: its parent gives it its settings as data.
		return sinkChild(ctx, os.Stdin, stdout, stderr)
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var f sinkFlags
	f.register(fs)
	if code, ok := parseCommand(fs, args, getenv, sinkUsage, stdout, stderr); !ok {
		return code
	}

	ln, err := listenSink(ctx, f)
	if err != nil {
		fmt.Fprintf(stderr, "%s: cannot listen on %s: %v\n", name, f.listen, err)
		return 1
	}
	srv := &sink.Server{Echo: f.echo}
	fleet := &sinkFleet{}
	total := func() sinkTotals {
		return sinkTotals{Stats: addStats(srv.Stats(), fleet.stats()), Processes: 1 + fleet.size()}
	}
	code := serveSinks(ctx, f, ln, srv, fleet, total, stdout, stderr)
	t := total()
	fmt.Fprintf(stdout, "%s: %d connections, %d bytes in, %d bytes out, %d open at exit, %d processes\n",
		name, t.Conns, t.BytesIn, t.BytesOut, t.Open, t.Processes)
	return code
}

// listenSink listens on --listen. With several processes every listener
// needs SO_REUSEPORT, the parent's included: it serves too, and picks the
// port that its children then share. One process listens plainly, so that a
// port in use is an error rather than a silent share with another sink.
func listenSink(ctx context.Context, f sinkFlags) (net.Listener, error) {
	if f.procs > 1 {
		return sink.ListenReusePort(ctx, "tcp", f.listen)
	}
	var lc net.ListenConfig
	return lc.Listen(ctx, "tcp", f.listen)
}

// serveSinks serves srv on ln, with --procs-1 children beside it and the
// --stats server, until ctx ends or a part fails, and returns the exit
// code.
func serveSinks(ctx context.Context, f sinkFlags, ln net.Listener, srv *sink.Server, fleet *sinkFleet,
	total func() sinkTotals, stdout, stderr io.Writer,
) int {
	const name = "tunnelprobe sink"
	addr := ln.Addr().String()
	// runCtx ends everything: the caller's stop, or a child that dies.
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(runCtx, ln) }()

	code := 0
	if f.procs > 1 {
		if err := fleet.start(runCtx, cancel, f.procs-1, addr, f.echo, stderr); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			cancel(err)
			code = 1
		}
	}
	if code == 0 {
		if f.procs > 1 {
			fmt.Fprintf(stdout, "%s: listening on %s (%d processes)\n", name, addr, f.procs)
		} else {
			fmt.Fprintf(stdout, "%s: listening on %s\n", name, addr)
		}
	}
	var statsDone chan struct{}
	if code == 0 && f.stats != "" {
		var err error
		if statsDone, err = serveSinkStats(runCtx, f.stats, total, stdout); err != nil {
			fmt.Fprintf(stderr, "%s: --stats: %v\n", name, err)
			cancel(err)
			code = 1
		}
	}

	<-runCtx.Done()
	if err := <-served; err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, net.ErrClosed) {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		code = 1
	}
	if statsDone != nil {
		<-statsDone
	}
	if err := fleet.wait(); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		code = 1
	}
	if cause := context.Cause(runCtx); cause != nil && ctx.Err() == nil && code == 0 {
		fmt.Fprintf(stderr, "%s: %v\n", name, cause)
		code = 1
	}
	return code
}

// sinkFleet is a sink parent's children: it collects the counters they
// report.
type sinkFleet struct {
	mu       sync.Mutex
	children []*childproc.Child
	latest   []sink.Stats
	wg       sync.WaitGroup // the readers of the children's stdout
}

// start starts n children listening on addr and returns once all of them
// listen. A child that exits before ctx ends cancels the run with the
// reason.
func (fl *sinkFleet) start(ctx context.Context, cancel context.CancelCauseFunc, n int, addr string, echo bool, stderr io.Writer) error {
	ready := make(chan error, n) // one value per child: it listens, or why not
	for i := range n {
		c, err := startSinkChild(ctx, stderr)
		if err != nil {
			return err
		}
		// A child that cannot read it fails and says why.
		_ = c.Send(sinkChildConfig{Listen: addr, Echo: echo})
		fl.mu.Lock()
		fl.children = append(fl.children, c)
		fl.latest = append(fl.latest, sink.Stats{})
		fl.mu.Unlock()
		fl.wg.Go(func() { fl.read(ctx, cancel, i, c, ready) })
	}
	timeout := time.NewTimer(childStartTimeout)
	defer timeout.Stop()
	for range n {
		select {
		case err := <-ready:
			if err != nil {
				return err
			}
		case <-timeout.C:
			return fmt.Errorf("children not listening after %v", childStartTimeout)
		case <-ctx.Done():
			return nil // stopped while starting: not an error
		}
	}
	return nil
}

// read handles the messages of child i until it closes its stdout.
func (fl *sinkFleet) read(ctx context.Context, cancel context.CancelCauseFunc, i int, c *childproc.Child, ready chan<- error) {
	listening := false
	for {
		var m sinkChildMsg
		if err := c.Next(&m); err != nil {
			if !listening {
				ready <- fmt.Errorf("sink process %d exited before listening", i+2)
			} else if ctx.Err() == nil {
				cancel(fmt.Errorf("sink process %d exited", i+2))
			}
			if !errors.Is(err, io.EOF) {
				cancel(err)
			}
			return
		}
		switch {
		case m.Error != "":
			cancel(fmt.Errorf("sink process %d: %s", i+2, m.Error))
		case m.Addr != "" && !listening:
			listening = true
			ready <- nil
		case m.Stats != nil:
			fl.mu.Lock()
			fl.latest[i] = *m.Stats
			fl.mu.Unlock()
		}
	}
}

func (fl *sinkFleet) stats() sink.Stats {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	var s sink.Stats
	for _, l := range fl.latest {
		s = addStats(s, l)
	}
	return s
}

func (fl *sinkFleet) size() int {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return len(fl.children)
}

// wait waits for the readers, which return once the children, stopped by
// the end of the context given to start, have sent their last counters,
// then for the children themselves.
func (fl *sinkFleet) wait() error {
	fl.wg.Wait()
	fl.mu.Lock()
	defer fl.mu.Unlock()
	var errs []error
	for _, c := range fl.children {
		if err := c.Wait(); err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				errs = append(errs, fmt.Errorf("sink process exited: %v", ee))
			}
			// Otherwise the error is the context's: the child was
			// stopped, as it should be.
		}
	}
	return errors.Join(errs...)
}

// sinkChildConfig is what a sink parent tells each child, as a JSON line on
// its stdin.
type sinkChildConfig struct {
	Listen string `json:"listen"`
	Echo   bool   `json:"echo,omitempty"`
}

// sinkChild is a sink process started by a --procs parent: it reads its
// settings from stdin, listens on the parent's port and reports its
// counters every second and on exit.
func sinkChild(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
	enc := json.NewEncoder(stdout)
	var f sinkChildConfig
	if err := json.NewDecoder(stdin).Decode(&f); err != nil {
		_ = enc.Encode(sinkChildMsg{Error: "no settings from the parent: " + err.Error()})
		return 1
	}
	ln, err := sink.ListenReusePort(ctx, "tcp", f.Listen)
	if err != nil {
		_ = enc.Encode(sinkChildMsg{Error: err.Error()})
		return 1
	}
	srv := &sink.Server{Echo: f.Echo}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	if err := enc.Encode(sinkChildMsg{Addr: ln.Addr().String()}); err != nil {
		// The parent is gone; there is nobody to serve for.
		fmt.Fprintln(stderr, "tunnelprobe sink:", err)
	}
	tick := time.NewTicker(statsEvery)
	defer tick.Stop()
	code := 0
loop:
	for {
		select {
		case <-tick.C:
			st := srv.Stats()
			_ = enc.Encode(sinkChildMsg{Stats: &st})
		case err := <-served:
			served = nil
			if err != nil && ctx.Err() == nil {
				_ = enc.Encode(sinkChildMsg{Error: err.Error()})
				code = 1
			}
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	if served != nil {
		<-served
	}
	st := srv.Stats()
	_ = enc.Encode(sinkChildMsg{Stats: &st})
	return code
}

// serveSinkStats serves the totals on addr as JSON until ctx ends; the
// returned channel is closed once the server has stopped.
func serveSinkStats(ctx context.Context, addr string, total func() sinkTotals, stdout io.Writer) (chan struct{}, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(total())
	})
	fmt.Fprintf(stdout, "tunnelprobe sink: stats on http://%s/\n", ln.Addr())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = httpserve.Serve(ctx, ln, mux, httpserve.Options{})
	}()
	return done, nil
}
