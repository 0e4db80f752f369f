package prober

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/internal/ctxend"
	"github.com/tunnelprobe/tunnelprobe/internal/enum"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// Kubernetes' probe defaults (pkg/apis/core/v1/defaults.go).
const (
	DefaultKubeletPeriod           = 10 * time.Second
	DefaultKubeletTimeout          = 1 * time.Second
	DefaultKubeletSuccessThreshold = 1
	DefaultKubeletFailureThreshold = 3
)

// maxProbeAttempts is how many times in a row the kubelet runs a probe that
// errs (Outcome Unknown) before it throws the result away (prober.go's
// maxProbeRetries).
const maxProbeAttempts = 3

// A ProbeType says what a probe decides.
type ProbeType int

const (
	// Liveness: a container that fails it is restarted.
	Liveness ProbeType = iota
	// Readiness: a container that fails it gets no traffic.
	Readiness
	// Startup: holds liveness and readiness back until it succeeds; a
	// container that fails it is restarted.
	Startup
)

var probeTypeNames = []string{Liveness: "liveness", Readiness: "readiness", Startup: "startup"}

// String returns "liveness", "readiness" or "startup".
func (t ProbeType) String() string { return enum.Name("ProbeType", probeTypeNames, t) }

// MarshalText returns t.String(), so that a ProbeType reads and writes as
// text in flags, JSON and YAML.
func (t ProbeType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText parses "liveness", "readiness" or "startup", in any case.
func (t *ProbeType) UnmarshalText(text []byte) error {
	v, err := enum.Parse[ProbeType]("probe type", probeTypeNames, string(text))
	if err == nil {
		*t = v
	}
	return err
}

// initial returns the state the kubelet gives a new container before any
// probe of type t: readiness Failure, liveness Success, startup Unknown.
func (t ProbeType) initial() Outcome {
	switch t {
	case Readiness:
		return Failure
	case Startup:
		return Unknown
	}
	return Success
}

// The kinds of [Decision].
const (
	DecisionRestart   = "restart"   // liveness or startup failed: the container is killed and restarted
	DecisionLive      = "live"      // liveness passes (the initial state of a new container)
	DecisionReady     = "ready"     // readiness passed successThreshold times in a row
	DecisionNotReady  = "not-ready" // readiness failed failureThreshold times in a row, or a new container
	DecisionStarted   = "started"   // the startup probe passed
	DecisionStarting  = "starting"  // a new container waits for its startup probe
	DecisionHealthy   = "healthy"   // Docker: a check passed
	DecisionUnhealthy = "unhealthy" // Docker: retries checks in a row failed
)

// A Decision is a change of the state a prober keeps for a container.
type Decision struct {
	Time time.Time
	// Kind is one of the Decision constants.
	Kind string
	// State is the stored result after the decision: for the kubelet
	// Success, Failure or Unknown (startup not decided yet); for Docker
	// Success (healthy) or Failure (unhealthy).
	State Outcome
	// Reason explains the decision, such as "failed liveness probe, will be
	// restarted" or "new container".
	Reason string
	// ContainerID is the container the decision is about.
	ContainerID string
}

// A Container is what a prober watches and restarts. Its methods are called
// from the prober's Run goroutine only.
type Container interface {
	// ID names the running container; it changes when the container is
	// restarted.
	ID() string
	// StartedAt is when the running container started.
	StartedAt() time.Time
	// Restart kills the container (with its grace period) and starts a new
	// one (after the crash back-off; see [CrashBackoff]). It returns once
	// the new container runs, so that ID has changed, or when ctx ends.
	Restart(ctx context.Context, reason string) error
}

// KubeletConfig configures a [Kubelet]. The zero value of each field is
// Kubernetes' default. The kubelet counts in whole seconds; durations here
// may be finer, for fast experiments.
type KubeletConfig struct {
	// The probe's handler, exactly one of: URL, the http or https URL an
	// httpGet probe GETs; TCPSocket, the "host:port" a tcpSocket probe
	// connects to; Exec, the command an exec probe runs (on this machine,
	// as the kubelet runs it in the container); GRPC, the "host:port" a
	// grpc probe asks for the health of GRPCService ("": the server's
	// overall health). See HTTPGet, TCPSocket, Exec and GRPC for their
	// rules.
	URL         string
	TCPSocket   string
	Exec        []string
	GRPC        string
	GRPCService string
	// Type is the probe type: Liveness (the zero value), Readiness or
	// Startup.
	Type ProbeType
	// Version is the Kubernetes release whose kubelet the probes imitate
	// where kubelets differ (see KubeletVersion); DefaultKubeletVersion,
	// the newest modelled, when zero.
	Version KubeletVersion
	// Period between probes: periodSeconds, 10 s when zero.
	Period time.Duration
	// Timeout of one probe: timeoutSeconds, 1 s when zero.
	Timeout time.Duration
	// InitialDelay: initialDelaySeconds, 0 by default. Probes are skipped
	// while the whole seconds since the container started are below it.
	InitialDelay time.Duration
	// SuccessThreshold: successes in a row that pass; 1 when zero, and it
	// must be 1 for liveness and startup.
	SuccessThreshold int
	// FailureThreshold: failures in a row that fail; 3 when zero.
	FailureThreshold int
	// KubeletStartedAt is when the kubelet started. When that is less than
	// a period before Run, Run first sleeps a random time in [0, Period),
	// as a restarted kubelet spreads its probes. The zero time means long
	// ago: the first probe runs at once.
	KubeletStartedAt time.Time
	// Rand draws that sleep; nil means the global source.
	Rand *rand.Rand
	// Started reports whether the container counts as started, that is
	// whether its startup probe has passed. Liveness and readiness probes
	// are skipped until it returns true. nil means there is no startup
	// probe: the container counts as started at once. Unused for Startup.
	Started func() bool
	// Clock drives the ticker and stamps results; nil means the real clock.
	Clock clockwork.Clock
	// Dialer opens the httpGet and tcpSocket probes' connections; nil
	// means the host network.
	Dialer check.Dialer
	// OnProbe, if not nil, is called with every probe result, from Run's
	// goroutine.
	OnProbe func(Result)
	// OnDecision, if not nil, is called with every decision, from Run's
	// goroutine, before it is acted on.
	OnDecision func(Decision)
}

// A Kubelet is one kubelet probe worker: it probes one container with one
// probe type, exactly as the kubelet's prober does (see the package
// documentation for the rules). Create it with [NewKubelet] and drive it with
// Run.
type Kubelet struct {
	cfg       KubeletConfig
	container Container
	clock     clockwork.Clock

	// probe runs one probe of cfg's handler, unless a test replaces it.
	probe func(ctx context.Context) Result
	// waiting, if not nil, is called each time the worker starts waiting
	// for a tick: a synchronisation point for tests.
	waiting func()

	// The worker state, owned by Run's goroutine.
	containerID string
	state       Outcome // the stored result, as the kubelet's results manager
	lastResult  Outcome
	resultRun   int
	stateSet    bool // whether state holds a result for containerID
	onHold      bool
	restarted   bool
}

// NewKubelet checks cfg, fills in its defaults and returns a worker for
// container c. It starts nothing. An error names the offending field.
func NewKubelet(cfg KubeletConfig, c Container) (*Kubelet, error) {
	if c == nil {
		return nil, errors.New("prober: nil Container")
	}
	switch cfg.Type {
	case Liveness, Readiness, Startup:
	default:
		return nil, fmt.Errorf("prober: unknown probe type %d", int(cfg.Type))
	}
	var errs []error
	fillDefault(&errs, "period", &cfg.Period, DefaultKubeletPeriod)
	fillDefault(&errs, "timeout", &cfg.Timeout, DefaultKubeletTimeout)
	fillDefault(&errs, "initialDelay", &cfg.InitialDelay, 0)
	fillDefault(&errs, "successThreshold", &cfg.SuccessThreshold, DefaultKubeletSuccessThreshold)
	fillDefault(&errs, "failureThreshold", &cfg.FailureThreshold, DefaultKubeletFailureThreshold)
	if err := cfg.Version.Check(); err != nil {
		errs = append(errs, err)
	}
	if cfg.Type != Readiness && cfg.SuccessThreshold != 1 {
		errs = append(errs, fmt.Errorf("successThreshold must be 1 for liveness and startup probes, got %d", cfg.SuccessThreshold))
	}
	probe, err := kubeletProbe(cfg)
	if err != nil {
		errs = append(errs, err)
	}
	if err := finishProbeConfig(errs, &cfg.Clock); err != nil {
		return nil, err
	}
	return &Kubelet{cfg: cfg, container: c, clock: cfg.Clock, probe: probe}, nil
}

// Run is the worker loop. It probes at once (or after the random sleep of a
// freshly started kubelet, see KubeletConfig.KubeletStartedAt), then on every
// tick of a ticker with the period, until ctx ends. Probes run in Run's
// goroutine, so they never overlap; a tick that arrives while a probe runs
// is dropped, and a probe longer than the period is followed at once by the
// next. When the liveness or startup result fails, Run calls Restart on the
// container and waits for it; ticks that arrive meanwhile are dropped, and
// the worker holds until it sees a new container ID.
//
// Run returns nil when ctx ends, or the error of a failed Restart.
func (k *Kubelet) Run(ctx context.Context) error {
	period := k.cfg.Period
	if !k.cfg.KubeletStartedAt.IsZero() && k.clock.Since(k.cfg.KubeletStartedAt) < period {
		f := rand.Float64
		if k.cfg.Rand != nil {
			f = k.cfg.Rand.Float64
		}
		t := k.clock.NewTimer(time.Duration(f() * float64(period)))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.Chan():
		}
	}

	ticker := k.clock.NewTicker(period)
	defer ticker.Stop()
	var staleBefore time.Time
	for {
		restarted, err := k.doProbe(ctx)
		if err != nil {
			return err
		}
		fresh := false
		if restarted {
			// Restart returned once the new container ran. The kubelet
			// probes it on the first tick after its ID shows up, so a
			// tick from before that, queued during the restart, is stale:
			// take it out now.
			staleBefore = k.clock.Now()
			select {
			case t := <-ticker.Chan():
				fresh = !t.Before(staleBefore)
			default:
			}
		}
		if k.waiting != nil {
			k.waiting()
		}
		if !fresh && !waitTick(ctx, ticker, staleBefore) {
			return nil
		}
	}
}

// waitTick waits for a tick of ticker at staleBefore or later and reports
// whether one came before ctx ended.
func waitTick(ctx context.Context, ticker clockwork.Ticker, staleBefore time.Time) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case t := <-ticker.Chan():
			if !t.Before(staleBefore) {
				return true
			}
		}
	}
}

// Restarted reports whether the worker has decided to restart the
// container. Call it after Run returns.
func (k *Kubelet) Restarted() bool { return k.restarted }

// State returns the stored result: Success, Failure, or Unknown before a
// container was seen or while a startup probe has not decided. Call it after
// Run returns, or from OnProbe and OnDecision.
func (k *Kubelet) State() Outcome {
	if k.containerID == "" {
		return Unknown
	}
	return k.state
}

// doProbe is one tick of the worker, as the kubelet's worker.doProbe.
// restarted reports whether it restarted the container; err is the error of
// a failed restart.
func (k *Kubelet) doProbe(ctx context.Context) (restarted bool, err error) {
	if id := k.container.ID(); id != k.containerID {
		k.containerID = id
		k.onHold, k.stateSet = false, false
		k.set(k.clock.Now(), k.cfg.Type.initial(), "new container")
	}
	if k.onHold {
		return false, nil // until a new container shows up
	}

	// The kubelet truncates to whole seconds before comparing.
	if time.Duration(k.clock.Since(k.container.StartedAt())/time.Second)*time.Second < k.cfg.InitialDelay {
		return false, nil
	}
	if k.cfg.Type == Startup {
		if k.state == Success {
			return false, nil // started: nothing left to probe until a new container
		}
	} else if k.cfg.Started != nil && !k.cfg.Started() {
		return false, nil
	}

	res, ok := k.runProbe(ctx)
	if !ok {
		return false, nil // every attempt erred: the kubelet throws the result away
	}
	now := res.Start.Add(res.Duration) // decisions follow the probe at once
	result := Failure
	if res.Outcome.Passed() {
		result = Success
	}
	if result == k.lastResult && k.resultRun > 0 {
		k.resultRun++
	} else {
		k.lastResult, k.resultRun = result, 1
	}
	if (result == Failure && k.resultRun < k.cfg.FailureThreshold) ||
		(result == Success && k.resultRun < k.cfg.SuccessThreshold) {
		return false, nil
	}

	if result == Failure && k.cfg.Type != Readiness {
		reason := "failed " + k.cfg.Type.String() + " probe, will be restarted"
		k.set(now, Failure, reason)
		k.onHold, k.resultRun = true, 0
		k.restarted = true
		if err := k.container.Restart(ctx, reason); err != nil && !ctxend.Ended(ctx) {
			return true, fmt.Errorf("restart container %s: %w", k.containerID, err)
		}
		return true, nil
	}
	k.set(now, result, fmt.Sprintf("%s probe %s %d time(s) in a row", k.cfg.Type, verb(result), k.resultRun))
	return false, nil
}

func verb(o Outcome) string {
	if o == Success {
		return "passed"
	}
	return "failed"
}

// runProbe runs the probe, again at once while it errs, up to
// maxProbeAttempts times. ok is false when every attempt erred or ctx
// ended.
func (k *Kubelet) runProbe(ctx context.Context) (res Result, ok bool) {
	for range maxProbeAttempts {
		start := k.clock.Now()
		res = k.probe(ctx)
		res.Start, res.Duration = start, k.clock.Since(start)
		if ctxend.Ended(ctx) {
			return res, false // Run is ending: the result means nothing
		}
		if k.cfg.OnProbe != nil {
			k.cfg.OnProbe(res)
		}
		if res.Outcome != Unknown {
			return res, true
		}
	}
	return res, false
}

// set stores result as the state, as the kubelet's results manager, and
// reports a decision at now when it changes.
func (k *Kubelet) set(now time.Time, result Outcome, reason string) {
	if k.stateSet && result == k.state {
		return
	}
	k.state = result
	k.stateSet = true
	if k.cfg.OnDecision != nil {
		k.cfg.OnDecision(Decision{
			Time:        now,
			Kind:        decisionKind(k.cfg.Type, result),
			State:       result,
			Reason:      reason,
			ContainerID: k.containerID,
		})
	}
}

func decisionKind(t ProbeType, result Outcome) string {
	switch {
	case result == Unknown:
		return DecisionStarting
	case t == Readiness && result == Success:
		return DecisionReady
	case t == Readiness:
		return DecisionNotReady
	case result == Failure:
		return DecisionRestart
	case t == Startup:
		return DecisionStarted
	}
	return DecisionLive
}
