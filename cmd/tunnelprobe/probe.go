package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/tunnelprobe/tunnelprobe/cmd/tunnelprobe/internal/probeflags"
	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

const probeUsage = `Usage: tunnelprobe probe --url URL [flags]
       tunnelprobe probe --tcp-socket HOST:PORT [flags]
       tunnelprobe probe --grpc HOST:PORT [--grpc-service NAME] [flags]
       tunnelprobe probe --exec [flags] -- COMMAND [ARG...]

Probe as the Kubernetes kubelet does, with its period, timeout, thresholds
and initial delay: an httpGet probe of URL, a tcpSocket probe (a connection
within the timeout passes), a grpc probe (grpc.health.v1 Check, SERVING
passes), or an exec probe of COMMAND run here (exit 0
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

// probeCommand implements "tunnelprobe probe", with the environment read
// through getenv.
func probeCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tunnelprobe probe", flag.ContinueOnError)
	var f probeflags.Flags
	f.Register(fs)
	// An exec probe's command follows "--"; the flags come before it.
	args, command := probeflags.CutCommand(args)
	if code, ok := cliflag.ParseCommand(fs, args, getenv, probeUsage, stdout, stderr, probeflags.Exclusive...); !ok {
		return code
	}
	if err := f.Check(fs, len(command) > 0); err != nil {
		return cliflag.UsageError(stderr, fs.Name(), err)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if f.Duration > 0 {
		ctx, cancel = context.WithTimeout(ctx, f.Duration)
		defer cancel()
	}
	p := &probePrinter{w: stdout, count: f.Count, stop: cancel}
	c := prober.NewDryContainer(nil)

	if f.Docker {
		cfg := f.DockerConfig
		cfg.URL, cfg.RestartOnUnhealthy, cfg.OnProbe, cfg.OnDecision = f.Kubelet.URL, true, p.probe, p.decision
		if cliflag.Given(fs)["timeout"] {
			cfg.Timeout = f.Kubelet.Timeout // else Docker's default
		}
		d, err := prober.NewDocker(cfg, c)
		if err != nil {
			return cliflag.UsageError(stderr, fs.Name(), err)
		}
		if err := d.Run(ctx); err != nil {
			return cliflag.ExitCode(stderr, fs.Name(), err)
		}
		return p.verdict(d.WasUnhealthy(), "the target became unhealthy", "no restart")
	}

	cfg := f.Kubelet
	cfg.Exec, cfg.OnProbe, cfg.OnDecision = command, p.probe, p.decision
	k, err := prober.NewKubelet(cfg, c)
	if err != nil {
		return cliflag.UsageError(stderr, fs.Name(), err)
	}
	if err := k.Run(ctx); err != nil {
		return cliflag.ExitCode(stderr, fs.Name(), err)
	}
	if cfg.Type == prober.Readiness {
		// A readiness probe restarts nothing, so its verdict never speaks
		// of restarts: a container's HEALTHCHECK runs it (deploy/compose).
		return p.verdict(k.State() != prober.Success, "not ready at the end", "ready")
	}
	return p.verdict(k.Restarted(), "it would have restarted the container", "no restart")
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

// verdict prints the outcome of the run, fail when bad and else pass with
// the number of probes, and returns the exit code.
func (p *probePrinter) verdict(bad bool, fail, pass string) int {
	if bad {
		fmt.Fprintf(p.w, "verdict: %s\n", fail)
		return 1
	}
	fmt.Fprintf(p.w, "verdict: %s after %d probe(s)\n", pass, p.n)
	return 0
}
