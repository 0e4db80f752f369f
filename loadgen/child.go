package loadgen

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"time"

	"golang.org/x/net/proxy"

	"github.com/tunnelprobe/tunnelprobe/internal/childproc"
	"github.com/tunnelprobe/tunnelprobe/loadgen/rate"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/target"
)

// ChildConfig is one process's share of a run split over several processes
// (each with its own limit of open files), as data: a parent sends it to a
// child, as JSON, and the child builds the Config it runs with Build.
// Dialers and checks do not travel; what the child needs to make its own
// does: a SOCKS5 address, a check target and the CA that verifies it.
type ChildConfig struct {
	Target      string        `json:"target"`
	Conns       int           `json:"conns"`
	ConnectRate float64       `json:"connect_rate,omitempty"`
	Ramp        time.Duration `json:"ramp,omitempty"`
	Duration    time.Duration `json:"duration,omitempty"`
	DialTimeout time.Duration `json:"dial_timeout,omitempty"`
	Rate        rate.Rate     `json:"rate,omitempty"`
	Direction   Direction     `json:"direction"`
	NoReconnect bool          `json:"no_reconnect,omitempty"`
	Sources     []netip.Addr  `json:"sources,omitempty"`
	PathName    string        `json:"path,omitempty"`

	// SOCKS5 is the proxy the child dials through (the lab's ingress);
	// empty means the host network, from Sources.
	SOCKS5 string `json:"socks5,omitempty"`
	// Probe is a check target in target.Parse's syntax, run over
	// the child's path; empty means none.
	Probe string `json:"probe,omitempty"`
	// ProbeCAPEM verifies a tls probe; empty means the system's roots.
	ProbeCAPEM    []byte        `json:"probe_ca_pem,omitempty"`
	ProbeInsecure bool          `json:"probe_insecure,omitempty"`
	ProbeEvery    time.Duration `json:"probe_every,omitempty"`
	ProbeTimeout  time.Duration `json:"probe_timeout,omitempty"`
}

// Split divides c over n processes (at most one a connection): the
// connections as evenly as they go, the rates in proportion, and the probe
// to the first process only, so that the path sees one probe at a time as
// with one process.
func (c ChildConfig) Split(n int) []ChildConfig {
	n = max(min(n, c.Conns), 1)
	out := make([]ChildConfig, n)
	for i := range n {
		share := c.Conns / n
		if i < c.Conns%n {
			share++
		}
		frac := float64(share) / float64(max(c.Conns, 1))
		ci := c
		ci.Conns = share
		ci.ConnectRate = c.ConnectRate * frac
		if c.Rate > 0 {
			ci.Rate = max(1, rate.Rate(math.Round(float64(c.Rate)*frac)))
		}
		if i > 0 {
			ci.Probe, ci.ProbeCAPEM = "", nil
		}
		out[i] = ci
	}
	return out
}

// Expected returns how long a run of c should take: the ramp (Ramp, or
// Conns at ConnectRate), then the hold.
func (c ChildConfig) Expected() time.Duration {
	ramp := c.Ramp
	if c.ConnectRate > 0 {
		ramp = time.Duration(float64(c.Conns) / c.ConnectRate * float64(time.Second))
	}
	return ramp + c.Duration
}

// Build returns the Config that c describes, with its dialer and probe, or
// an error naming what is wrong.
func (c ChildConfig) Build() (Config, error) { return c.BuildOver(nil) }

// BuildOver is Build for a process that has a dialer of its own for the
// path (the in-process lab's netstack, whose SOCKS5 ingress its children
// use): with d non-nil, the connections and the probe dial through d and
// c.SOCKS5 is ignored.
func (c ChildConfig) BuildOver(d check.Dialer) (Config, error) {
	cfg := Config{
		Target: c.Target, Sources: c.Sources, PathName: c.PathName,
		Conns: c.Conns, ConnectRate: c.ConnectRate, Ramp: c.Ramp, Duration: c.Duration, DialTimeout: c.DialTimeout,
		Rate: c.Rate, Direction: c.Direction, NoReconnect: c.NoReconnect,
		ProbeEvery: c.ProbeEvery, ProbeTimeout: c.ProbeTimeout,
	}
	cfg.Dialer = d
	if d == nil && c.SOCKS5 != "" {
		d, err := SOCKS5Dialer(c.SOCKS5)
		if err != nil {
			return Config{}, err
		}
		cfg.Dialer = d
	}
	if c.Probe != "" {
		opts := target.Options{Dialer: cfg.Dialer, InsecureSkipVerify: c.ProbeInsecure}
		if len(c.ProbeCAPEM) > 0 {
			opts.RootCAs = x509.NewCertPool()
			if !opts.RootCAs.AppendCertsFromPEM(c.ProbeCAPEM) {
				return Config{}, errors.New("loadgen: the probe's CA holds no PEM certificate")
			}
		}
		probe, err := target.Parse(c.Probe, "", opts)
		if err != nil {
			return Config{}, fmt.Errorf("loadgen: probe %q: %w", c.Probe, err)
		}
		cfg.Probe = probe
	}
	return cfg, cfg.Validate()
}

// SOCKS5Dialer returns a Dialer that connects through the SOCKS5 proxy at
// addr (the lab's ingress, say), each dial bounded by its context.
func SOCKS5Dialer(addr string) (check.Dialer, error) {
	d, err := proxy.SOCKS5("tcp", addr, nil, &net.Dialer{})
	if err != nil {
		return nil, fmt.Errorf("loadgen: SOCKS5 %s: %w", addr, err)
	}
	cd, ok := d.(proxy.ContextDialer)
	if !ok {
		return nil, errors.New("loadgen: the SOCKS5 dialer cannot be cancelled")
	}
	return cd, nil
}

// RunChild is the child side of a Fleet: it reads its share of the run (a
// ChildConfig) from its first line on stdin, says it is ready, waits for the
// start time its parent writes next, runs, and reports each second and its
// result as ChildReports on stdout. It returns an error when it could not
// run, and tells the parent why; a run stopped by ctx still reports what it
// measured. stdin is read in a goroutine, so that ctx can end the waits;
// when RunChild returns before stdin ends, that goroutine ends with stdin
// (in a child process: when the parent closes the pipe, or the process
// exits).
func RunChild(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	return childproc.RunChild(ctx, stdin, stdout, runChild)
}

// runChild runs cc once the parent says when, reporting to p.
func runChild(ctx context.Context, cc ChildConfig, p *childproc.Parent[ChildReport]) error {
	cfg, err := cc.Build()
	if err != nil {
		return err
	}
	p.Ready()
	var startNS int64
	if err := p.Receive(ctx, &startNS); err != nil {
		if ctx.Err() != nil {
			p.Send(ChildReport{Result: emptyResult(cfg)})
			return nil
		}
		return errors.New("no start time from the parent")
	}
	t := time.NewTimer(time.Until(time.Unix(0, startNS)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		p.Send(ChildReport{Result: emptyResult(cfg)})
		return nil
	}
	cfg.OnSecond = func(s Second) { p.Send(ChildReport{Second: &s}) }
	cfg.OnWindowStart = func() { p.Send(ChildReport{Window: WindowStarted}) }
	cfg.OnWindowEnd = func() { p.Send(ChildReport{Window: WindowEnded}) }
	res, err := Run(ctx, cfg)
	if err != nil {
		return err
	}
	p.Send(ChildReport{Result: &res})
	return nil
}

// emptyResult is the result of a child stopped before it started.
func emptyResult(cfg Config) *Result {
	return &Result{
		Target: cfg.Target, Path: cfg.PathName, Start: time.Now(), Processes: 1, Interrupted: true,
		ConnsRequested: cfg.Conns, Errors: map[string]int64{},
		Histograms: Histograms{Connect: NewLatencyHistogram().Export(), Probe: NewLatencyHistogram().Export()},
	}
}
