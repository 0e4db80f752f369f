package middleware

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/internal/ctxend"
	"github.com/tunnelprobe/tunnelprobe/internal/safely"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// ErrFullCheckFails is wrapped by the error of a check failed because the
// active check kept failing while the light probes were answered: the
// tunnel carries the probes' small packets, but not what the users'
// traffic needs (TCP dropped on the far side, an MTU black hole). The
// error names the check: "the tunnel answers probes but tls
// 10.0.0.1:443 fails", by its String when it has one (the built-in
// checks do), and "the active check" otherwise.
var ErrFullCheckFails = errors.New("the tunnel answers probes but")

// FullCheckFailures is how many full checks in a row must fail while the
// probes are answered before checks fail: one failure may be the target's
// own hiccup, two a minute apart are the tunnel.
const FullCheckFailures = 2

// fullCheck runs the monitor's active check every FullCheckPeriod while the
// light probes pass checks without it, so that a fault that spares the
// probes' small packets (a far side that drops TCP and answers ICMP, an MTU
// black hole) cannot go unseen for as long as it lasts.
type fullCheck struct {
	period   time.Duration
	interval time.Duration // how soon to look again while the probes do not pass
	timeout  time.Duration
	via      string
	checker  check.Checker
	clock    clockwork.Clock
	observer Observer
	// active counts the active checks the monitor runs now: the full check
	// never runs beside another.
	active atomic.Int32
	// wake wakes run when a heal made a full check due at once.
	wake chan struct{}
	// probesPass reports whether the light probes alone pass checks now:
	// only then does a full check run.
	probesPass func() bool

	mu sync.Mutex
	// lastEnd is when the latest active check ended, full or not; zero
	// before the first: the first full check runs at once.
	lastEnd time.Time
	// failures counts the full checks in a row that failed while the
	// probes passed; lastErr is the latest one's error.
	failures int
	lastErr  error
	// tunnel counts forget's calls: a full check begun before one checked
	// the old tunnel.
	tunnel uint64
}

// newFullCheck returns the full check of checker in the monitor's mon,
// bounded by its check timeout (Timeouts[0]).
func newFullCheck(cfg Evidence, checker check.Checker, mon Config, observer Observer, probesPass func() bool) *fullCheck {
	return &fullCheck{period: cfg.FullCheckPeriod, interval: cfg.Interval, timeout: mon.Timeouts[0], via: mon.Via,
		checker: checker, clock: mon.Clock, observer: observer, wake: make(chan struct{}, 1), probesPass: probesPass}
}

// run runs the full check whenever one is due while the probes pass
// checks, until ctx ends.
func (f *fullCheck) run(ctx context.Context) {
	for ctx.Err() == nil {
		wait := f.interval
		if due := f.due(); f.probesPass() && f.active.Load() == 0 {
			if wait = f.clock.Until(due); wait <= 0 {
				f.runOnce(ctx)
				continue
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		case <-f.clock.After(wait):
		}
	}
}

// due returns when the next full check is due.
func (f *fullCheck) due() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lastEnd.IsZero() {
		return f.clock.Now()
	}
	return f.lastEnd.Add(f.period)
}

// runOnce runs the checker once, bounded by the check timeout, and records
// its result, unless a forget came while it ran.
func (f *fullCheck) runOnce(ctx context.Context) {
	f.active.Add(1)
	defer f.active.Add(-1)
	f.mu.Lock()
	tunnel := f.tunnel
	f.mu.Unlock()
	start := f.clock.Now()
	f.observer.CheckStarted(CheckStart{Source: SourceFull, Time: start, Timeout: f.timeout})
	checkCtx, cancel := clockwork.WithTimeout(ctx, f.clock, f.timeout)
	err := safely.Check(checkCtx, f.checker, check.ErrPanicked)
	timedOut := err != nil && ctxend.Ended(checkCtx)
	cancel()
	if ctxend.Ended(ctx) {
		return // shutting down: no outcome
	}
	r := Result{Source: SourceFull, Start: start, Duration: f.clock.Since(start), Err: err, TimedOut: timedOut, Via: f.via}
	if timedOut {
		r.Err = fmt.Errorf("timed out after %v: %w", f.timeout, err)
	}
	f.observer.CheckFinished(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tunnel != tunnel {
		return // the old tunnel's: the new one is checked at once
	}
	f.lastEnd = start.Add(r.Duration)
	if r.Err == nil {
		f.failures, f.lastErr = 0, nil
		return
	}
	f.failures++
	f.lastErr = r.Err
}

// activeStarted and activeEnded bracket an active check the monitor runs
// for a caller; a pass of it stands for a full check of the tunnel it
// began on (activeStarted's answer), not of one a heal made since.
func (f *fullCheck) activeStarted() (tunnel uint64) {
	f.active.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tunnel
}

func (f *fullCheck) activeEnded(tunnel uint64, end time.Time, err error) {
	f.active.Add(-1)
	if err != nil {
		return // run without the probes' pass: other rules decide
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tunnel != tunnel {
		return
	}
	f.lastEnd = maxTime(f.lastEnd, end)
	f.failures, f.lastErr = 0, nil
}

// forget forgets the full checks of the tunnel before a heal: the new one
// is checked at once.
func (f *fullCheck) forget() {
	f.mu.Lock()
	f.lastEnd, f.failures, f.lastErr = time.Time{}, 0, nil
	f.tunnel++
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default: // woken already
	}
}

// decide fails checks while FullCheckFailures full checks in a row failed,
// and decides nothing otherwise: a pass of the full check proves no more
// than the probes do.
func (f *fullCheck) decide(time.Time) verdict {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failures < FullCheckFailures {
		return verdict{}
	}
	return verdict{ok: true, proof: ProofFullCheck, err: fmt.Errorf("%w %s fails (%d full checks in a row, every %v): %w",
		ErrFullCheckFails, f.name(), f.failures, f.period, f.lastErr)}
}

// name is the checker's name, for the failure's text: its String, or "the
// active check" without one.
func (f *fullCheck) name() string {
	if s, ok := f.checker.(fmt.Stringer); ok {
		return s.String()
	}
	return "the active check"
}
