package middleware

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ErrAlreadyRunning is returned by Run when the monitor is running already.
var ErrAlreadyRunning = errors.New("monitor is already running")

// A Monitor keeps the health state of one tunnel: its loop (Run) and its
// on-demand checks (Probe, the /check/ endpoint) feed one state that the
// status endpoint reports. Create it with [New]; it is safe for concurrent
// use.
type Monitor struct {
	cfg     Config
	checker Checker
	state   *stateStore
	flights flightGroup
	running atomic.Bool

	mu        sync.Mutex
	lastProbe time.Time // when /check/ was last called, for ModeAuto

	// sleeping, when set (tests), is called each time the loop has set its
	// timer to wait until the given time.
	sleeping func(until time.Time)
}

// New returns a Monitor that runs checker as cfg says. It starts nothing:
// call Run for the loop. The error names any field of cfg that is out of
// range.
func New(checker Checker, cfg Config) (*Monitor, error) {
	if checker == nil {
		return nil, errors.New("middleware.New: checker is nil")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("middleware.New: %w", err)
	}
	m := &Monitor{
		cfg:     cfg,
		checker: checker,
		state:   newStateStore(cfg.Mode, cfg.FailureThreshold, cfg.Observer),
	}
	return m, nil
}

// Mode returns the monitor's mode.
func (m *Monitor) Mode() Mode { return m.cfg.Mode }

// Snapshot returns the current state.
func (m *Monitor) Snapshot() Snapshot {
	s, _ := m.state.current()
	return s
}

// Run drives the checks until ctx ends, then returns nil. In ModeLoop it
// loops; in ModeAuto it loops while no probe drives the checks; in ModeProbe
// it only waits, since probes drive everything. Run may be called once at a
// time.
func (m *Monitor) Run(ctx context.Context) error {
	if !m.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer m.running.Store(false)
	if m.cfg.Mode == ModeProbe {
		<-ctx.Done()
		return nil
	}
	newLoop(m).run(ctx)
	return nil
}

// Probe runs the check on demand, as the /check/ endpoint does, and returns
// its result: concurrent calls share one execution, which is cancelled as
// soon as every caller has left; a result younger than MinCheckInterval is
// served again. When ctx ends before the check does, Probe returns at once
// with ctx's error; a check whose every caller hit its deadline is recorded
// as a failure, one whose callers went away is not recorded at all.
func (m *Monitor) Probe(ctx context.Context) Result {
	m.noteProbe()
	if r, ok := m.recentResult(); ok {
		return r
	}
	return m.shareCheck(ctx)
}

// WaitHealthy blocks until the state is healthy or ctx ends, and returns the
// state then.
func (m *Monitor) WaitHealthy(ctx context.Context) Snapshot {
	for {
		s, changed := m.state.current()
		if s.Status == StatusHealthy {
			return s
		}
		select {
		case <-changed:
		case <-ctx.Done():
			s, _ = m.state.current()
			return s
		}
	}
}

func (m *Monitor) noteProbe() {
	now := m.cfg.Clock.Now()
	m.mu.Lock()
	m.lastProbe = now
	m.mu.Unlock()
}

// probesDriving reports whether /check/ calls drive the checks in ModeAuto,
// and until when they do unless another call comes.
func (m *Monitor) probesDriving() (until time.Time, driving bool) {
	m.mu.Lock()
	last := m.lastProbe
	m.mu.Unlock()
	if last.IsZero() {
		return time.Time{}, false
	}
	until = last.Add(2 * m.cfg.Period)
	return until, m.cfg.Clock.Now().Before(until)
}

// recentResult returns the last recorded result while it is younger than
// MinCheckInterval.
func (m *Monitor) recentResult() (Result, bool) {
	if m.cfg.MinCheckInterval <= 0 {
		return Result{}, false
	}
	s, _ := m.state.current()
	if s.Last == nil {
		return Result{}, false
	}
	end := s.Last.Start.Add(s.Last.Duration)
	if m.cfg.Clock.Since(end) >= m.cfg.MinCheckInterval {
		return Result{}, false
	}
	return *s.Last, true
}

// errAbandoned marks a check whose result must not be recorded: everyone who
// wanted it left, or the monitor is shutting down.
var errAbandoned = errors.New("abandoned: every caller left")

// execute runs one check bounded by ctx, tells the observer, and records the
// result unless it is abandoned. When the check fails after ctx ended,
// stopReason says why ctx ended: errAbandoned, or an error that explains the
// failure (a timeout).
func (m *Monitor) execute(ctx context.Context, src Source, timeout time.Duration, stopReason func() error) Result {
	clock := m.cfg.Clock
	start := clock.Now()
	m.cfg.Observer.CheckStarted(CheckStart{Source: src, Time: start, Timeout: timeout})
	err := runSafely(ctx, m.checker)
	r := Result{Source: src, Start: start, Duration: clock.Since(start), Err: err}
	if err != nil && ended(ctx) {
		switch reason := stopReason(); {
		case errors.Is(reason, errAbandoned):
			r.Abandoned = true
		case reason != nil:
			r.Err = fmt.Errorf("%w: %w", reason, err)
		}
	}
	m.cfg.Observer.CheckFinished(r)
	if !r.Abandoned {
		m.state.record(r)
	}
	return r
}
