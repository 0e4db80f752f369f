package main

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// loadPath is the way to the target: what dials, what probes, and how
// children reach the same path.
type loadPath struct {
	name   string
	target string
	dialer middleware.Dialer // nil: the host network, with --source
	probe  middleware.Checker
	// Children reach the lab through its SOCKS5 ingress, and verify the
	// probe's server with the CA PEM they are given.
	childSOCKS5, childProbe string
	childCAPEM              []byte
	close                   func()
}

// openLab starts the in-process lab of --lab on link and makes it p's path:
// its netstack dials, its sink is the target unless --target says, and
// --procs children reach it through its SOCKS5 ingress, given its CA.
func (p *loadPath) openLab(ctx context.Context, f *loadFlags, link harness.Settings) (*harness.Lab, error) {
	cfg := harness.Config{Link: link, Seed: f.link.seed}
	if f.procs > 1 {
		cfg.SOCKS5 = "127.0.0.1:0" // for the children
	}
	lab := harness.New(cfg)
	if err := lab.Start(ctx); err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	p.close = func() { lab.Close() }
	p.name = fmt.Sprintf("lab (rate %s, delay %s, queue %s, loss %g)", link.Rate, link.Delay, link.Queue, link.Loss)
	p.dialer = lab
	if p.target == "" {
		// The lab's sink speaks loadgen/sink's protocol: each
		// connection's header asks for up, down or both.
		p.target = lab.SinkAddr().String()
	}
	if f.procs > 1 {
		p.childSOCKS5, p.childCAPEM = lab.SOCKS5Addr().String(), lab.CA().PEM
	}
	return lab, nil
}

// openPath builds the path the flags ask for, starting the lab for --lab.
func openPath(ctx context.Context, f *loadFlags, link harness.Settings) (*loadPath, error) {
	p := &loadPath{name: "direct", target: f.target, close: func() {}}
	roots := f.tlsCA.pool
	probeURL := f.probe.text
	switch {
	case f.socks5 != "":
		d, err := loadgen.SOCKS5Dialer(f.socks5)
		if err != nil {
			return nil, fmt.Errorf("--socks5: %w", err)
		}
		p.name, p.dialer, p.childSOCKS5 = "socks5 "+f.socks5, d, f.socks5
	case f.lab:
		lab, err := p.openLab(ctx, f, link)
		if err != nil {
			return nil, err
		}
		if roots == nil {
			roots = lab.CA().Pool
		}
		if probeURL == "" {
			probeURL = "tls://" + net.JoinHostPort(harness.TLSHost, "443")
		}
	}
	p.childProbe = probeURL
	if f.tlsCA.file != "" {
		pem, err := os.ReadFile(f.tlsCA.file)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		p.childCAPEM = pem
	}
	if probeURL != "" {
		pv := probeValue{}
		if err := pv.Set(probeURL); err != nil {
			p.close()
			return nil, err
		}
		p.probe = pv.checker(p.dialer, roots, f.tlsInsecure)
	}
	return p, nil
}
