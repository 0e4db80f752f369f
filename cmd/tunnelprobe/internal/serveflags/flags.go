package serveflags

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/check/cafile"
	"github.com/tunnelprobe/tunnelprobe/middleware/preset"
	"github.com/tunnelprobe/tunnelprobe/middleware/server"
	"github.com/tunnelprobe/tunnelprobe/middleware/sockdiag"
	"github.com/tunnelprobe/tunnelprobe/middleware/target"
	"github.com/tunnelprobe/tunnelprobe/middleware/wgstats"
)

// Flags are the flags of the health server: all of them for the serve
// command (Register); the lab's roles run the same server and register its
// monitor and log flags (RegisterMonitor, RegisterLog).
type Flags struct {
	// Listen is serve's --listen, GRPCListen its --grpc-listen.
	Listen, GRPCListen string

	// The check: see registerCheck. Check is --check, the kind of a target
	// without a scheme.
	targets     cliflag.StringList
	Check       string
	tlsCA       cafile.File
	tlsInsecure bool
	dnsServer   string
	echoTargets cliflag.StringList
	healHTTP    cliflag.StringList
	healHeaders cliflag.StringList

	// The server and its monitor (Server, as far as flags set it): see
	// RegisterMonitor. Timeouts comes from
	// --timeout or --timeouts; a preset replaces the loop (see
	// ApplyPreset).
	preset   string
	Server   server.Config
	timeout  time.Duration
	timeouts middleware.Ladder

	// Evidence: serve's --light-probe (LightProbe) and its counters from
	// --evidence-iface or --evidence-wireguard, or the lab's client peer's
	// probe and counters; the rest shapes it (see registerEvidence).
	LightProbe                string
	evidenceIface, evidenceWG string
	evidence                  middleware.Evidence
	// bindIface is --bind-iface: the tunnel's interface, for every check,
	// when no evidence flag names it. fullCheckPeriod is
	// --full-check-period, 0 for never.
	bindIface       string
	fullCheckPeriod time.Duration
	// delivery is --delivery: the tunnel's users' TCP connections as
	// proof, where the tunnel's interface is named.
	delivery bool

	// Logs: see RegisterLog.
	logFormat string
	logLevel  slog.Level
}

// presetExcludes are the flags a --preset fixes.
var presetExcludes = []string{"mode", "period", "timeout", "timeouts", "failure-threshold", "light-probe", "evidence-iface", "evidence-wireguard", "evidence"}

// Exclusive lists the flags that set the same thing, for cliflag.Parse.
var Exclusive = [][]string{{"timeout", "timeouts"}, {"evidence-iface", "evidence-wireguard"}, {"heal-cmd", "heal-http"}}

// Register registers every flag of the serve command on fs. Parse them with
// cliflag.Parse(fs, args, getenv, Exclusive...).
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.Var(cliflag.Addr(&f.Listen, ":9999", false), "listen", "`address` to serve the health endpoints on; port 0 picks a free port")
	f.registerGRPC(fs)
	f.registerCheck(fs)
	f.RegisterMonitor(fs)
	f.RegisterLog(fs)
	fs.StringVar(&f.LightProbe, "light-probe", "", "prove the tunnel alive with a light probe of this `target` reached through it, every --evidence-interval;\n"+
		"several, comma-separated (1.1.1.1,9.9.9.9), each its own: an answer from any is proof, one silent while another\n"+
		"answers fails nothing:\n"+
		"an answer in the --evidence-window passes a check at once, a window without one fails it (docs/serve.md);\n"+
		"HOST tries icmp, then udp-dns to HOST:53, then tcp to HOST:443, and takes the first that can work here;\n"+
		"icmp://HOST, udp-dns://HOST[:PORT] or tcp://HOST[:PORT] takes that kind only, e.g. 1.1.1.1 or 10.64.0.1")
	fs.Var(cliflag.String(&f.evidenceIface, cliflag.InterfaceName), "evidence-iface", "the tunnel's network `interface` (wg0, tun0): the light probe leaves by it or not at all, and its\n"+
		"counters are read: a window of sending into silence fails a check at once; what arrives never passes one")
	fs.Var(cliflag.String(&f.evidenceWG, cliflag.InterfaceName), "evidence-wireguard", "the same from the WireGuard `device`'s peers, read through wgctrl (kernel or userspace);\n"+
		"--metrics then also exports each peer's handshake age")
	fs.Var(cliflag.String(&f.bindIface, cliflag.InterfaceName), "bind-iface", "the tunnel's network `interface` (wg0, tun0) every check and the light probe go through, bound to it and\n"+
		"only to destinations the kernel routes through it, without reading its counters; --evidence-iface and\n"+
		"--evidence-wireguard bind to theirs already")
	fs.BoolVar(&f.Server.Metrics, "metrics", false, "also serve Prometheus metrics at "+server.MetricsPath+" on the same listener (names in docs/deployment.md)")
}

// registerCheck registers the flags that say what to check.
func (f *Flags) registerCheck(fs *flag.FlagSet) {
	fs.Var(&f.targets, "target", "`target` to check, repeatable: tcp://host:port, tls://host[:port], http(s)://..., dns://[server/]name,\n"+
		"icmp://host, udp-dns://server[:port][/name], or without a scheme as --check says: host[:port] for tcp and tls\n"+
		"(port 443 when missing), a URL for http, a host name for dns and icmp, server[/name] for udp-dns;\n"+
		"several pass when any one does (default 1.1.1.1:443, https://1.1.1.1/ for http,\n"+
		"cloudflare.com for dns, 1.1.1.1 for icmp and udp-dns: an address, as a name may not resolve through a working tunnel)")
	fs.Var(cliflag.Choice(&f.Check, "tls", "tcp", "tls", "http", "dns", "icmp", "udp-dns"), "check",
		"`kind` of check of a --target without a scheme: tcp (a dial), tls (a dial and a verified handshake),\n"+
			"http (a GET answered 2xx or 3xx), dns (a lookup), icmp (an echo, on the host's unprivileged ICMP socket),\n"+
			"udp-dns (one DNS query over UDP, answered NOERROR or NXDOMAIN; without a /name, a fresh name each time)")
	fs.TextVar(&f.tlsCA, "tls-ca", cafile.File{}, "PEM `file` of the CA certificates that verify tls and http targets, instead of the system's\n"+
		"(or, where the system has none, the Mozilla roots the binary embeds); logged at start;\n"+
		"read again whenever it changes")
	fs.BoolVar(&f.tlsInsecure, "tls-insecure", false, "accept any certificate from tls and http targets (for labs only)")
	fs.StringVar(&f.dnsServer, "dns-server", "", "DNS server `host[:port]` the dns check queries (default: those of /etc/resolv.conf)")
	f.echoTargets.Values = preset.UpstreamEchoTargets
	fs.Var(&f.echoTargets, "echo-target", "with --preset upstream: `host` its small check echoes, repeatable, in turn (the upstream's\n"+
		"HEALTH_ICMP_TARGET_IPS; default 1.1.1.1 and 8.8.8.8)")
}

// RegisterMonitor registers the flags that say how the checks are driven.
func (f *Flags) RegisterMonitor(fs *flag.FlagSet) {
	m := &f.Server.Monitor
	fs.Var(cliflag.Choice(&f.preset, "", "upstream"), "preset", "`name` of a whole configuration instead of the loop's flags: upstream is the upstream VPN client's\n"+
		"current check (an ICMP echo each minute, the targets' checks every 5 minutes, fixed try timeouts,\n"+
		"a heal when every try of a check failed; docs/serve.md); it excludes --mode, --period, --timeout(s),\n"+
		"--failure-threshold, --light-probe and --evidence-iface/--evidence-wireguard")
	fs.TextVar(&m.Mode, "mode", middleware.ModeLoop, "`mode`: loop (the health loop checks and heals), probe (only /check/ calls check),\n"+
		"auto (the loop stands down while /check/ is called at least once per period)")
	fs.Var(cliflag.Duration(&m.Period, middleware.DefaultPeriod, false), "period", "`duration` the loop waits after a passing check")
	fs.Var(cliflag.Duration(&f.timeout, middleware.DefaultTimeout, false), "timeout", "fixed `duration` of each loop check; excludes --timeouts")
	fs.TextVar(&f.timeouts, "timeouts", middleware.Ladder(nil), "`ladder` of loop check timeouts, one step up per consecutive failure, e.g. 2s,4s,6s,8s,10s;\n"+
		"\"reference\" is that ladder; excludes --timeout")
	fs.Var(cliflag.Int(&m.FailureThreshold, 1, 1), "failure-threshold", "`count` of consecutive failed checks that make the state unhealthy")
	fs.Var(cliflag.Duration(&m.MaxCheckTimeout, middleware.DefaultMaxCheckTimeout, false), "max-check-timeout",
		"the longest `duration` a /check/ run may take, whatever its callers ask")
	fs.Var(cliflag.Duration(&m.MaxWait, middleware.DefaultMaxWait, false), "max-wait", "the longest `duration` the status endpoint's ?wait= may wait")
	fs.Var(cliflag.Duration(&m.MinCheckInterval, 0, true), "min-check-interval",
		"`duration` during which /check/ serves the last result again instead of checking; 0 checks every time")
	fs.StringVar(&f.Server.HealCommand, "heal-cmd", "", "shell `command` the loop runs (with /bin/sh -c) to heal an unhealthy tunnel, e.g. restart the VPN;\n"+
		"its exit status decides, and what it leaves in its process group is killed: start a daemon with\n"+
		"setsid sh -c 'daemon >>log 2>&1 &' (docs/serve.md)")
	fs.Var(&f.healHTTP, "heal-http", "`request` the loop sends to heal an unhealthy tunnel, as METHOD URL [BODY], repeatable, sent in\n"+
		"order, each to be answered 2xx: the VPN client's own control API, e.g. POST http://127.0.0.1:8000/restart;\n"+
		"excludes --heal-cmd (docs/serve.md)")
	fs.Var(&f.healHeaders, "heal-header", "`header` sent with every --heal-http request, as Name: value, repeatable: an API key")
	fs.Var(cliflag.Duration(&m.HealTimeout, middleware.DefaultHealTimeout, false), "heal-timeout",
		"the longest `duration` a heal may take: then its command is killed and the heal reported as failed")
	f.registerEvidence(fs)
	fs.BoolVar(&m.HideErrors, "hide-errors", false, "keep error details out of HTTP answers (they are still logged)")
}

// registerEvidence registers the flags that shape the evidence, whichever
// its sources.
func (f *Flags) registerEvidence(fs *flag.FlagSet) {
	e := &f.evidence
	fs.Var(cliflag.MinDuration(&e.Window, middleware.DefaultEvidenceWindow, middleware.MinEvidenceDuration), "evidence-window",
		"how long the tunnel may go without an answer to a light probe (or send into silence) before a check fails:\n"+
			"the tolerance, whatever the prober's period (`duration`)")
	fs.Var(cliflag.MinDuration(&e.Interval, middleware.DefaultEvidenceInterval, middleware.MinEvidenceDuration), "evidence-interval",
		"`duration` between two light probes, and between two reads of the counters")
	fs.Var(cliflag.MinDuration(&e.ProbeTimeout, middleware.DefaultProbeTimeout, middleware.MinEvidenceDuration), "light-probe-timeout",
		"how long a light probe's answer is awaited (`duration`): a queue longer than that loses answers")
	fs.Var(cliflag.Share(&e.MaxLoss), "max-loss", "fail checks while more than this `share` of the light probes (0.2: 20%) went unanswered over\n"+
		"--loss-window; 0 reports the loss only")
	fs.Var(cliflag.MinDuration(&e.LossWindow, middleware.DefaultLossWindow, middleware.MinEvidenceDuration), "loss-window",
		"`duration` over which the light probes' loss and round trip are measured and reported")
	fs.BoolVar(&f.delivery, "delivery", true, "where the tunnel's interface is named (--evidence-iface, --evidence-wireguard, --bind-iface): data of the\n"+
		"TCP connections on it that the far end acknowledged passes checks (read from the kernel's socket table\n"+
		"once a second; no progress decides nothing); --delivery=false leaves it out")
	fs.BoolVar(&e.FailOnMTU, "fail-on-mtu", false, "fail checks on a path MTU black hole: small light probes answered, probes of the tunnel interface's\n"+
		"full MTU not, for a window; off, the answers and the log only say so (a restart rarely cures it)")
	fs.Var(cliflag.Duration(&f.fullCheckPeriod, middleware.DefaultFullCheckPeriod, true), "full-check-period",
		"while the light probe passes checks, how often the --target check still runs through the tunnel (`duration`):\n"+
			"two failures in a row fail checks although the probe is answered; 0 never runs it")
}

// RegisterLog registers the logging flags.
func (f *Flags) RegisterLog(fs *flag.FlagSet) {
	fs.Var(cliflag.Choice(&f.logFormat, "text", "text", "json"), "log-format", "log `format` on stderr: text or json")
	fs.TextVar(&f.logLevel, "log-level", slog.LevelInfo, "log `level`: debug, info, warn or error")
}

// ServerConfig returns the server configuration the flags of fs ask for,
// logging to w. An error is a usage error.
func (f *Flags) ServerConfig(fs *flag.FlagSet, w io.Writer) (server.Config, error) {
	cfg := f.Server
	opts := &slog.HandlerOptions{Level: f.logLevel}
	cfg.Logger = slog.New(slog.NewTextHandler(w, opts))
	if f.logFormat == "json" {
		cfg.Logger = slog.New(slog.NewJSONHandler(w, opts))
	}
	cfg.Monitor.Timeouts = middleware.Ladder{f.timeout}
	cfg.GRPC = f.grpcOnHealthListener()
	given := cliflag.Given(fs)
	for _, name := range presetExcludes {
		if f.preset != "" && given[name] {
			return server.Config{}, fmt.Errorf("--preset %s fixes what --%s sets: give one", f.preset, name)
		}
	}
	if given["timeouts"] {
		if given["timeout"] {
			return server.Config{}, fmt.Errorf("--timeout and --timeouts (or %s and %s) exclude each other: give one",
				cliflag.EnvName(fs, "timeout"), cliflag.EnvName(fs, "timeouts"))
		}
		cfg.Monitor.Timeouts = f.timeouts
	}
	if given["echo-target"] && f.preset != "upstream" {
		return server.Config{}, errors.New("--echo-target sets what the small check of --preset upstream echoes: give --preset upstream too")
	}
	if cfg.HealCommand != "" && len(f.healHTTP.Values) > 0 {
		return server.Config{}, errors.New("--heal-cmd and --heal-http exclude each other: give one")
	}
	var err error
	if cfg.HealRequests, err = f.healRequests(); err != nil {
		return server.Config{}, err
	}
	if given["evidence-iface"] && given["evidence-wireguard"] {
		return server.Config{}, errors.New("--evidence-iface and --evidence-wireguard exclude each other: give one")
	}
	iface, err := f.tunnelIface()
	if err != nil {
		return server.Config{}, err
	}
	cfg.Monitor.Via = iface
	var src middleware.CounterSource
	switch {
	case f.evidenceIface != "":
		src = middleware.InterfaceCounters(f.evidenceIface)
	case f.evidenceWG != "":
		src = &wgstats.Device{Name: f.evidenceWG}
	}
	if src != nil {
		if _, err := src.ReadCounters(); err != nil {
			// Not an error: a VPN's interface may come up after its
			// sidecar. But until it does, evidence decides nothing.
			cfg.Logger.Warn("evidence: cannot read the tunnel's interface; until it can, the active check decides every check",
				"err", err)
		}
	}
	probes, err := f.lightProbes(cfg.Logger)
	if err != nil {
		return server.Config{}, err
	}
	var delivery middleware.DeliverySource
	if iface != "" && f.delivery {
		delivery = sockdiag.Delivery{Interface: iface}
	}
	if err := f.setEvidence(&cfg, evidenceSources{probes, src, delivery}, given); err != nil {
		return server.Config{}, err
	}
	if ev := cfg.Monitor.Evidence; ev != nil && iface != "" {
		// A new interface index is a new tunnel: the kubelet restarted
		// the VPN container this sidecar outlives.
		ev.Incarnation = func() (uint64, error) {
			ifc, err := net.InterfaceByName(iface)
			if err != nil {
				return 0, err
			}
			return uint64(ifc.Index), nil
		}
	}
	return cfg, nil
}

// lightProbes returns the light probes of --light-probe's targets, each of
// the kind that can work here, logging to l why it skipped others. An
// error is a usage error.
func (f *Flags) lightProbes(l *slog.Logger) ([]middleware.LightProbe, error) {
	if f.LightProbe == "" {
		return nil, nil
	}
	var probes []middleware.LightProbe
	for target := range strings.SplitSeq(f.LightProbe, ",") {
		// Bound to the tunnel's interface when serve knows it: a tunnel
		// whose routes went away must not let the probe out another way.
		p, skipped, err := middleware.ChooseLightProbe(context.Background(), strings.TrimSpace(target), f.TunnelDialer())
		if err != nil {
			return nil, fmt.Errorf("invalid value %q for flag --light-probe: %w", f.LightProbe, err)
		}
		for _, why := range skipped {
			l.Warn("light probe cannot work here; trying the next kind", "err", why)
		}
		probes = append(probes, p)
	}
	return probes, nil
}

// tunnelIface returns the tunnel's interface the flags name (--bind-iface,
// --evidence-iface or --evidence-wireguard), or "" for none. An error is a
// usage error.
func (f *Flags) tunnelIface() (string, error) {
	evidence := cmp.Or(f.evidenceIface, f.evidenceWG)
	if f.bindIface != "" && evidence != "" && f.bindIface != evidence {
		return "", fmt.Errorf("--bind-iface %s and the evidence's interface %s differ: every check goes through the tunnel's one interface", f.bindIface, evidence)
	}
	return cmp.Or(f.bindIface, evidence), nil
}

// TunnelDialer returns the dialer of every check and of the light probe:
// bound to the tunnel's interface when the flags name it, so that a check
// proves the tunnel or nothing; nil (the host's routes) otherwise.
func (f *Flags) TunnelDialer() check.Dialer {
	if iface, err := f.tunnelIface(); err == nil && iface != "" {
		return check.BoundDialer(iface)
	}
	return nil
}

// healRequests returns the --heal-http requests with the --heal-header
// headers. An error is a usage error.
func (f *Flags) healRequests() ([]server.HealRequest, error) {
	header := http.Header{}
	for i, h := range f.healHeaders.Values {
		name, value, ok := strings.Cut(h, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		// Checked now rather than at the first heal, in an outage. The
		// value is not shown: it is likely a key.
		if !ok || !httpguts.ValidHeaderFieldName(name) || value == "" || !httpguts.ValidHeaderFieldValue(value) {
			return nil, fmt.Errorf("invalid value for flag --heal-header (number %d, its value not shown): want Name: value, a token and a non-empty value", i+1)
		}
		header.Add(name, value)
	}
	if len(header) > 0 && len(f.healHTTP.Values) == 0 {
		return nil, errors.New("--heal-header goes with --heal-http requests: give those too")
	}
	var reqs []server.HealRequest
	for _, r := range f.healHTTP.Values {
		req, err := server.ParseHealRequest(r)
		if err != nil {
			return nil, fmt.Errorf("invalid value for flag --heal-http: %w", err)
		}
		req.Header = header
		reqs = append(reqs, req)
	}
	return reqs, nil
}

// evidenceSources are what the evidence is made of; each may be none.
type evidenceSources struct {
	probes   []middleware.LightProbe
	counters middleware.CounterSource
	delivery middleware.DeliverySource
}

// SetEvidence sets cfg's evidence from the lab's probe, counters and
// delivery, shaped by the evidence flags (--delivery=false leaves the
// delivery out). An error is a usage error.
func (f *Flags) SetEvidence(cfg *server.Config, probe middleware.LightProbe, counters middleware.CounterSource, delivery middleware.DeliverySource) error {
	if !f.delivery {
		delivery = nil
	}
	return f.setEvidence(cfg, evidenceSources{[]middleware.LightProbe{probe}, counters, delivery}, nil)
}

// setEvidence sets cfg's evidence from its sources, shaped by the evidence
// flags; those flags given (in given) without a source are a usage error.
func (f *Flags) setEvidence(cfg *server.Config, sources evidenceSources, given map[string]bool) error {
	if len(sources.probes) == 0 && sources.counters == nil && sources.delivery == nil {
		for _, name := range []string{"evidence-window", "evidence-interval", "light-probe-timeout", "max-loss", "loss-window", "full-check-period", "fail-on-mtu"} {
			if given[name] && !given["evidence"] { // the lab roles' --evidence sets its own
				return fmt.Errorf("--%s shapes the evidence, and none is configured (--light-probe, --evidence-iface)", name)
			}
		}
		return nil
	}
	if len(sources.probes) == 0 {
		for _, name := range []string{"light-probe-timeout", "max-loss", "loss-window", "full-check-period", "fail-on-mtu"} {
			if given[name] {
				return fmt.Errorf("--%s shapes the light probes: give --light-probe too", name)
			}
		}
	}
	ev := f.evidence
	switch { // each flag is in range: see registerEvidence
	case ev.Interval > ev.Window:
		return fmt.Errorf("--evidence-interval %v is longer than --evidence-window %v: a window must hold a probe", ev.Interval, ev.Window)
	case f.fullCheckPeriod > 0 && f.fullCheckPeriod < ev.Window:
		return fmt.Errorf("--full-check-period %v is shorter than --evidence-window %v: the probes would no longer spare the check", f.fullCheckPeriod, ev.Window)
	case ev.MaxLoss > 0 && ev.LossWindow < middleware.MinLossSample*ev.Interval:
		return fmt.Errorf("--loss-window %v holds fewer than the %d probes --max-loss needs, one every --evidence-interval %v",
			ev.LossWindow, middleware.MinLossSample, ev.Interval)
	}
	ev.Probes, ev.Source, ev.Delivery = sources.probes, sources.counters, sources.delivery
	ev.FullCheckPeriod = f.fullCheckPeriod
	if ev.FullCheckPeriod == 0 {
		ev.FullCheckPeriod = -1 // --full-check-period 0: never
	}
	cfg.Monitor.Evidence = &ev
	return nil
}

// ApplyPreset makes cfg the --preset's configuration, if one was given,
// with small and full as its checks.
func (f *Flags) ApplyPreset(cfg *server.Config, small check.Checker, full ...check.Checker) {
	if f.preset == "upstream" {
		up := preset.Upstream(small, full...)
		cfg.Monitor.Mode, cfg.Monitor.FailureThreshold, cfg.Monitor.Tiers = up.Mode, up.FailureThreshold, up.Tiers
	}
}

// BuildChecks returns the checks of the targets the flags ask for, dialing
// through dialer (nil: the host network). An error is a usage error.
func (f *Flags) BuildChecks(dialer check.Dialer) ([]check.Checker, error) {
	targets := f.targets.Values
	if len(targets) == 0 && f.preset == "upstream" {
		targets = preset.UpstreamTargets
	}
	checks, err := target.ParseList(targets, f.Check, target.Options{
		Dialer: dialer, RootCAs: f.tlsCA.Pool, InsecureSkipVerify: f.tlsInsecure, DNSServer: f.dnsServer,
	})
	if err != nil {
		return nil, fmt.Errorf("invalid value for flag --target: %w", err)
	}
	if f.tlsCA.Name != "" {
		// Read again whenever it changes: a rotated CA must not fail every
		// check until serve restarts.
		ca := f.tlsCA.Follow()
		for i, c := range checks {
			checks[i] = cafile.WithRootCAs(c, ca)
		}
	}
	return checks, nil
}

// NewServer returns the health server serve runs, logging to w: the
// checks of the targets (any one passing), configured as the flags of fs
// ask, or as the upstream preset, every check through the tunnel's
// interface when the flags name one (see TunnelDialer), reaping orphans
// when the process is PID 1. An error is a usage error.
func (f *Flags) NewServer(fs *flag.FlagSet, w io.Writer) (*server.Server, server.Config, error) {
	dialer := f.TunnelDialer()
	checks, err := f.BuildChecks(dialer)
	if err != nil {
		return nil, server.Config{}, err
	}
	cfg, err := f.ServerConfig(fs, w)
	if err != nil {
		return nil, server.Config{}, err
	}
	// As PID 1 (the image is FROM scratch: serve is its init) serve
	// inherits every orphan of its heals, and must wait for them. Its
	// heals are its only children.
	cfg.Reap = os.Getpid() == 1
	dnsServer := cmp.Or(f.dnsServer, preset.UpstreamEchoTargets[0])
	f.ApplyPreset(&cfg, preset.UpstreamSmall(dialer, dnsServer, f.echoTargets.Values...), checks...)
	checker := checks[0] // several pass when any one does
	if len(checks) > 1 {
		checker = check.AnyOf(checks...)
	}
	srv, err := server.New(checker, cfg)
	return srv, cfg, err
}
