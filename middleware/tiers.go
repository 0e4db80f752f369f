package middleware

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/internal/safely"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"

	"github.com/tunnelprobe/tunnelprobe/internal/ctxend"
)

// A Tier is one check of a tiered schedule (Config.Tiers): a cheap check
// often and a thorough one seldom, each retried with longer timeouts
// before it fails, as the upstream VPN client checks (see package middleware/preset).
type Tier struct {
	// Name names the tier in its errors: "startup", "small", "full".
	Name string
	// Check is what the tier runs; nil means the monitor's checker.
	Check check.Checker
	// Every is the wait from the end of one run of the tier to the start
	// of its next. Zero makes it a startup tier: it runs once when the
	// schedule starts, before the periodic tiers' first waits begin.
	Every time.Duration
	// Tries are the timeouts of one run's tries: Check is tried with each
	// in turn until a try passes; the run fails when every try has
	// failed. Empty means one try of DefaultTimeout.
	Tries Ladder
}

// tierCheck is one run of a tier, as a check: its tries in turn.
type tierCheck struct {
	tier  Tier
	clock clockwork.Clock
}

func (c tierCheck) Check(ctx context.Context) error {
	var fails []string
	for i, timeout := range c.tier.Tries {
		start := c.clock.Now()
		tryCtx, cancel := clockwork.WithTimeout(ctx, c.clock, timeout)
		err := safely.Check(tryCtx, c.tier.Check, check.ErrPanicked)
		cancel()
		if err == nil {
			return nil
		}
		if ctxend.Ended(ctx) {
			return err // shutting down
		}
		if ctxend.Ended(tryCtx) {
			err = fmt.Errorf("timed out after %v: %w", timeout, err)
		}
		fails = append(fails, fmt.Sprintf("try %d (%v): %v", i+1, c.clock.Since(start).Round(time.Millisecond), err))
	}
	return fmt.Errorf("%s: all %d tries failed: %s", c.tier.Name, len(fails), strings.Join(fails, "; "))
}

// runTiers is the loop of a tiered schedule: the startup tiers, then each
// periodic tier when it is due, one at a time, until ctx ends. A run that
// fails is recorded, and with Heal set starts a heal at once; the schedule
// goes on while the heal runs and starts over, startup tiers first, when
// it ends, as a restarted VPN does.
func (l *loop) runTiers(ctx context.Context) {
	defer l.m.owe(time.Time{})
	tiers := l.cfg.Tiers
	var notBefore time.Time // RetryWait after a failed run's start: a check that fails at once must not spin
	for {
		l.healEnded = false
		for _, t := range tiers {
			if t.Every > 0 {
				continue
			}
			if !l.sleepUntil(ctx, notBefore, t.Tries.Total()) {
				return
			}
			if l.healEnded {
				break
			}
			l.runTier(ctx, t, &notBefore)
			if ctxend.Ended(ctx) {
				return
			}
		}
		due := make([]time.Time, len(tiers))
		for i, t := range tiers {
			due[i] = l.clock.Now().Add(t.Every)
		}
		for !l.healEnded {
			next := -1
			for i, t := range tiers {
				if t.Every > 0 && (next < 0 || due[i].Before(due[next])) {
					next = i
				}
			}
			if next < 0 {
				// Startup tiers only: nothing more to run unless a heal
				// ends, and nothing owed meanwhile.
				l.m.owe(time.Time{})
				select {
				case e := <-l.healDone():
					l.finishHeal(e)
					continue
				case <-ctx.Done():
					return
				}
			}
			if !l.sleepUntil(ctx, maxTime(due[next], notBefore), tiers[next].Tries.Total()) {
				return
			}
			if l.healEnded {
				continue
			}
			l.runTier(ctx, tiers[next], &notBefore)
			if ctxend.Ended(ctx) {
				return
			}
			due[next] = l.clock.Now().Add(tiers[next].Every)
		}
	}
}

// runTier runs one tier and records its result; when it failed and the
// state is unhealthy, it starts a heal unless one runs. notBefore is moved
// RetryWait past the start of a failed run.
func (l *loop) runTier(ctx context.Context, t Tier, notBefore *time.Time) {
	if t.Check == nil {
		t.Check = l.m.checker
	}
	start := l.clock.Now()
	l.m.owe(start.Add(t.Tries.Total()))
	r := l.m.execute(ctx, SourceLoop, t.Tries.Total(), tierCheck{tier: t, clock: l.clock}, func() stop {
		return stop{} // ctx ended: shutting down
	})
	if r.Passed() {
		l.heals = 0 // a heal's Attempt counts from the last pass
	}
	if r.Passed() || ctxend.Ended(ctx) {
		return
	}
	*notBefore = start.Add(l.cfg.RetryWait)
	if l.cfg.Heal != nil && l.healing == nil && l.m.Snapshot().Status == StatusUnhealthy {
		l.startHeal(ctx, l.clock.Now())
	}
}

// checkTiers returns the tiers with their defaults, or the errors of the
// ones out of range.
func checkTiers(tiers []Tier, mode Mode) ([]Tier, error) {
	if len(tiers) == 0 {
		return nil, nil
	}
	if mode != ModeLoop {
		return nil, fmt.Errorf("%s: a tiered schedule is a loop: it needs ModeLoop, not %v", "Tiers", mode)
	}
	out := make([]Tier, len(tiers))
	var errs []error
	for i, t := range tiers {
		if t.Every < 0 {
			errs = append(errs, fmt.Errorf("Tiers[%d].Every: %v is negative", i, t.Every))
		}
		if len(t.Tries) == 0 {
			t.Tries = Ladder{DefaultTimeout}
		}
		for j, d := range t.Tries {
			if d <= 0 {
				errs = append(errs, fmt.Errorf("Tiers[%d].Tries[%d]: %v is not positive", i, j, d))
			}
		}
		if t.Name == "" {
			t.Name = fmt.Sprintf("tier %d", i+1)
		}
		out[i] = t
	}
	return out, errors.Join(errs...)
}
