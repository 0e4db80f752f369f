package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// openPath completes f.spec with the way to the target the flags ask for
// and returns what this process dials through: nil for the host network
// (with --source) or --socks5, which spec names itself, or the in-process
// lab of --lab. The lab's netstack dials for this process, its sink is the
// target unless --target says, its TLS target is the probe unless --probe
// says, verified with its CA unless --tls-ca; --procs children reach it
// through its SOCKS5 ingress. The run goes on in pathCtx, which ends when
// an OpenVPN lab's openvpn exits. Call closePath when done (once or more):
// it returns why pathCtx ended, if a process did.
func (f *loadFlags) openPath(ctx context.Context) (pathCtx context.Context, dialer check.Dialer, closePath func() error, err error) {
	s := &f.spec
	switch {
	case s.SOCKS5 != "":
		s.PathName = "socks5 " + s.SOCKS5
	case f.lab:
		lab, err := f.tunnel.start(ctx, f.link)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("lab: %w", err)
		}
		pathCtx, stopWatch := watchExits(ctx, lab, true, nil)
		s.PathName = fmt.Sprintf("lab (%s, %s)", f.tunnel, f.link.set)
		if s.Target == "" {
			// The lab's sink speaks loadgen/sink's protocol: each
			// connection's header asks for up, down or both. It counts
			// what crossed the link, which the sockets' writes overstate.
			s.Target = lab.SinkAddr().String()
			f.delivered = func() int64 { return lab.SinkStats().BytesIn }
		}
		if s.Probe == "" {
			// By address: only the WireGuard lab's netstack knows its
			// names; the certificate holds both.
			s.Probe = "tls://" + lab.TLSAddr().String()
		}
		if s.ProbeCAPEM == nil {
			s.ProbeCAPEM = lab.CA().PEM
		}
		if f.procs > 1 { // the children reach the lab through a SOCKS5 ingress
			socks, err := harness.ListenSOCKS5(pathCtx, "127.0.0.1:0", lab.DialContext)
			if err != nil {
				stopWatch()
				lab.Close()
				return nil, nil, nil, fmt.Errorf("lab: %w", err)
			}
			s.SOCKS5 = socks.Addr().String()
			return pathCtx, lab, sync.OnceValue(func() error { socks.Close(); return closeLab(lab, stopWatch) }), nil
		}
		return pathCtx, lab, sync.OnceValue(func() error { return closeLab(lab, stopWatch) }), nil
	}
	return ctx, nil, func() error { return nil }, nil
}

// closeLab stops following the lab's processes, then closes it: its own
// stop is no exit. It returns why the run ended early, if it did.
func closeLab(lab labTunnel, stopWatch func() error) error {
	err := stopWatch()
	lab.Close()
	return err
}
