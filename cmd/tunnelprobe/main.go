// Command tunnelprobe checks the health of VPN and tunnel containers.
//
//	tunnelprobe <command> [flags]
//
// Run "tunnelprobe help" for the commands and "tunnelprobe <command> --help"
// for the flags of one. Every flag can also be set through the environment
// variable TUNNELPROBE_<FLAG>; a flag on the command line wins.
//
// Exit codes: 0 success, 1 the run failed, 2 bad usage.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// A command is one subcommand of the binary. run gets the arguments after
// the command's name and returns the exit code; ctx ends on SIGINT or
// SIGTERM.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int
}

var commands = []command{
	{"scenario", "compare health configurations on a loaded tunnel and through an outage (the main job)", scenarioCommand},
	{"serve", "serve the health endpoints of a tunnel (the middleware as a sidecar)", serveCommand},
	{"lab", "run the tunnel lab: WireGuard in user space over a shaped link", labCommand},
	{"load", "load a tunnel with thousands of TCP connections and measure health-check latency under load", loadCommand},
	{"sink", "a TCP sink that counts connections and bytes: the load generator's target", sinkCommand},
	{"probe", "probe a URL as the kubelet (or Docker's HEALTHCHECK) would, and say whether it would restart", probeCommand},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches args to a command and returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "tunnelprobe: no command given")
		usage(stderr)
		return 2
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		if name == "help" && len(rest) > 0 {
			// "tunnelprobe help serve" is "tunnelprobe serve --help".
			if c, ok := lookup(rest[0]); ok {
				return c.run(ctx, []string{"--help"}, getenv, stdout, stderr)
			}
			fmt.Fprintf(stderr, "tunnelprobe: unknown command %q\n", rest[0])
			usage(stderr)
			return 2
		}
		usage(stdout)
		return 0
	}
	c, ok := lookup(name)
	if !ok {
		fmt.Fprintf(stderr, "tunnelprobe: unknown command %q\n", name)
		usage(stderr)
		return 2
	}
	return c.run(ctx, rest, getenv, stdout, stderr)
}

func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func usage(w io.Writer) {
	fmt.Fprint(w, "Usage: tunnelprobe <command> [flags]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'tunnelprobe <command> --help' for the flags of a command.\n"+
		"Every flag is also read from TUNNELPROBE_<FLAG> (dashes as underscores); the command line wins.\n"+
		"Exit codes: 0 success, 1 the run failed, 2 bad usage.\n")
}
