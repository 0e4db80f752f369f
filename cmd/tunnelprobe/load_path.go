package main

import (
	"context"
	"fmt"
	"net"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// openPath completes f.spec with the way to the target the flags ask for
// and returns what this process dials through: nil for the host network
// (with --source) or --socks5, which spec names itself, or the in-process
// lab of --lab. The lab's netstack dials for this process, its sink is the
// target unless --target says, its TLS target is the probe unless --probe
// says, verified with its CA unless --tls-ca; --procs children reach it
// through its SOCKS5 ingress. Call closePath when done.
func (f *loadFlags) openPath(ctx context.Context) (dialer check.Dialer, closePath func(), err error) {
	s := &f.spec
	switch {
	case s.SOCKS5 != "":
		s.PathName = "socks5 " + s.SOCKS5
	case f.lab:
		cfg := harness.Config{Link: f.link.set, Seed: f.link.seed}
		if f.procs > 1 {
			cfg.SOCKS5 = "127.0.0.1:0" // for the children
		}
		lab := harness.New(cfg)
		if err := lab.Start(ctx); err != nil {
			return nil, nil, fmt.Errorf("lab: %w", err)
		}
		s.PathName = fmt.Sprintf("lab (%s)", f.link.set)
		if s.Target == "" {
			// The lab's sink speaks loadgen/sink's protocol: each
			// connection's header asks for up, down or both. It counts
			// what crossed the link, which the sockets' writes overstate.
			s.Target = lab.SinkAddr().String()
			f.delivered = func() int64 { return lab.Server().SinkStats().BytesIn }
		}
		if s.Probe == "" {
			s.Probe = "tls://" + net.JoinHostPort(harness.TLSHost, "443")
		}
		if s.ProbeCAPEM == nil {
			s.ProbeCAPEM = lab.CA().PEM
		}
		if f.procs > 1 {
			s.SOCKS5 = lab.SOCKS5Addr().String()
		}
		return lab, func() { lab.Close() }, nil
	}
	return nil, func() {}, nil
}
