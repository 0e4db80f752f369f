package middleware

import (
	"context"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/internal/ctxend"
)

// loop is one run of the health loop.
type loop struct {
	m     *Monitor
	cfg   *Config
	clock clockwork.Clock

	// failures counts the loop's consecutive failures since its last pass
	// or heal: the step on the timeout ladder.
	failures int
	// unhealthySince is the Since of the unhealthy state the heal schedule
	// belongs to; a new unhealthy spell starts the schedule over.
	unhealthySince time.Time
	heals          int
	nextHeal       time.Time
	// healing is the heal running beside the checks; nil when none is.
	healing *healRun
	// healEnded is set when a heal ends: the tiered schedule starts over.
	healEnded   bool
	lastHealEnd time.Time
}

func newLoop(m *Monitor) *loop {
	return &loop{m: m, cfg: &m.cfg, clock: m.cfg.Clock}
}

func (l *loop) run(ctx context.Context) {
	defer l.waitHeal()
	if len(l.cfg.Tiers) > 0 {
		l.runTiers(ctx)
		return
	}
	defer l.m.owe(time.Time{})
	for {
		if l.cfg.Mode == ModeAuto {
			if until, driving := l.m.probesDriving(); driving {
				// Probes drive the checks: checking here as well would run
				// two loops out of phase. Look again when they would have
				// gone quiet for two periods; heal meanwhile on the state
				// they record.
				if !l.standDown(ctx, until) {
					return
				}
				continue
			}
		}
		start := l.clock.Now()
		r := l.check(ctx)
		if ctx.Err() != nil {
			return
		}
		next := l.clock.Now().Add(l.cfg.Period)
		if !r.Passed() {
			l.failures++
			l.maybeHeal(ctx)
			// After the first failure the loop retries soon, also while
			// a heal runs: the state must follow the tunnel whatever
			// the heal is doing.
			next = start.Add(l.cfg.RetryWait)
		} else {
			l.failures = 0
		}
		if !l.sleepUntil(ctx, next, l.cfg.timeoutFor(l.failures)) {
			return
		}
	}
}

func (l *loop) check(ctx context.Context) Result {
	timeout := l.cfg.timeoutFor(l.failures)
	l.m.owe(l.clock.Now().Add(timeout))
	checkCtx, cancel := clockwork.WithTimeout(ctx, l.clock, timeout)
	defer cancel()
	return l.m.execute(checkCtx, SourceLoop, timeout, l.m.checker, func() stop {
		if ctxend.Ended(ctx) {
			return stop{} // shutting down
		}
		return stop{reason: fmt.Errorf("timed out after %v", timeout), record: true}
	})
}

// sleepUntil waits until t, until the running heal ends (the tunnel was
// just restarted: check it at once) or until ctx ends; it reports whether
// ctx is still alive. The check that starts at t may take up to timeout.
func (l *loop) sleepUntil(ctx context.Context, t time.Time, timeout time.Duration) bool {
	d := t.Sub(l.clock.Now())
	if l.pollHeal() || d <= 0 {
		return !ctxend.Ended(ctx)
	}
	// The next check starts at t and owes its result by the end of its
	// timeout.
	l.m.owe(t.Add(timeout))
	timer := l.clock.NewTimer(d)
	defer timer.Stop()
	if l.m.sleeping != nil {
		l.m.sleeping(t)
	}
	select {
	case <-timer.Chan():
		return true
	case e := <-l.healDone():
		l.finishHeal(e)
		return true
	case <-ctx.Done():
		return false
	}
}

// standDown waits while /check/ calls drive the checks (ModeAuto): until
// they would have gone quiet (until), the running heal ends or ctx ends.
// The heal stays the loop's: an unhealthy state the calls recorded is
// healed on the loop's schedule, so that no caller, whose checks record
// their results whatever they find, can hold a heal back. For that it also
// wakes when the state changes and when a heal falls due. It reports
// whether ctx is still alive.
func (l *loop) standDown(ctx context.Context, until time.Time) bool {
	if l.pollHeal() {
		return !ctxend.Ended(ctx)
	}
	l.m.owe(until.Add(l.cfg.timeoutFor(l.failures)))
	// Taken before the heal's look at the state (and after owe, which
	// wakes waiters): a record in between wakes this wait.
	_, changed := l.m.current()
	l.maybeHeal(ctx)
	wake := until
	if l.healing == nil && l.cfg.Heal != nil && l.m.Snapshot().Status == StatusUnhealthy {
		wake = minTime(wake, l.nextHeal)
	}
	d := wake.Sub(l.clock.Now())
	if d <= 0 {
		return !ctxend.Ended(ctx)
	}
	timer := l.clock.NewTimer(d)
	defer timer.Stop()
	if l.m.sleeping != nil {
		l.m.sleeping(wake)
	}
	select {
	case <-timer.Chan():
	case <-changed:
	case e := <-l.healDone():
		l.finishHeal(e)
	case <-ctx.Done():
		return false
	}
	return true
}
