package middleware

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/internal/safely"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"

	"github.com/tunnelprobe/tunnelprobe/internal/ctxend"
)

// ErrAlreadyRunning is returned by Run when the monitor is running already.
var ErrAlreadyRunning = errors.New("monitor is already running")

// A Monitor keeps the health state of one tunnel: its loop (Run) and its
// on-demand checks (Probe, the /check/ endpoint) feed one state that the
// status endpoint reports. Create it with [New]; it is safe for concurrent
// use.
type Monitor struct {
	cfg      Config
	checker  check.Checker
	evidence *evidence // nil without Config.Evidence
	state    *stateStore
	rendered statusCache
	flights  flightGroup
	running  atomic.Bool

	mu sync.Mutex
	// lastProbe is when a /check/ execution last recorded a result, for
	// ModeAuto: only a check that ran to a verdict drives the checks, so
	// callers who leave early, or give a check too little time to say
	// anything, can never stand the loop down.
	lastProbe time.Time
	// What the loop is doing, for Snapshot: when it owes its next result
	// (zero while it does not drive the checks) and the heal it runs.
	dueBy   time.Time
	healing *HealStart

	// sleeping, when set (tests), is called each time the loop has set its
	// timer to wait until the given time.
	sleeping func(until time.Time)
}

// New returns a Monitor that runs checker as cfg says. It starts nothing:
// call Run for the loop. The error names any field of cfg that is out of
// range, as [Config.Validate] does.
func New(checker check.Checker, cfg Config) (*Monitor, error) {
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
	if cfg.Evidence != nil {
		m.evidence = newEvidence(*cfg.Evidence, checker, cfg, cfg.Observer)
	}
	return m, nil
}

// Mode returns the monitor's mode.
func (m *Monitor) Mode() Mode { return m.cfg.Mode }

// Snapshot returns the current state.
func (m *Monitor) Snapshot() Snapshot {
	s, _ := m.current()
	return s
}

// current returns the state, with what the loop is doing, and a channel
// that is closed at the next record.
func (m *Monitor) current() (Snapshot, <-chan struct{}) {
	s, changed := m.state.current()
	m.mu.Lock()
	s.DueBy, s.Healing = m.dueBy, m.healing
	m.mu.Unlock()
	s.Stale = !s.DueBy.IsZero() && m.cfg.Clock.Since(s.DueBy) > m.cfg.Period
	return s, changed
}

// owe records that the loop owes its next result by t; zero: it does not
// drive the checks.
func (m *Monitor) owe(t time.Time) {
	m.mu.Lock()
	m.dueBy = t
	m.mu.Unlock()
	// Staleness runs from DueBy: a WaitChange timing it must look again.
	m.state.wake()
}

// setHealing records the heal the loop runs.
func (m *Monitor) setHealing(h *HealStart) {
	m.mu.Lock()
	m.healing = h
	m.mu.Unlock()
	m.state.touch()
}

// endHealing records that heal h ended, unless another is recorded.
func (m *Monitor) endHealing(h *HealStart) {
	m.mu.Lock()
	if m.healing == h {
		m.healing = nil
	}
	m.mu.Unlock()
	m.state.touch()
}

// Run drives the checks until ctx ends, then returns nil. In ModeLoop it
// loops; in ModeAuto it loops while no probe drives the checks; in ModeProbe
// it only waits, since probes drive everything. With Config.Evidence it
// sends the light probes and samples the tunnel's counters meanwhile, in
// every mode. Run may be called once at a time.
func (m *Monitor) Run(ctx context.Context) error {
	if !m.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer m.running.Store(false)
	if m.evidence != nil {
		sampling := make(chan struct{})
		defer func() { <-sampling }()
		go func() {
			defer close(sampling)
			m.evidence.run(ctx)
		}()
	}
	if m.cfg.Mode == ModeProbe {
		<-ctx.Done()
		return nil
	}
	newLoop(m).run(ctx)
	return nil
}

// Probe runs the check on demand, as the /check/ endpoint does, and returns
// its result: concurrent calls share one execution, which is cancelled as
// soon as every caller has left; a recorded result younger than
// MinCheckInterval is served again. When ctx ends before the check does,
// Probe returns at once with ctx's error. A ctx without a deadline (a bare
// /check/, a gRPC Check without one) gets the check timeout (Timeouts[0]):
// what the monitor was told a check takes, not the most any may
// (MaxCheckTimeout).
//
// Nothing one caller asks changes what another is told or what is
// recorded, nor turns a working tunnel's state unhealthy: each caller is
// told, and records, what it would alone.
//   - A check whose callers went away is not recorded.
//   - A check that a caller's deadline cut off before it had run for the
//     monitor's check timeout (Timeouts[0]) fails for that caller but is
//     not recorded: so short a deadline says nothing about the tunnel. Cut
//     off later, it is recorded as a failure at that deadline, also while
//     other callers go on waiting for the same check (whose verdict, when
//     it comes, is recorded too).
//   - In ModeAuto only executions that recorded a result stand the loop
//     down: callers who leave early or give too little time drive nothing.
//   - A cached failure that was a timeout serves only callers who would not
//     have waited longer for the check than it ran; others get a check of
//     their own.
func (m *Monitor) Probe(ctx context.Context) Result {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = clockwork.WithTimeout(ctx, m.cfg.Clock, min(m.cfg.Timeouts[0], m.cfg.MaxCheckTimeout))
		defer cancel()
	}
	if r, ok := m.recentResult(ctx); ok {
		return r
	}
	return m.shareCheck(ctx)
}

// LightProbeStats returns what each light probe showed over
// Evidence.LossWindow, in the order of Evidence.Probes; nil without them.
func (m *Monitor) LightProbeStats() []LightProbeStats {
	if m.evidence == nil {
		return nil
	}
	var out []LightProbeStats
	for _, p := range m.evidence.proofs {
		out = append(out, p.stats())
	}
	return out
}

// TrafficCounters returns the latest reading of the evidence's traffic
// counters (Config.Evidence.Source) and its error: an interface that does
// not exist (yet) fails every reading, and the counters decide nothing
// until one succeeds, as they do once a VPN's interface appears. ok is
// false with no Source, or before Run took the first reading.
func (m *Monitor) TrafficCounters() (c Counters, ok bool, err error) {
	if m.evidence == nil || m.evidence.counters == nil {
		return Counters{}, false, nil
	}
	return m.evidence.counters.latest()
}

// WaitHealthy blocks until the state is healthy or ctx ends, and returns the
// state then.
func (m *Monitor) WaitHealthy(ctx context.Context) Snapshot {
	for {
		s, changed := m.current()
		if s.Status == StatusHealthy {
			return s
		}
		select {
		case <-changed:
		case <-ctx.Done():
			s, _ = m.current()
			return s
		}
	}
}

// WaitChange blocks until the state differs from seen in Status or in
// Stale, or until ctx ends, and returns the state then. A loop that falls
// behind turns the state Stale with no result recorded: WaitChange notices
// that when it happens, on the monitor's clock. Call it in a loop, passing
// what it returned, to follow every change (package grpchealth's Watch
// does).
func (m *Monitor) WaitChange(ctx context.Context, seen Snapshot) Snapshot {
	for {
		s, changed := m.current()
		if s.Status != seen.Status || s.Stale != seen.Stale {
			return s
		}
		if !m.awaitChange(ctx, s, changed) {
			s, _ = m.current()
			return s
		}
	}
}

// awaitChange waits until changed is closed or s would turn Stale, and
// reports whether ctx is still alive.
func (m *Monitor) awaitChange(ctx context.Context, s Snapshot, changed <-chan struct{}) bool {
	var staleAt <-chan time.Time
	if !s.Stale && !s.DueBy.IsZero() {
		// Stale is strictly more than a Period past DueBy.
		t := m.cfg.Clock.NewTimer(m.cfg.Clock.Until(s.DueBy.Add(m.cfg.Period)) + time.Nanosecond)
		defer t.Stop()
		staleAt = t.Chan()
	}
	select {
	case <-changed:
	case <-staleAt:
	case <-ctx.Done():
		return false
	}
	return true
}

// probesDriving reports whether /check/ calls drive the checks in ModeAuto,
// and until when they do unless another call records a result.
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
// MinCheckInterval, unless it is a timeout and the caller, with ctx, would
// have given the check longer than it had.
func (m *Monitor) recentResult(ctx context.Context) (Result, bool) {
	if m.cfg.MinCheckInterval <= 0 {
		return Result{}, false
	}
	s, _ := m.state.current()
	if s.Last == nil {
		return Result{}, false
	}
	last := *s.Last
	end := last.Start.Add(last.Duration)
	if m.cfg.Clock.Since(end) >= m.cfg.MinCheckInterval {
		return Result{}, false
	}
	if last.TimedOut {
		patience := m.cfg.MaxCheckTimeout
		if deadline, ok := ctx.Deadline(); ok {
			patience = min(patience, m.cfg.Clock.Until(deadline))
		}
		if patience > last.Duration {
			return Result{}, false
		}
	}
	return last, true
}

// silentProbes returns the light probes' targets, when r passed on
// another proof (delivery, an active check) while every one of them is
// silent: a target gone quiet while the tunnel works.
func (m *Monitor) silentProbes(r Result) []string {
	if m.evidence == nil || len(m.evidence.proofs) == 0 || !r.Passed() || r.Proof == ProofLightProbe {
		return nil
	}
	var silent []string
	for _, p := range m.evidence.proofs {
		st := p.stats()
		if !st.Silent {
			return nil
		}
		silent = append(silent, st.Kind+" "+st.Target)
	}
	return silent
}

// activeCheck runs checker bounded by ctx; with a full check (see
// Evidence.FullCheckPeriod), it tells the full check, which never runs
// beside it and takes its pass for one of its own.
func (m *Monitor) activeCheck(ctx context.Context, checker check.Checker) error {
	var full *fullCheck
	if m.evidence != nil {
		full = m.evidence.full
	}
	if full == nil {
		return safely.Check(ctx, checker, check.ErrPanicked)
	}
	tunnel := full.activeStarted()
	err := safely.Check(ctx, checker, check.ErrPanicked)
	full.activeEnded(tunnel, m.cfg.Clock.Now(), err)
	return err
}

// A stop says why a check's context ended before the check did.
type stop struct {
	// reason explains the failure ("timed out after 2s"), prefixed to the
	// check's error; nil leaves the error as it is.
	reason error
	// record: the failure says something about the tunnel and is recorded.
	// Otherwise the result is Abandoned.
	record bool
	// short: the callers' deadline, given, ended the check before the
	// check timeout, and so it is not recorded.
	short bool
	given time.Duration
}

// execute runs check bounded by ctx, tells the observer, and records the
// result unless it is abandoned. When the check fails after ctx ended,
// stopped says why ctx ended.
func (m *Monitor) execute(ctx context.Context, src Source, timeout time.Duration, checker check.Checker, stopped func() stop) Result {
	r := m.decide(ctx, m.begin(src, timeout), src, checker, stopped)
	m.finish(r)
	return r
}

// begin tells the observer that a check starts now, and returns now.
func (m *Monitor) begin(src Source, timeout time.Duration) time.Time {
	start := m.cfg.Clock.Now()
	m.cfg.Observer.CheckStarted(CheckStart{Source: src, Time: start, Timeout: timeout})
	return start
}

// finish tells the observer how a check ended and records its result
// unless it is abandoned.
func (m *Monitor) finish(r Result) {
	m.cfg.Observer.CheckFinished(r)
	if r.Abandoned {
		return
	}
	if r.Source == SourceProbe {
		// Before the record, which wakes a loop standing down: it must
		// see this probe when it looks again.
		m.mu.Lock()
		m.lastProbe = r.Start.Add(r.Duration)
		m.mu.Unlock()
	}
	m.state.record(r)
}

// decide runs check bounded by ctx (or lets the evidence decide) and returns
// its result, neither observed nor recorded.
func (m *Monitor) decide(ctx context.Context, start time.Time, src Source, checker check.Checker, stopped func() stop) Result {
	clock := m.cfg.Clock
	var v verdict
	if m.evidence != nil {
		if v = m.evidence.await(ctx); v.ok {
			r := Result{Source: src, Start: start, Duration: clock.Since(start), Err: v.err, Evidence: v.text, Via: m.cfg.Via, Proof: v.proof}
			if v.err != nil {
				r.Evidence = v.err.Error()
			}
			r.SilentProbes = m.silentProbes(r)
			return r
		}
	}
	var err error
	if v.pending && ctxend.Ended(ctx) {
		// The deadline came while the probes were about to decide: say
		// so, rather than run a check with no time left.
		err = fmt.Errorf("evidence undecided at the deadline (%s): %w", v.text, ctxend.Err(ctx))
	} else {
		err = m.activeCheck(ctx, checker)
	}
	r := Result{Source: src, Start: start, Duration: clock.Since(start), Err: err, Via: m.cfg.Via}
	if err != nil && ctxend.Ended(ctx) {
		st := stopped()
		r.Abandoned = !st.record
		if st.short {
			m.state.noteShort(st.given)
		}
		if st.reason != nil {
			r.TimedOut = true
			r.Err = fmt.Errorf("%w: %w", st.reason, err)
		}
	}
	r.SilentProbes = m.silentProbes(r)
	return r
}
