package serveflags_test

import (
	"flag"
	"io"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/cmd/tunnelprobe/internal/serveflags"
	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
)

// The health listener serves gRPC too when --grpc-listen names it, and
// always in a lab role, whose health server a scenario's grpc prober calls
// on its one port.
func TestGRPCOnTheHealthListener(t *testing.T) {
	for _, tc := range []struct {
		name string
		lab  bool
		args []string
		want bool
	}{
		{"serve", false, nil, false},
		{"serve, a port of its own", false, []string{"--listen", "127.0.0.1:9999", "--grpc-listen", "127.0.0.1:9998"}, false},
		{"serve, the same port", false, []string{"--listen", "127.0.0.1:9999", "--grpc-listen", "127.0.0.1:9999"}, true},
		{"serve, two free ports", false, []string{"--listen", "127.0.0.1:0", "--grpc-listen", "127.0.0.1:0"}, false},
		{"a lab role", true, nil, true},
	} {
		var f serveflags.Flags
		fs := flag.NewFlagSet("tunnelprobe serve", flag.ContinueOnError)
		if tc.lab {
			fs = flag.NewFlagSet("tunnelprobe lab client", flag.ContinueOnError)
			f.RegisterMonitor(fs)
			f.RegisterLog(fs)
		} else {
			f.Register(fs)
		}
		if err := cliflag.Parse(fs, tc.args, func(string) string { return "" }, serveflags.Exclusive...); err != nil {
			t.Fatal(err)
		}
		cfg, err := f.ServerConfig(fs, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.GRPC != tc.want {
			t.Errorf("%s: gRPC on the health listener %v, want %v", tc.name, cfg.GRPC, tc.want)
		}
	}
}
