package middleware

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/internal/safely"

	"github.com/tunnelprobe/tunnelprobe/internal/ctxend"
)

// errHealPanicked is wrapped by the error of a heal that panicked: a broken
// heal command must not stop the loop.
var errHealPanicked = errors.New("heal panicked")

// healRun is a heal the loop runs beside its checks. The loop starts it,
// goes on checking (so that a long or hung heal never leaves the state
// unchecked), and takes its end from done.
type healRun struct {
	HealStart
	// done receives the heal's end once; buffered, so that the heal's
	// goroutine never waits for a loop that is busy checking.
	done   chan healEnd
	cancel context.CancelFunc
}

// healEnd is when a heal returned, and its error.
type healEnd struct {
	at  time.Time
	err error
}

// maybeHeal starts a heal when the state is unhealthy, no heal runs and the
// back-off allows it.
func (l *loop) maybeHeal(ctx context.Context) {
	if l.cfg.Heal == nil || l.healing != nil {
		return
	}
	s := l.m.Snapshot()
	if s.Status != StatusUnhealthy {
		return
	}
	if !s.Since.Equal(l.unhealthySince) {
		// A new unhealthy spell starts the back-off over, but never sooner
		// than Initial after the last heal ended: with checks going on
		// during a heal, a spell may begin while one runs.
		l.unhealthySince = s.Since
		l.heals = 0
		l.nextHeal = s.Since.Add(l.cfg.HealBackoff.Initial)
		if !l.lastHealEnd.IsZero() {
			l.nextHeal = maxTime(l.nextHeal, l.lastHealEnd.Add(l.cfg.HealBackoff.Initial))
		}
	}
	if now := l.clock.Now(); !now.Before(l.nextHeal) {
		l.startHeal(ctx, now)
	}
}

// startHeal starts the heal function bounded by HealTimeout in a goroutine
// of its own, and shows it in the state while it runs.
func (l *loop) startHeal(ctx context.Context, now time.Time) {
	l.heals++
	timeout := l.cfg.HealTimeout
	h := &healRun{HealStart: HealStart{Time: now, Attempt: l.heals, Timeout: timeout}, done: make(chan healEnd, 1)}
	var healCtx context.Context
	healCtx, h.cancel = clockwork.WithTimeout(ctx, l.clock, timeout)
	l.healing = h
	l.m.setHealing(&h.HealStart)
	l.cfg.Observer.HealStarted(h.HealStart)
	go func() {
		err := safely.Call(healCtx, l.cfg.Heal, errHealPanicked)
		if ctxend.Ended(healCtx) && !ctxend.Ended(ctx) {
			if err == nil {
				err = errors.New("it returned only after its context ended")
			}
			err = fmt.Errorf("%w after %v: %w", ErrHealTimeout, timeout, err)
		}
		// The heal is over now, whatever the loop is busy with: the state
		// and the observer say so at once; the loop catches up (healDone).
		end := l.clock.Now()
		l.m.endHealing(&h.HealStart)
		l.cfg.Observer.Healed(HealEvent{Time: h.Time, Attempt: h.Attempt, Duration: end.Sub(h.Time), Err: err})
		h.done <- healEnd{at: end, err: err}
	}()
}

// healDone returns the channel on which the running heal ends; nil (which
// never receives) when none runs.
func (l *loop) healDone() <-chan healEnd {
	if l.healing == nil {
		return nil
	}
	return l.healing.done
}

// pollHeal takes the end of the running heal if it has ended, and reports
// whether it had.
func (l *loop) pollHeal() bool {
	select {
	case e := <-l.healDone():
		l.finishHeal(e)
		return true
	default:
		return false
	}
}

// finishHeal takes the end of the running heal and schedules the next.
func (l *loop) finishHeal(e healEnd) {
	l.healing.cancel()
	started := l.healing.Time
	l.healing = nil
	// A restarted tunnel starts the ladder over, as in the reference, and
	// a tiered schedule starts over; the restart's own loss says nothing
	// about the new tunnel.
	l.failures = 0
	l.healEnded = true
	l.lastHealEnd = e.at
	l.nextHeal = e.at.Add(l.cfg.HealBackoff.Initial + time.Duration(l.heals)*l.cfg.HealBackoff.Step)
	if ev := l.m.evidence; ev != nil {
		ev.newTunnel(started)
	}
}

// waitHeal waits for the running heal, if any, to end: the loop owns it.
// The loop's context has ended by then, and with it the heal's.
func (l *loop) waitHeal() {
	if l.healing != nil {
		l.finishHeal(<-l.healing.done)
	}
}
