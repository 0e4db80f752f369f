// Command tunnelprobe checks the health of VPN and tunnel containers.
//
//	tunnelprobe <command> [flags]
//
// Run "tunnelprobe help" for the commands and "tunnelprobe <command> --help"
// for the flags of one. Every flag can also be set through an environment
// variable, TUNNELPROBE_<FLAG> for serve and TUNNELPROBE_<COMMAND>_<FLAG>
// for the others (TUNNELPROBE_LOAD_RATE); a flag on the command line wins.
//
// Exit codes: 0 success, 1 the run failed, 2 bad usage or a refused input
// file, 130 a scenario or load stopped by Ctrl-C or SIGTERM (after writing
// what it measured).
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	// The Mozilla roots, for the tls and https checks of a system with
	// none: the image is FROM scratch. The system's, where there are any,
	// are still preferred (x509.SetFallbackRoots), and --tls-ca replaces
	// both.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
)

var commands = []cliflag.Command{
	{Name: "scenario", Summary: "compare health configurations on a loaded tunnel and through an outage (the main job)", Run: scenarioCommand},
	{Name: "serve", Summary: "serve the health endpoints of a tunnel (the middleware as a sidecar)", Run: serveCommand},
	{Name: "lab", Summary: "run the tunnel lab: WireGuard in user space over a shaped link\n" +
		"             (lab server, lab link, lab client: its parts as separate processes or containers)", Run: labCommand},
	{Name: "load", Summary: "load a tunnel with thousands of TCP connections and measure health-check latency under load\n" +
		"             (load merge: add up the --json results of several load runs)", Run: loadCommand},
	{Name: "sink", Summary: "a TCP sink that counts connections and bytes: the load generator's target", Run: sinkCommand},
	{Name: "probe", Summary: "probe a URL as the kubelet (or Docker's HEALTHCHECK) would, and say whether it would restart", Run: probeCommand},
}

// The signals end the command's context: it stops and writes what it has.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches args to a command and returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return cliflag.Dispatch(ctx, "tunnelprobe", commands, args, getenv, stdout, stderr)
}
