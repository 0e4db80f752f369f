package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

const probeUsage = `Usage: tunnelprobe probe --url URL [flags]
       tunnelprobe probe --tcp-socket HOST:PORT [flags]
       tunnelprobe probe --exec [flags] -- COMMAND [ARG...]

Probe as the Kubernetes kubelet does, with its period, timeout, thresholds
and initial delay: an httpGet probe of URL, a tcpSocket probe (a connection
within the timeout passes), or an exec probe of COMMAND run here (exit 0
passes; past the timeout it is killed and fails). With --docker, probe URL
as Docker's HEALTHCHECK does. Every probe and every decision is printed.
Nothing is restarted: a restart decision prints "would restart" and probing
goes on as for a new container.
Runs until --count probes, --duration, or an interrupt.
Exit status: 0 when it would not have restarted (for readiness: ready at the
end), 1 when it would have (with --docker: when the target became unhealthy),
2 on bad usage.
`

// probeTimeFormat stamps each printed line.
const probeTimeFormat = "15:04:05.000"

// probeFlags are the probe command's: most go straight into the prober's
// configuration.
type probeFlags struct {
	kubelet  prober.KubeletConfig // URL, TCPSocket: the handler; Exec: after "--"
	exec     bool
	count    int
	duration time.Duration

	docker       bool
	dockerConfig prober.DockerConfig // URL and Timeout: from the kubelet's flags
}

// probeExclusive lists the flags that set the same thing, for parseWithEnv.
var probeExclusive = [][]string{{"count", "duration"}}

// kubeletOnly and dockerOnly name the flags that apply to one prober only.
var (
	kubeletOnly = []string{"type", "period", "failure-threshold", "success-threshold", "initial-delay", "kubelet-version"}
	dockerOnly  = []string{"interval", "retries", "start-period", "start-interval"}
)

func (f *probeFlags) register(fs *flag.FlagSet) {
	k, d := &f.kubelet, &f.dockerConfig
	fs.StringVar(&k.URL, "url", "", "http or https `URL` to probe with httpGet; one of --url, --tcp-socket and --exec is required")
	fs.Var(cliflag.Addr(&k.TCPSocket, "", true), "tcp-socket", "`host:port` to probe with tcpSocket: a connection opened within the timeout passes")
	fs.BoolVar(&f.exec, "exec", false, "probe with exec: run the command after -- (no shell), exit 0 passes")
	fs.TextVar(&k.Type, "type", prober.Liveness, "probe `type`: liveness, readiness or startup")
	fs.TextVar(&k.Version, "kubelet-version", prober.DefaultKubeletVersion, "Kubernetes `version` of the kubelet imitated where kubelets differ "+
		"(User-Agent, 1 s linger from 1.27): "+prober.OldestKubeletVersion.String()+" to "+prober.DefaultKubeletVersion.String())
	fs.Var(cliflag.Duration(&k.Period, prober.DefaultKubeletPeriod, false), "period", "`duration` between probes (periodSeconds)")
	fs.Var(cliflag.Duration(&k.Timeout, prober.DefaultKubeletTimeout, false), "timeout", "`duration` of one probe (timeoutSeconds); 30s with --docker")
	fs.Var(cliflag.Int(&k.FailureThreshold, prober.DefaultKubeletFailureThreshold, 1), "failure-threshold",
		"`count` of failures in a row that fail the probe (failureThreshold)")
	fs.Var(cliflag.Int(&k.SuccessThreshold, prober.DefaultKubeletSuccessThreshold, 1), "success-threshold",
		"`count` of successes in a row that pass it (successThreshold); must be 1 for liveness and startup")
	fs.Var(cliflag.Duration(&k.InitialDelay, 0, true), "initial-delay", "`duration` after the start during which probes are skipped (initialDelaySeconds)")
	fs.Var(cliflag.Int(&f.count, 0, 1), "count", "stop after this `number` of probes; excludes --duration")
	fs.Var(cliflag.Duration(&f.duration, 0, false), "duration", "stop after this `duration`; excludes --count")

	fs.BoolVar(&f.docker, "docker", false, "probe as Docker's HEALTHCHECK instead of the kubelet")
	fs.Var(cliflag.Duration(&d.Interval, prober.DefaultDockerInterval, false), "interval", "with --docker: `duration` between checks")
	fs.Var(cliflag.Int(&d.Retries, prober.DefaultDockerRetries, 1), "retries", "with --docker: `count` of failed checks in a row that make the target unhealthy")
	fs.Var(cliflag.Duration(&d.StartPeriod, 0, true), "start-period", "with --docker: `duration` after the start during which failures do not count")
	fs.Var(cliflag.Duration(&d.StartInterval, prober.DefaultDockerStartInterval, false), "start-interval",
		"with --docker: `duration` between checks during the start period")
}

// probeCommand implements "tunnelprobe probe", with the environment read
// through getenv.
func probeCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tunnelprobe probe", flag.ContinueOnError)
	var f probeFlags
	f.register(fs)
	// An exec probe's command follows "--"; the flags come before it.
	args, command := cutCommand(args)
	if code, ok := cliflag.ParseCommand(fs, args, getenv, probeUsage, stdout, stderr, probeExclusive...); !ok {
		return code
	}
	if err := f.check(fs, len(command) > 0); err != nil {
		return cliflag.UsageError(stderr, fs.Name(), err)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if f.duration > 0 {
		ctx, cancel = context.WithTimeout(ctx, f.duration)
		defer cancel()
	}
	p := &probePrinter{w: stdout, count: f.count, stop: cancel}
	c := prober.NewDryContainer(nil)

	if f.docker {
		cfg := f.dockerConfig
		cfg.URL, cfg.RestartOnUnhealthy, cfg.OnProbe, cfg.OnDecision = f.kubelet.URL, true, p.probe, p.decision
		if cliflag.Given(fs)["timeout"] {
			cfg.Timeout = f.kubelet.Timeout // else Docker's default
		}
		d, err := prober.NewDocker(cfg, c)
		if err != nil {
			return cliflag.UsageError(stderr, fs.Name(), err)
		}
		if err := d.Run(ctx); err != nil {
			return cliflag.ExitCode(stderr, fs.Name(), err)
		}
		return p.verdict(d.WasUnhealthy(), "the target became unhealthy")
	}

	cfg := f.kubelet
	cfg.Exec, cfg.OnProbe, cfg.OnDecision = command, p.probe, p.decision
	k, err := prober.NewKubelet(cfg, c)
	if err != nil {
		return cliflag.UsageError(stderr, fs.Name(), err)
	}
	if err := k.Run(ctx); err != nil {
		return cliflag.ExitCode(stderr, fs.Name(), err)
	}
	if cfg.Type == prober.Readiness {
		return p.verdict(k.State() != prober.Success, "not ready at the end")
	}
	return p.verdict(k.Restarted(), "it would have restarted the container")
}

// cutCommand splits args at the first "--" into the flags and the command
// after it.
func cutCommand(args []string) (flags, command []string) {
	i := slices.Index(args, "--")
	if i < 0 {
		return args, nil
	}
	return args[:i], args[i+1:]
}

// check rejects flag combinations that make no sense, naming the flags;
// hasCommand says whether a command followed "--".
func (f *probeFlags) check(fs *flag.FlagSet, hasCommand bool) error {
	set := cliflag.Given(fs)
	handlers := 0
	for _, given := range []bool{f.kubelet.URL != "", f.kubelet.TCPSocket != "", f.exec} {
		if given {
			handlers++
		}
	}
	switch {
	case handlers != 1:
		return errors.New("give one of --url, --tcp-socket and --exec")
	case f.exec && !hasCommand:
		return errors.New("--exec needs the command after --, e.g. --exec -- wget -qO- http://127.0.0.1:9999/")
	case !f.exec && hasCommand:
		return errors.New("a command after -- needs --exec")
	case f.docker && f.kubelet.URL == "":
		return errors.New("--docker probes a --url")
	case set["count"] && set["duration"]:
		return errors.New("--count and --duration exclude each other: give one")
	case f.kubelet.Type != prober.Readiness && f.kubelet.SuccessThreshold != 1:
		return fmt.Errorf("invalid value %d for flag --success-threshold: must be 1 for %s probes", f.kubelet.SuccessThreshold, f.kubelet.Type)
	}
	if u := f.kubelet.URL; u != "" && prober.CheckURL(u) != nil {
		return fmt.Errorf("invalid value %q for flag --url: not an http or https URL", u)
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

func (p *probePrinter) probe(r prober.Result) {
	fmt.Fprintln(p.w, r)
	p.n++
	if p.count > 0 && p.n >= p.count {
		p.stop() // the worker still acts on this probe before it stops
	}
}

func (p *probePrinter) decision(d prober.Decision) {
	at := d.Time.Format(probeTimeFormat)
	switch d.Kind {
	case prober.DecisionRestart:
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
