package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tunnelprobe/tunnelprobe/cmd/tunnelprobe/internal/serveflags"
	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/middleware/server"
)

var serveUsage = fmt.Sprintf(`Usage: tunnelprobe serve [flags]

Serve the health endpoints of a tunnel, as a sidecar of a VPN container:
  GET /         the state the checks last reached: 200 healthy, 503 otherwise;
                ?wait=10s waits up to that long for a healthy state.
  GET /check/   runs the check now (concurrent calls share one run): 200 or 503;
                ?timeout=5s bounds it on the server side.
  gRPC          with --grpc-listen, grpc.health.v1.Health: Check runs the check
                as /check/ does (the call's deadline bounds it), Watch follows the state.
Several --target flags pass when any one of them does. Each listener serves %d
connections at once (past them 503 or UNAVAILABLE at once), each connection %d
gRPC calls, and %d Watch calls are served in all (past them RESOURCE_EXHAUSTED);
as PID 1, serve reaps the orphans its heals leave (docs/serve.md, Limits and PID 1).
`, server.DefaultMaxConnections, server.DefaultMaxStreams, server.DefaultMaxWatches)

// serveCommand implements "tunnelprobe serve", with the environment read
// through getenv.
func serveCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	const name = "tunnelprobe serve"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var f serveflags.Flags
	f.Register(fs)
	if code, ok := cliflag.ParseCommand(fs, args, getenv, serveUsage, stdout, stderr, serveflags.Exclusive...); !ok {
		return code
	}
	srv, cfg, err := f.NewServer(fs, stderr)
	if err != nil {
		return cliflag.UsageError(stderr, name, err)
	}
	ln, grpcLn, err := f.Listeners(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: listening on %s\n", name, ln.Addr())
	attrs := []any{"addr", ln.Addr().String(), "mode", cfg.Monitor.Mode.String(), "check", f.Check, "grpc", cfg.GRPC}
	if grpcLn != nil {
		fmt.Fprintf(stdout, "%s: gRPC health on %s\n", name, grpcLn.Addr())
		attrs = append(attrs, "grpc_addr", grpcLn.Addr().String())
	}
	if ev := cfg.Monitor.Evidence; ev != nil {
		var probes []string
		for _, p := range ev.Probes {
			probes = append(probes, p.Kind+" "+p.Target)
		}
		if len(probes) > 0 {
			attrs = append(attrs, "light_probe", strings.Join(probes, ", "))
		}
		attrs = append(attrs, "delivery", ev.Delivery != nil)
	}
	f.LogRoots(cfg.Logger)
	cfg.Logger.Info("serving health endpoints", attrs...)
	return cliflag.ExitCode(stderr, name, srv.ServeWithGRPC(ctx, ln, grpcLn))
}
