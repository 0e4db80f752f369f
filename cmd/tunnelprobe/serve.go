package main

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/server"
)

const serveUsage = `Usage: tunnelprobe serve [flags]

Serve the health endpoints of a tunnel, as a sidecar of a VPN container:
  GET /         the state the checks last reached: 200 healthy, 503 otherwise;
                ?wait=10s waits up to that long for a healthy state.
  GET /check/   runs the check now (concurrent calls share one run): 200 or 503;
                ?timeout=5s bounds it on the server side.
Several --target flags pass when any one of them does.
`

// serveFlags holds the flags of the serve command. Other commands that run
// a monitor (the lab) register the same flags with registerCheck and
// registerMonitor, then build with buildChecker and monitorConfig.
type serveFlags struct {
	listen string

	// The check: see registerCheck.
	targets     stringList
	check       string
	tlsCA       certPoolValue
	tlsInsecure bool
	dnsServer   string

	// The monitor: see registerMonitor.
	mode             middleware.Mode
	period           time.Duration
	timeout          *durationValue
	timeouts         durationList
	failureThreshold int
	maxCheckTimeout  time.Duration
	maxWait          time.Duration
	minCheckInterval time.Duration
	healCmd          string
	healTimeout      time.Duration
	hideErrors       bool

	// Logs: see registerLog.
	logFormat string
	logLevel  slog.Level
}

// serveExclusive lists the flags that set the same thing, for parseWithEnv.
var serveExclusive = [][]string{{"timeout", "timeouts"}}

// register registers every flag of the serve command on fs. Parse them with
// parseWithEnv(fs, args, getenv, serveExclusive...).
func (f *serveFlags) register(fs *flag.FlagSet) {
	fs.Var(newAddr(&f.listen, ":9999", false), "listen", "`address` to serve the health endpoints on; port 0 picks a free port")
	f.registerCheck(fs)
	f.registerMonitor(fs)
	f.registerLog(fs)
}

// registerCheck registers the flags that say what to check.
func (f *serveFlags) registerCheck(fs *flag.FlagSet) {
	fs.Var(&f.targets, "target", "`target` to check, repeatable: tcp://host:port, tls://host[:port], http(s)://..., dns://[server/]name,\n"+
		"or without a scheme as --check says: host[:port] for tcp and tls (port 443 when missing), a URL for http,\n"+
		"a host name for dns; several pass when any one does\n"+
		"(default cloudflare.com:443, https://cloudflare.com/ for http, cloudflare.com for dns)")
	fs.Var(newChoice(&f.check, "tls", "tcp", "tls", "http", "dns"), "check",
		"`kind` of check of a --target without a scheme: tcp (a dial), tls (a dial and a verified handshake),\n"+
			"http (a GET answered 2xx or 3xx), dns (a lookup)")
	fs.Var(&f.tlsCA, "tls-ca", "PEM `file` of the CA certificates that verify tls and http targets, instead of the system's")
	fs.BoolVar(&f.tlsInsecure, "tls-insecure", false, "accept any certificate from tls and http targets (for labs only)")
	fs.StringVar(&f.dnsServer, "dns-server", "", "DNS server `host[:port]` the dns check queries (default: those of /etc/resolv.conf)")
}

// registerMonitor registers the flags that say how the checks are driven.
func (f *serveFlags) registerMonitor(fs *flag.FlagSet) {
	fs.Var(modeValue{&f.mode}, "mode", "`mode`: loop (the health loop checks and heals), probe (only /check/ calls check),\n"+
		"auto (the loop stands down while /check/ is called at least once per period)")
	fs.Var(newDuration(&f.period, middleware.DefaultPeriod, false), "period", "`duration` the loop waits after a passing check")
	f.timeout = newDuration(new(time.Duration), middleware.DefaultTimeout, false)
	fs.Var(f.timeout, "timeout", "fixed `duration` of each loop check; excludes --timeouts")
	fs.Var(&f.timeouts, "timeouts", "`ladder` of loop check timeouts, one step up per consecutive failure, e.g. 2s,4s,6s,8s,10s;\n"+
		"\"reference\" is that ladder; excludes --timeout")
	fs.Var(newInt(&f.failureThreshold, 1, 1), "failure-threshold", "`count` of consecutive failed checks that make the state unhealthy")
	fs.Var(newDuration(&f.maxCheckTimeout, middleware.DefaultMaxCheckTimeout, false), "max-check-timeout",
		"the longest `duration` a /check/ run may take, whatever its callers ask")
	fs.Var(newDuration(&f.maxWait, middleware.DefaultMaxWait, false), "max-wait", "the longest `duration` the status endpoint's ?wait= may wait")
	fs.Var(newDuration(&f.minCheckInterval, 0, true), "min-check-interval",
		"`duration` during which /check/ serves the last result again instead of checking; 0 checks every time")
	fs.StringVar(&f.healCmd, "heal-cmd", "", "shell `command` the loop runs (with /bin/sh -c) to heal an unhealthy tunnel, e.g. restart the VPN")
	fs.Var(newDuration(&f.healTimeout, middleware.DefaultHealTimeout, false), "heal-timeout",
		"the longest `duration` a heal may take: then its command is killed and the heal reported as failed")
	fs.BoolVar(&f.hideErrors, "hide-errors", false, "keep error details out of HTTP answers (they are still logged)")
}

// registerLog registers the logging flags.
func (f *serveFlags) registerLog(fs *flag.FlagSet) {
	fs.Var(newChoice(&f.logFormat, "text", "text", "json"), "log-format", "log `format` on stderr: text or json")
	fs.TextVar(&f.logLevel, "log-level", slog.LevelInfo, "log `level`: debug, info, warn or error")
}

// logger returns the logger the flags ask for, writing to w.
func (f *serveFlags) logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: f.logLevel}
	if f.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// monitorConfig returns the monitor configuration the flags ask for, logging
// to logger. An error is a usage error.
func (f *serveFlags) monitorConfig(logger *slog.Logger) (middleware.Config, error) {
	cfg := middleware.Config{
		Mode:             f.mode,
		Period:           f.period,
		Timeouts:         []time.Duration{*f.timeout.d},
		FailureThreshold: f.failureThreshold,
		MaxWait:          f.maxWait,
		MaxCheckTimeout:  f.maxCheckTimeout,
		MinCheckInterval: f.minCheckInterval,
		HealTimeout:      f.healTimeout,
		HideErrors:       f.hideErrors,
		Observer:         middleware.NewSlogObserver(logger),
	}
	if f.timeouts.set {
		if f.timeout.set {
			return middleware.Config{}, errors.New("--timeout and --timeouts (or TUNNELPROBE_TIMEOUT and TUNNELPROBE_TIMEOUTS) exclude each other: give one")
		}
		cfg.Timeouts = f.timeouts.values
	}
	if f.healCmd != "" {
		cfg.Heal = server.HealCommand(f.healCmd, logger)
	}
	return cfg, nil
}

// buildChecker returns the check the flags ask for, dialing through dialer
// (nil: the host network). An error is a usage error.
func buildChecker(f *serveFlags, dialer middleware.Dialer) (middleware.Checker, error) {
	targets := f.targets.values
	if len(targets) == 0 {
		targets = []string{defaultTarget(f.check)}
	}
	checks := make([]middleware.Checker, 0, len(targets))
	for _, t := range targets {
		c, err := middleware.ParseTarget(t, f.check, middleware.TargetOptions{
			Dialer: dialer, RootCAs: f.tlsCA.pool, InsecureSkipVerify: f.tlsInsecure, DNSServer: f.dnsServer,
		})
		if err != nil {
			return nil, fmt.Errorf("invalid value %q for flag --target: %w", t, err)
		}
		checks = append(checks, c)
	}
	if len(checks) == 1 {
		return checks[0], nil
	}
	return middleware.AnyOf(checks...), nil
}

func defaultTarget(check string) string {
	switch check {
	case "http":
		return "https://cloudflare.com/"
	case "dns":
		return "cloudflare.com"
	}
	return "cloudflare.com:443"
}

// runServe is the serve command.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return serve(ctx, args, os.Getenv, stdout, stderr)
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	const name = "tunnelprobe serve"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var f serveFlags
	f.register(fs)
	metrics := registerServeMetrics(fs) // serve_metrics.go
	if code, ok := parseCommand(fs, args, getenv, serveUsage, stdout, stderr, serveExclusive...); !ok {
		return code
	}
	logger := f.logger(stderr)
	checker, err := buildChecker(&f, nil)
	if err != nil {
		return usageError(stderr, name, err)
	}
	cfg, err := f.monitorConfig(logger)
	if err != nil {
		return usageError(stderr, name, err)
	}
	if err := metrics.instrument(&cfg); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	mon, err := middleware.New(checker, cfg)
	if err != nil {
		return usageError(stderr, name, err)
	}

	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		fmt.Fprintf(stderr, "%s: cannot listen on %s: %v\n", name, f.listen, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: listening on %s\n", name, ln.Addr())
	logger.Info("serving health endpoints", "addr", ln.Addr().String(), "mode", f.mode.String(), "check", f.check)
	if err := server.Serve(ctx, ln, mon, server.Options{Logger: logger, Wrap: metrics.wrappers(mon)}); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}

// modeValue is the --mode flag.
type modeValue struct{ m *middleware.Mode }

func (v modeValue) String() string {
	if v.m == nil {
		return ""
	}
	return v.m.String()
}

func (v modeValue) Set(s string) error {
	m, err := middleware.ParseMode(s)
	if err != nil {
		return errors.New("want loop, probe or auto")
	}
	*v.m = m
	return nil
}

// certPoolValue is the --tls-ca flag: the file is loaded when the flag is
// set, so a bad file is reported as a bad flag value.
type certPoolValue struct {
	file string
	pool *x509.CertPool
}

func (v *certPoolValue) String() string {
	if v == nil {
		return ""
	}
	return v.file
}

func (v *certPoolValue) Set(s string) error {
	pool, err := middleware.LoadCertPool(s)
	if err != nil {
		return err
	}
	v.file, v.pool = s, pool
	return nil
}
