package serveflags

import (
	"context"
	"flag"
	"fmt"
	"net"

	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
)

// registerGRPC registers serve's --grpc-listen.
func (f *Flags) registerGRPC(fs *flag.FlagSet) {
	fs.Var(cliflag.Addr(&f.GRPCListen, "", true), "grpc-listen", "`address` to serve gRPC health (grpc.health.v1.Health, for a grpc probe) on, without TLS;\n"+
		"--listen's address serves both on one port; empty serves none")
}

// grpcOnHealthListener reports whether the health listener also serves
// gRPC: when --grpc-listen names --listen's address (a port 0 in both asks
// for two ports), and always for the lab's roles, which register neither
// flag: the scenarios' grpc prober calls their health server on its one
// port.
func (f *Flags) grpcOnHealthListener() bool {
	if f.Listen == "" {
		return true // a lab role's
	}
	_, port, _ := net.SplitHostPort(f.Listen)
	return f.GRPCListen == f.Listen && port != "0"
}

// Listeners opens serve's listeners: --listen's, and --grpc-listen's
// unless that is empty or --listen's address (nil then). An error names
// the flag; the listener opened first is closed then.
func (f *Flags) Listeners(ctx context.Context) (ln, grpcLn net.Listener, err error) {
	var lc net.ListenConfig
	if ln, err = lc.Listen(ctx, "tcp", f.Listen); err != nil {
		return nil, nil, fmt.Errorf("cannot listen on %s (--listen): %w", f.Listen, err)
	}
	if f.GRPCListen == "" || f.grpcOnHealthListener() {
		return ln, nil, nil
	}
	if grpcLn, err = lc.Listen(ctx, "tcp", f.GRPCListen); err != nil {
		ln.Close()
		return nil, nil, fmt.Errorf("cannot listen on %s (--grpc-listen): %w", f.GRPCListen, err)
	}
	return ln, grpcLn, nil
}
