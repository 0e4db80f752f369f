package middleware

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"
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
}

func newLoop(m *Monitor) *loop {
	return &loop{m: m, cfg: &m.cfg, clock: m.cfg.Clock}
}

func (l *loop) run(ctx context.Context) {
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
				// gone quiet for two periods.
				if !l.sleepUntil(ctx, until, l.cfg.timeoutFor(l.failures)) {
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
		if ended(ctx) {
			return stop{} // shutting down
		}
		return stop{reason: fmt.Errorf("timed out after %v", timeout), record: true}
	})
}

// maybeHeal heals when the state is unhealthy and the back-off allows it.
func (l *loop) maybeHeal(ctx context.Context) {
	if l.cfg.Heal == nil {
		return
	}
	s := l.m.Snapshot()
	if s.Status != StatusUnhealthy {
		return
	}
	if !s.Since.Equal(l.unhealthySince) {
		l.unhealthySince = s.Since
		l.heals = 0
		l.nextHeal = s.Since.Add(l.cfg.HealBackoff.Initial)
	}
	now := l.clock.Now()
	if now.Before(l.nextHeal) {
		return
	}
	l.heals++
	err := l.heal(ctx, now)
	end := l.clock.Now()
	l.cfg.Observer.Healed(HealEvent{Time: now, Attempt: l.heals, Duration: end.Sub(now), Err: err})
	// A restarted tunnel starts the ladder over, as in the reference.
	l.failures = 0
	l.nextHeal = end.Add(l.cfg.HealBackoff.Initial + time.Duration(l.heals)*l.cfg.HealBackoff.Step)
}

// heal runs the heal function bounded by HealTimeout, and shows it in the
// state while it runs: a heal that hangs must not freeze the state unseen.
func (l *loop) heal(ctx context.Context, now time.Time) error {
	timeout := l.cfg.HealTimeout
	h := &HealStart{Time: now, Attempt: l.heals, Timeout: timeout}
	l.m.owe(now.Add(timeout))
	l.m.setHealing(h)
	defer l.m.setHealing(nil)
	l.cfg.Observer.HealStarted(*h)
	healCtx, cancel := clockwork.WithTimeout(ctx, l.clock, timeout)
	defer cancel()
	err := healSafely(healCtx, l.cfg.Heal)
	if ended(healCtx) && !ended(ctx) {
		if err == nil {
			err = errors.New("it returned only after its context ended")
		}
		err = fmt.Errorf("%w after %v: %w", ErrHealTimeout, timeout, err)
	}
	return err
}

// sleepUntil waits until t or until ctx ends; it reports whether ctx is
// still alive. The check that starts at t may take up to timeout.
func (l *loop) sleepUntil(ctx context.Context, t time.Time, timeout time.Duration) bool {
	d := t.Sub(l.clock.Now())
	if d <= 0 {
		return !ended(ctx)
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
	case <-ctx.Done():
		return false
	}
}

// healSafely calls heal, turning a panic into an error: a broken heal
// command must not stop the loop.
func healSafely(ctx context.Context, heal HealFunc) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("heal panicked: %v", p)
		}
	}()
	return heal(ctx)
}
