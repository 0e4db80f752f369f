package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/tunnelprobe/tunnelprobe/internal/childproc"
	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
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
// and they answer in JSON lines on stdout (childproc.Message, carrying
// sink.Stats for a sink, loadgen.ChildReport for a load).
const childMode = "__child"

// sinkFlags are the flags of the sink command.
type sinkFlags struct {
	listen string
	echo   bool
	procs  int
	stats  string
}

func (f *sinkFlags) register(fs *flag.FlagSet) {
	fs.Var(cliflag.Addr(&f.listen, "127.0.0.1:9000", false), "listen", "`address` to listen on; port 0 picks a free port")
	fs.BoolVar(&f.echo, "echo", false, "write back everything received instead of discarding it")
	fs.Var(cliflag.Int(&f.procs, 1, 1), "procs", "`count` of processes sharing the port (SO_REUSEPORT), each with its own open-file limit")
	fs.Var(cliflag.Addr(&f.stats, "", true), "stats", "`address` to serve the counters on as JSON (GET /); empty for none")
}

func sinkCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	const name = "tunnelprobe sink"
	if len(args) > 0 && args[0] == childMode {
		// A --procs child: its parent gives it its settings as data.
		return cliflag.ExitCode(stderr, name, sink.RunChild(ctx, os.Stdin, stdout))
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var f sinkFlags
	f.register(fs)
	if code, ok := cliflag.ParseCommand(fs, args, getenv, sinkUsage, stdout, stderr); !ok {
		return code
	}
	group := &sink.Group{Listen: f.listen, Echo: f.echo, Procs: f.procs}
	if f.procs > 1 {
		var err error
		if group.Command, err = childproc.Self(stderr, "sink", childMode); err != nil {
			return cliflag.ExitCode(stderr, name, err)
		}
	}
	var statsLn net.Listener
	if f.stats != "" {
		var err error
		if statsLn, err = net.Listen("tcp", f.stats); err != nil {
			return cliflag.ExitCode(stderr, name, fmt.Errorf("--stats: %w", err))
		}
	}
	listened := false
	err := group.RunServingStats(ctx, statsLn, func(addr net.Addr) {
		listened = true
		if f.procs > 1 {
			fmt.Fprintf(stdout, "%s: listening on %s (%d processes)\n", name, addr, f.procs)
		} else {
			fmt.Fprintf(stdout, "%s: listening on %s\n", name, addr)
		}
		if statsLn != nil {
			fmt.Fprintf(stdout, "%s: stats on http://%s/\n", name, statsLn.Addr())
		}
	})
	if listened { // a sink that never listened has nothing to count
		t := group.Totals()
		fmt.Fprintf(stdout, "%s: %d connections, %d bytes in, %d bytes out, %d open at exit, %d processes\n",
			name, t.Conns, t.BytesIn, t.BytesOut, t.Open, t.Processes)
	}
	return cliflag.ExitCode(stderr, name, err)
}
