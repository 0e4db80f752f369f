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
)

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

// runSink is the sink command.
func runSink(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return sinkCommand(ctx, args, os.Getenv, stdout, stderr)
}

func sinkCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	const name = "tunnelprobe sink"
	if len(args) > 0 && args[0] == childMode {
		// A --procs child: its parent gives it its settings as data.
		return exitCode(stderr, name, sink.RunChild(ctx, os.Stdin, stdout))
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
	fleet := &sink.Fleet{StartTimeout: childStartTimeout}
	if f.procs > 1 {
		if fleet.Command, err = childCommand("sink", stderr); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return 1
		}
	}
	total := func() sinkTotals {
		return sinkTotals{Stats: srv.Stats().Add(fleet.Stats()), Processes: 1 + fleet.Size()}
	}
	code := serveSinks(ctx, f, ln, srv, fleet, total, stdout, stderr)
	t := total()
	fmt.Fprintf(stdout, "%s: %d connections, %d bytes in, %d bytes out, %d open at exit, %d processes\n",
		name, t.Conns, t.BytesIn, t.BytesOut, t.Open, t.Processes)
	return code
}

// childCommand returns the commands of the children of command (load or
// sink) for --procs: this program in childMode, its stderr going to stderr.
func childCommand(command string, stderr io.Writer) (func(context.Context) *exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot start a child process: %w", err)
	}
	return func(ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, exe, command, childMode)
		cmd.Stderr = stderr
		return cmd
	}, nil
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
func serveSinks(ctx context.Context, f sinkFlags, ln net.Listener, srv *sink.Server, fleet *sink.Fleet,
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
		if err := fleet.Start(runCtx, cancel, f.procs-1, addr, f.echo); err != nil {
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
	if err := fleet.Wait(); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		code = 1
	}
	if cause := context.Cause(runCtx); cause != nil && ctx.Err() == nil && code == 0 {
		fmt.Fprintf(stderr, "%s: %v\n", name, cause)
		code = 1
	}
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
