package prober

import (
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// docker returns a Docker prober wired to the rig.
func (h *rig) docker(cfg DockerConfig) *Docker {
	h.t.Helper()
	if cfg.URL == "" {
		cfg.URL = "http://probe.test/healthz"
	}
	cfg.Clock, cfg.OnProbe, cfg.OnDecision = h.clock, h.onProbe, h.onDecision
	d, err := NewDocker(cfg, h.c)
	if err != nil {
		h.t.Fatal(err)
	}
	d.probe = h.probe
	d.waiting = func() { h.idle <- struct{}{} }
	return d
}

// Docker's defaults: interval 30 s, timeout 30 s, start period 0, start
// interval 5 s, retries 3.
func TestDockerDefaults(t *testing.T) {
	t.Parallel()
	d, err := NewDocker(DockerConfig{URL: "http://x/"}, newFakeContainer(clockwork.NewFakeClock(), t0))
	if err != nil {
		t.Fatal(err)
	}
	c := d.cfg
	if c.Interval != 30*time.Second || c.Timeout != 30*time.Second || c.StartPeriod != 0 ||
		c.StartInterval != 5*time.Second || c.Retries != 3 || c.RestartOnUnhealthy {
		t.Errorf("defaults: %+v", c)
	}
	for _, tt := range []struct {
		cfg  DockerConfig
		want string
	}{
		{DockerConfig{URL: "http://x/", Interval: -1}, "interval"},
		{DockerConfig{URL: "http://x/", StartPeriod: -1}, "startPeriod"},
		{DockerConfig{URL: "http://x/", Retries: -1}, "retries"},
		{DockerConfig{URL: "x"}, "url"},
	} {
		if _, err := NewDocker(tt.cfg, newFakeContainer(clockwork.NewFakeClock(), t0)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewDocker(%+v) = %v, want an error with %q", tt.cfg, err, tt.want)
		}
	}
}

// The first check runs one interval after the start; retries failures in a
// row make the container unhealthy; Docker does not restart it.
func TestDockerIntervalAndRetries(t *testing.T) {
	t.Parallel()
	h := newRig(t, Success, Failure, Failure, Success, Failure, Failure, Failure)
	d := h.docker(DockerConfig{})
	h.start(d.Run)
	h.waitIdle()
	for range 7 {
		h.advance(30 * time.Second)
	}
	wantEqual(t, "probe times", h.probeTimes(), secs(30, 60, 90, 120, 150, 180, 210))
	wantEqual(t, "decisions", h.decisionLog(), []string{"30s c1 healthy", "3m30s c1 unhealthy"})
	if d.Status() != Unhealthy || !d.WasUnhealthy() || len(h.c.Restarts()) != 0 {
		t.Errorf("status %v, restarts %v; want unhealthy without restart", d.Status(), h.c.Restarts())
	}
}

// During the start period, while no check has passed, checks run every
// start interval and failures do not count; a check is scheduled for the end
// of the start period; then the interval applies.
func TestDockerStartPeriod(t *testing.T) {
	t.Parallel()
	h := newRig(t)
	d := h.docker(DockerConfig{Interval: 10 * time.Second, StartPeriod: 30 * time.Second, Retries: 2})
	h.start(d.Run)
	h.waitIdle()
	for _, step := range secs(5, 5, 5, 5, 5, 5, 10) {
		h.advance(step)
	}
	wantEqual(t, "probe times", h.probeTimes(), secs(5, 10, 15, 20, 25, 30, 40))
	wantEqual(t, "decisions", h.decisionLog(), []string{"40s c1 unhealthy"})
}

// Once a check passed, failures count even within the start period.
func TestDockerStartPeriodAfterSuccess(t *testing.T) {
	t.Parallel()
	h := newRig(t, Success, Failure, Failure)
	d := h.docker(DockerConfig{Interval: 10 * time.Second, StartPeriod: 30 * time.Second, Retries: 2})
	h.start(d.Run)
	h.waitIdle()
	for _, step := range secs(5, 10, 10) {
		h.advance(step)
	}
	wantEqual(t, "probe times", h.probeTimes(), secs(5, 15, 25))
	wantEqual(t, "decisions", h.decisionLog(), []string{"5s c1 healthy", "25s c1 unhealthy"})
}

// The interval runs from the end of one check to the start of the next.
func TestDockerIntervalAfterCheckEnds(t *testing.T) {
	t.Parallel()
	h := newRig(t, Success, Success)
	entered, release := make(chan struct{}), make(chan struct{})
	h.block = func(n int) {
		if n == 0 {
			entered <- struct{}{}
			<-release
		}
	}
	d := h.docker(DockerConfig{})
	h.start(d.Run)
	h.waitIdle()
	h.clock.Advance(30 * time.Second)
	<-entered
	h.clock.Advance(3 * time.Second) // the check takes 3 s
	close(release)
	h.waitIdle()
	h.advance(30 * time.Second)
	wantEqual(t, "probe times", h.probeTimes(), secs(30, 63))
}

// RestartOnUnhealthy restarts an unhealthy container, as an autoheal
// container would, and the monitor starts over for the new one.
func TestDockerRestartOnUnhealthy(t *testing.T) {
	t.Parallel()
	h := newRig(t, Failure, Success)
	d := h.docker(DockerConfig{Retries: 1, RestartOnUnhealthy: true})
	h.start(d.Run)
	h.waitIdle()
	h.advance(30 * time.Second)
	if d.Status() != Starting {
		t.Errorf("status %v after the restart, want starting", d.Status())
	}
	h.advance(30 * time.Second)
	wantEqual(t, "decisions", h.decisionLog(), []string{"30s c1 unhealthy", "30s c1 restart", "1m0s c2 healthy"})
	wantEqual(t, "restarts", h.c.Restarts(), []string{"30s container is unhealthy"})
}
