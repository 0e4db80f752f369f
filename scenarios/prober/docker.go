package prober

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/internal/ctxend"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// Docker's HEALTHCHECK defaults (moby daemon/health.go).
const (
	DefaultDockerInterval      = 30 * time.Second
	DefaultDockerTimeout       = 30 * time.Second
	DefaultDockerStartPeriod   = 0
	DefaultDockerStartInterval = 5 * time.Second
	DefaultDockerRetries       = 3
)

// A HealthStatus is a Docker container's health.
type HealthStatus string

// Docker's health statuses.
const (
	Starting  HealthStatus = "starting"
	Healthy   HealthStatus = "healthy"
	Unhealthy HealthStatus = "unhealthy"
)

// DockerConfig configures a [Docker] prober, as a Dockerfile's
// HEALTHCHECK --interval --timeout --start-period --start-interval --retries.
// The zero value of each field is Docker's default.
type DockerConfig struct {
	// URL is the http or https URL to GET. Docker runs a command instead;
	// this prober stands for one like `curl -fsk URL`, passing on a status
	// from 200 to 399.
	URL string
	// Interval between checks, counted from the end of one to the start of
	// the next; also the time before the first check. 30 s when zero.
	Interval time.Duration
	// Timeout of one check; 30 s when zero.
	Timeout time.Duration
	// StartPeriod after the container started during which failed checks
	// do not count, as long as no check has passed yet. 0 by default.
	StartPeriod time.Duration
	// StartInterval between checks during the start period while the
	// container is starting; 5 s when zero.
	StartInterval time.Duration
	// Retries is how many failed checks in a row make the container
	// unhealthy; 3 when zero.
	Retries int
	// RestartOnUnhealthy makes the prober restart an unhealthy container,
	// as an autoheal container does; Docker itself never does.
	RestartOnUnhealthy bool
	// Clock drives the timer and stamps results; nil means the real clock.
	Clock clockwork.Clock
	// Dialer opens the check connections; nil means the host network.
	Dialer check.Dialer
	// OnProbe, if not nil, is called with every check result, from Run's
	// goroutine.
	OnProbe func(Result)
	// OnDecision, if not nil, is called with every status change (Kind
	// DecisionHealthy or DecisionUnhealthy) and restart (DecisionRestart),
	// from Run's goroutine.
	OnDecision func(Decision)
}

// A Docker prober checks one container as the Docker daemon's health monitor
// does. Create it with [NewDocker] and drive it with Run.
type Docker struct {
	cfg       DockerConfig
	container Container
	clock     clockwork.Clock
	probe     func(ctx context.Context) Result // replaced by tests
	waiting   func()                           // called before each wait, for tests

	// Owned by Run's goroutine.
	status      HealthStatus
	streak      int // the failing streak
	startedAt   time.Time
	containerID string
	unhealthy   bool // whether the container was ever unhealthy
}

// NewDocker checks cfg, fills in its defaults and returns a prober for
// container c. It starts nothing. An error names the offending field.
func NewDocker(cfg DockerConfig, c Container) (*Docker, error) {
	if c == nil {
		return nil, errors.New("prober: nil Container")
	}
	var errs []error
	fillDefault(&errs, "interval", &cfg.Interval, DefaultDockerInterval)
	fillDefault(&errs, "timeout", &cfg.Timeout, DefaultDockerTimeout)
	fillDefault(&errs, "startPeriod", &cfg.StartPeriod, DefaultDockerStartPeriod)
	fillDefault(&errs, "startInterval", &cfg.StartInterval, DefaultDockerStartInterval)
	fillDefault(&errs, "retries", &cfg.Retries, DefaultDockerRetries)
	if err := CheckURL(cfg.URL); err != nil {
		errs = append(errs, err)
	}
	if err := finishProbeConfig(errs, &cfg.Clock); err != nil {
		return nil, err
	}
	return &Docker{cfg: cfg, container: c, clock: cfg.Clock, probe: httpProbe(DefaultKubeletVersion, cfg.URL, cfg.Timeout, cfg.Dialer)}, nil
}

// Status returns the container's health. Call it after Run returns, or from
// OnProbe and OnDecision.
func (d *Docker) Status() HealthStatus { return d.status }

// WasUnhealthy reports whether the container was ever marked unhealthy.
// Call it after Run returns.
func (d *Docker) WasUnhealthy() bool { return d.unhealthy }

// Run is the health monitor, until ctx ends. The container starts in status
// starting. Each check starts one interval after the previous one ended (the
// first one an interval after Run starts); while the container is starting
// within its start period, the start interval is used instead, and a check
// is scheduled for the moment the start period ends when that comes sooner
// than an interval. A passing check makes the container healthy and resets
// the failing streak; a failing one adds to the streak, unless the
// container is still starting within its start period, and at retries the
// container is unhealthy. With RestartOnUnhealthy the container is then
// restarted, and the monitor starts over for the new one.
//
// Run returns nil when ctx ends, or the error of a failed Restart.
func (d *Docker) Run(ctx context.Context) error {
	d.reset()
	timer := d.clock.NewTimer(d.nextInterval())
	defer timer.Stop()
	for {
		if d.waiting != nil {
			d.waiting()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-timer.Chan():
		}
		start := d.clock.Now()
		res := d.probe(ctx)
		res.Start, res.Duration = start, d.clock.Since(start)
		if ctxend.Ended(ctx) {
			return nil
		}
		if d.cfg.OnProbe != nil {
			d.cfg.OnProbe(res)
		}
		d.handle(res)
		if d.status == Unhealthy && d.cfg.RestartOnUnhealthy {
			d.decide(res.Start.Add(res.Duration), DecisionRestart, Failure, "unhealthy, restarted by an autoheal")
			if err := d.container.Restart(ctx, "container is unhealthy"); err != nil {
				if ctxend.Ended(ctx) {
					return nil
				}
				return fmt.Errorf("restart container %s: %w", d.containerID, err)
			}
			d.reset()
		}
		timer.Reset(d.nextInterval())
	}
}

// reset starts the monitor over for the running container, as Docker's
// initHealthMonitor.
func (d *Docker) reset() {
	d.status, d.streak = Starting, 0
	d.containerID = d.container.ID()
	d.startedAt = d.container.StartedAt()
}

// nextInterval returns the wait before the next check (getInterval in
// moby's monitor).
func (d *Docker) nextInterval() time.Duration {
	elapsed := d.clock.Since(d.startedAt)
	if elapsed >= d.cfg.StartPeriod {
		return d.cfg.Interval
	}
	if remaining := d.cfg.StartPeriod - elapsed; remaining < d.cfg.Interval {
		return remaining
	}
	if d.status == Starting {
		return d.cfg.StartInterval
	}
	return d.cfg.Interval
}

// handle updates the status with one check result (handleProbeResult).
func (d *Docker) handle(res Result) {
	if res.Outcome.Passed() {
		d.streak = 0
		if d.status != Healthy {
			d.status = Healthy
			d.decide(res.Start.Add(res.Duration), DecisionHealthy, Success, "check passed")
		}
		return
	}
	if d.status == Starting && res.Start.Sub(d.startedAt) < d.cfg.StartPeriod {
		return // within the start period: does not count
	}
	d.streak++
	if d.streak >= d.cfg.Retries && d.status != Unhealthy {
		d.status = Unhealthy
		d.unhealthy = true
		d.decide(res.Start.Add(res.Duration), DecisionUnhealthy, Failure, fmt.Sprintf("%d failed check(s) in a row", d.streak))
	}
}

func (d *Docker) decide(now time.Time, kind string, state Outcome, reason string) {
	if d.cfg.OnDecision != nil {
		d.cfg.OnDecision(Decision{
			Time:        now,
			Kind:        kind,
			State:       state,
			Reason:      reason,
			ContainerID: d.containerID,
		})
	}
}
