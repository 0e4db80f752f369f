package probeflags

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

// Flags are the probe command's flags: most go straight into the prober's
// configuration.
type Flags struct {
	// Kubelet holds the handler (URL, TCPSocket, GRPC and GRPCService;
	// Exec is the command after "--", set by the caller) and the kubelet's
	// settings.
	Kubelet  prober.KubeletConfig
	Exec     bool
	Count    int
	Duration time.Duration

	Docker bool
	// DockerConfig holds Docker's settings; its URL and Timeout come from
	// the kubelet's flags.
	DockerConfig prober.DockerConfig
}

// Exclusive lists the flags that set the same thing, for cliflag.Parse.
var Exclusive = [][]string{{"count", "duration"}}

// kubeletOnly and dockerOnly name the flags that apply to one prober only.
var (
	kubeletOnly = []string{"type", "period", "failure-threshold", "success-threshold", "initial-delay", "kubelet-version"}
	dockerOnly  = []string{"interval", "retries", "start-period", "start-interval"}
)

// Register registers the probe command's flags on fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	k, d := &f.Kubelet, &f.DockerConfig
	fs.StringVar(&k.URL, "url", "", "http or https `URL` to probe with httpGet; one of --url, --tcp-socket, --grpc and --exec is required")
	fs.Var(cliflag.Addr(&k.TCPSocket, "", true), "tcp-socket", "`host:port` to probe with tcpSocket: a connection opened within the timeout passes")
	fs.Var(cliflag.Addr(&k.GRPC, "", true), "grpc", "`host:port` to probe with grpc: grpc.health.v1.Health/Check without TLS, SERVING passes")
	fs.StringVar(&k.GRPCService, "grpc-service", "", "with --grpc: the `service` asked for; empty asks for the server's overall health")
	fs.BoolVar(&f.Exec, "exec", false, "probe with exec: run the command after -- (no shell), exit 0 passes")
	fs.TextVar(&k.Type, "type", prober.Liveness, "probe `type`: liveness, readiness or startup")
	fs.TextVar(&k.Version, "kubelet-version", prober.DefaultKubeletVersion, "Kubernetes `version` of the kubelet imitated where kubelets differ "+
		"(User-Agent, 1 s linger from 1.27, grpc from 1.23): "+prober.OldestKubeletVersion.String()+" to "+prober.DefaultKubeletVersion.String())
	fs.Var(cliflag.Duration(&k.Period, prober.DefaultKubeletPeriod, false), "period", "`duration` between probes (periodSeconds)")
	fs.Var(cliflag.Duration(&k.Timeout, prober.DefaultKubeletTimeout, false), "timeout", "`duration` of one probe (timeoutSeconds); 30s with --docker")
	fs.Var(cliflag.Int(&k.FailureThreshold, prober.DefaultKubeletFailureThreshold, 1), "failure-threshold",
		"`count` of failures in a row that fail the probe (failureThreshold)")
	fs.Var(cliflag.Int(&k.SuccessThreshold, prober.DefaultKubeletSuccessThreshold, 1), "success-threshold",
		"`count` of successes in a row that pass it (successThreshold); must be 1 for liveness and startup")
	fs.Var(cliflag.Duration(&k.InitialDelay, 0, true), "initial-delay", "`duration` after the start during which probes are skipped (initialDelaySeconds)")
	fs.Var(cliflag.Int(&f.Count, 0, 1), "count", "stop after this `number` of probes; excludes --duration")
	fs.Var(cliflag.Duration(&f.Duration, 0, false), "duration", "stop after this `duration`; excludes --count")

	fs.BoolVar(&f.Docker, "docker", false, "probe as Docker's HEALTHCHECK instead of the kubelet")
	fs.Var(cliflag.Duration(&d.Interval, prober.DefaultDockerInterval, false), "interval", "with --docker: `duration` between checks")
	fs.Var(cliflag.Int(&d.Retries, prober.DefaultDockerRetries, 1), "retries", "with --docker: `count` of failed checks in a row that make the target unhealthy")
	fs.Var(cliflag.Duration(&d.StartPeriod, 0, true), "start-period", "with --docker: `duration` after the start during which failures do not count")
	fs.Var(cliflag.Duration(&d.StartInterval, prober.DefaultDockerStartInterval, false), "start-interval",
		"with --docker: `duration` between checks during the start period")
}

// CutCommand splits args at the first "--" into the flags and the command
// after it, an exec probe's.
func CutCommand(args []string) (flags, command []string) {
	i := slices.Index(args, "--")
	if i < 0 {
		return args, nil
	}
	return args[:i], args[i+1:]
}

// Check rejects flag combinations that make no sense, naming the flags;
// hasCommand says whether a command followed "--".
func (f *Flags) Check(fs *flag.FlagSet, hasCommand bool) error {
	set := cliflag.Given(fs)
	k := &f.Kubelet
	handlers := 0
	for _, given := range []bool{k.URL != "", k.TCPSocket != "", k.GRPC != "", f.Exec} {
		if given {
			handlers++
		}
	}
	switch {
	case handlers != 1:
		return errors.New("give one of --url, --tcp-socket, --grpc and --exec")
	case f.Exec && !hasCommand:
		return errors.New("--exec needs the command after --, e.g. --exec -- wget -qO- http://127.0.0.1:9999/")
	case !f.Exec && hasCommand:
		return errors.New("a command after -- needs --exec")
	case f.Docker && k.URL == "":
		return errors.New("--docker probes a --url")
	case set["grpc-service"] && k.GRPC == "":
		return errors.New("--grpc-service names the service a --grpc probe asks for: give --grpc too")
	case k.GRPC != "" && k.Version != 0 && k.Version < prober.GRPCSince:
		return fmt.Errorf("invalid value %v for flag --kubelet-version: the kubelet's grpc probe came in %v", k.Version, prober.GRPCSince)
	case set["count"] && set["duration"]:
		return errors.New("--count and --duration exclude each other: give one")
	case k.Type != prober.Readiness && k.SuccessThreshold != 1:
		return fmt.Errorf("invalid value %d for flag --success-threshold: must be 1 for %s probes", k.SuccessThreshold, k.Type)
	}
	if u := k.URL; u != "" && prober.CheckURL(u) != nil {
		return fmt.Errorf("invalid value %q for flag --url: not an http or https URL", u)
	}
	other := dockerOnly
	if f.Docker {
		other = kubeletOnly
	}
	for _, name := range other {
		if set[name] {
			if f.Docker {
				return fmt.Errorf("flag --%s does not apply with --docker", name)
			}
			return fmt.Errorf("flag --%s applies only with --docker", name)
		}
	}
	return nil
}
