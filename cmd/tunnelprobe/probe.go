package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/scenarios"
)

const probeUsage = `Usage: tunnelprobe probe --url URL [flags]

Probe URL as the Kubernetes kubelet does (an httpGet probe with its period,
timeout, thresholds and initial delay), or with --docker as Docker's
HEALTHCHECK does, and print every probe and every decision. Nothing is
restarted: a restart decision prints "would restart" and probing goes on as
for a new container.
Runs until --count probes, --duration, or an interrupt.
Exit status: 0 when it would not have restarted (for readiness: ready at the
end), 1 when it would have (with --docker: when the target became unhealthy),
2 on bad usage.
`

// probeTimeFormat stamps each printed line.
const probeTimeFormat = "15:04:05.000"

type probeFlags struct {
	url              string
	typ              scenarios.ProbeType
	period           time.Duration
	timeout          time.Duration
	failureThreshold int
	successThreshold int
	initialDelay     time.Duration
	count            int
	duration         time.Duration

	docker        bool
	interval      time.Duration
	retries       int
	startPeriod   time.Duration
	startInterval time.Duration
}

// probeExclusive lists the flags that set the same thing, for parseWithEnv.
var probeExclusive = [][]string{{"count", "duration"}}

// kubeletOnly and dockerOnly name the flags that apply to one prober only.
var (
	kubeletOnly = []string{"type", "period", "failure-threshold", "success-threshold", "initial-delay"}
	dockerOnly  = []string{"interval", "retries", "start-period", "start-interval"}
)

func (f *probeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "url", "", "http or https `URL` to probe (required)")
	fs.TextVar(&f.typ, "type", scenarios.Liveness, "probe `type`: liveness, readiness or startup")
	fs.Var(cliflag.Duration(&f.period, scenarios.DefaultKubeletPeriod, false), "period", "`duration` between probes (periodSeconds)")
	fs.Var(cliflag.Duration(&f.timeout, scenarios.DefaultKubeletTimeout, false), "timeout", "`duration` of one probe (timeoutSeconds); 30s with --docker")
	fs.Var(cliflag.Int(&f.failureThreshold, scenarios.DefaultKubeletFailureThreshold, 1), "failure-threshold",
		"`count` of failures in a row that fail the probe (failureThreshold)")
	fs.Var(cliflag.Int(&f.successThreshold, scenarios.DefaultKubeletSuccessThreshold, 1), "success-threshold",
		"`count` of successes in a row that pass it (successThreshold); must be 1 for liveness and startup")
	fs.Var(cliflag.Duration(&f.initialDelay, 0, true), "initial-delay", "`duration` after the start during which probes are skipped (initialDelaySeconds)")
	fs.Var(cliflag.Int(&f.count, 0, 1), "count", "stop after this `number` of probes; excludes --duration")
	fs.Var(cliflag.Duration(&f.duration, 0, false), "duration", "stop after this `duration`; excludes --count")

	fs.BoolVar(&f.docker, "docker", false, "probe as Docker's HEALTHCHECK instead of the kubelet")
	fs.Var(cliflag.Duration(&f.interval, scenarios.DefaultDockerInterval, false), "interval", "with --docker: `duration` between checks")
	fs.Var(cliflag.Int(&f.retries, scenarios.DefaultDockerRetries, 1), "retries", "with --docker: `count` of failed checks in a row that make the target unhealthy")
	fs.Var(cliflag.Duration(&f.startPeriod, 0, true), "start-period", "with --docker: `duration` after the start during which failures do not count")
	fs.Var(cliflag.Duration(&f.startInterval, scenarios.DefaultDockerStartInterval, false), "start-interval",
		"with --docker: `duration` between checks during the start period")
}

// probeCommand implements "tunnelprobe probe", with the environment read
// through getenv.
func probeCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tunnelprobe probe", flag.ContinueOnError)
	var f probeFlags
	f.register(fs)
	if code, ok := cliflag.ParseCommand(fs, args, getenv, probeUsage, stdout, stderr, probeExclusive...); !ok {
		return code
	}
	if err := f.check(fs); err != nil {
		return cliflag.UsageError(stderr, fs.Name(), err)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if f.duration > 0 {
		ctx, cancel = context.WithTimeout(ctx, f.duration)
		defer cancel()
	}
	p := &probePrinter{w: stdout, count: f.count, stop: cancel}
	c := scenarios.NewDryContainer(nil)

	if f.docker {
		timeout := 30 * time.Second
		if cliflag.Given(fs)["timeout"] {
			timeout = f.timeout
		}
		d, err := scenarios.NewDocker(scenarios.DockerConfig{
			URL: f.url, Interval: f.interval, Timeout: timeout, StartPeriod: f.startPeriod,
			StartInterval: f.startInterval, Retries: f.retries, RestartOnUnhealthy: true,
			OnProbe: p.probe, OnDecision: p.decision,
		}, c)
		if err != nil {
			return cliflag.UsageError(stderr, fs.Name(), err)
		}
		if err := d.Run(ctx); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
			return 1
		}
		return p.verdict(d.WasUnhealthy(), "the target became unhealthy")
	}

	k, err := scenarios.NewKubelet(scenarios.KubeletConfig{
		URL: f.url, Type: f.typ, Period: f.period, Timeout: f.timeout, InitialDelay: f.initialDelay,
		SuccessThreshold: f.successThreshold, FailureThreshold: f.failureThreshold,
		OnProbe: p.probe, OnDecision: p.decision,
	}, c)
	if err != nil {
		return cliflag.UsageError(stderr, fs.Name(), err)
	}
	if err := k.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return 1
	}
	if f.typ == scenarios.Readiness {
		return p.verdict(k.State() != scenarios.Success, "not ready at the end")
	}
	return p.verdict(k.Restarted(), "it would have restarted the container")
}

// check rejects flag combinations that make no sense, naming the flags.
func (f *probeFlags) check(fs *flag.FlagSet) error {
	set := cliflag.Given(fs)
	switch {
	case f.url == "":
		return errors.New("flag --url is required")
	case set["count"] && set["duration"]:
		return errors.New("--count and --duration exclude each other: give one")
	case f.typ != scenarios.Readiness && f.successThreshold != 1:
		return fmt.Errorf("invalid value %d for flag --success-threshold: must be 1 for %s probes", f.successThreshold, f.typ)
	}
	if u, err := url.Parse(f.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("invalid value %q for flag --url: not an http or https URL", f.url)
	}
	other := dockerOnly
	if f.docker {
		other = kubeletOnly
	}
	for _, name := range other {
		if set[name] {
			if f.docker {
				return fmt.Errorf("flag --%s does not apply with --docker", name)
			}
			return fmt.Errorf("flag --%s applies only with --docker", name)
		}
	}
	return nil
}

// probePrinter prints probes and decisions, counts the probes and stops
// the run after count of them.
type probePrinter struct {
	w     io.Writer
	count int // 0: no limit
	stop  context.CancelFunc

	n int
}

func (p *probePrinter) probe(r scenarios.ProbeResult) {
	fmt.Fprintln(p.w, r)
	p.n++
	if p.count > 0 && p.n >= p.count {
		p.stop() // the worker still acts on this probe before it stops
	}
}

func (p *probePrinter) decision(d scenarios.Decision) {
	at := d.Time.Format(probeTimeFormat)
	switch d.Kind {
	case scenarios.DecisionRestart:
		fmt.Fprintf(p.w, "%s would restart at %s: %s\n", at, d.Time.Format("15:04:05"), d.Reason)
	default:
		fmt.Fprintf(p.w, "%s %s (container %s): %s\n", at, d.Kind, d.ContainerID, d.Reason)
	}
}

// verdict prints the outcome of the run and returns the exit code.
func (p *probePrinter) verdict(bad bool, why string) int {
	if bad {
		fmt.Fprintf(p.w, "verdict: %s\n", why)
		return 1
	}
	fmt.Fprintf(p.w, "verdict: no restart after %d probe(s)\n", p.n)
	return 0
}
