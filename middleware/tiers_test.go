package middleware_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/preset"
)

// tierCall is one try of a tier's check, on the fake clock.
type tierCall struct {
	check   string        // "small" or "full"
	at      time.Duration // since epoch
	timeout time.Duration // until the try's deadline
}

// upstreamRig runs preset.Upstream on a fake clock. Each try of its
// small and full checks is sent to calls and returns what answer says:
// nil passes, errDown fails at once, errHang waits for the try's deadline,
// which the test reaches by advancing the clock.
type upstreamRig struct {
	*rig
	tries  chan tierCall
	answer atomic.Pointer[func(c tierCall) error]
	// gate ends the restarts (when heal is set).
	gate healGate
}

// answerWith makes the checks answer with f from their next try on.
func (u *upstreamRig) answerWith(f func(c tierCall) error) { u.answer.Store(&f) }

var errHang = errors.New("hang until the deadline")

func newUpstreamRig(t *testing.T, heal bool) *upstreamRig {
	u := &upstreamRig{tries: make(chan tierCall, 64), gate: make(healGate)}
	u.answerWith(func(tierCall) error { return nil })
	checker := func(name string) check.Checker {
		return check.Func(func(ctx context.Context) error {
			deadline, _ := ctx.Deadline()
			c := tierCall{check: name, at: u.clock.Since(epoch), timeout: deadline.Sub(u.clock.Now())}
			err := (*u.answer.Load())(c)
			u.tries <- c
			if errors.Is(err, errHang) {
				<-ctx.Done()
				return ctx.Err()
			}
			return err
		})
	}
	cfg := preset.Upstream(checker("small"), checker("full"))
	if heal {
		cfg.Heal = u.gate.heal
	}
	u.rig = newRig(t, cfg, func(int) error { return nil })
	return u
}

// expect takes the next n tries and checks they are of check, at at, with
// the timeouts given; for tries that hang it advances the clock through
// each timeout in turn.
func (u *upstreamRig) expect(check string, at time.Duration, timeouts middleware.Ladder, hang bool) {
	u.t.Helper()
	var got []time.Duration
	for i := range timeouts {
		select {
		case c := <-u.tries:
			if c.check != check || c.at != at {
				u.t.Fatalf("try %d: %s at %v, want %s at %v", i+1, c.check, c.at, check, at)
			}
			got = append(got, c.timeout)
			if hang {
				u.clock.Advance(c.timeout)
				at += c.timeout
			}
		case <-time.After(hangGuard):
			u.t.Fatalf("no try %d of %s at %v", i+1, check, at)
		}
	}
	if !slices.Equal(got, timeouts) {
		u.t.Errorf("%s at %v: tries with timeouts %v, want %v", check, at, got, timeouts)
	}
}

// The upstream schedule on a fake clock: when each tier runs, which try
// timeout applies, and when it restarts.
func TestUpstreamSchedule(t *testing.T) {
	u := newUpstreamRig(t, true)
	u.run()
	minute := time.Minute

	// The startup check (the full checks at once, 6 s for all), then the
	// small check each minute after the last one ended.
	u.expect("full", 0, preset.UpstreamStartupTries, false)
	for k := 1; k <= 4; k++ {
		if d := u.wake(); d != minute {
			t.Fatalf("waited %v before small check %d, want 1m", d, k)
		}
		u.expect("small", time.Duration(k)*minute, preset.UpstreamSmallTries[:1], false)
	}
	// At 5 minutes both are due: the small check first, then at once the
	// full one.
	u.wake()
	u.expect("small", 5*minute, preset.UpstreamSmallTries[:1], false)
	u.expect("full", 5*minute, preset.UpstreamFullTries[:1], false)

	// The small check fails: its 10 tries, each to its deadline, 120 s in
	// all.
	// The startup check after the restart waits for gate, so that the state
	// the failed run left can be read first.
	gate := make(chan struct{})
	u.answerWith(func(c tierCall) error {
		if c.check == "small" {
			return errHang
		}
		<-gate
		return nil
	})
	u.wake()
	if s := u.m.Snapshot(); s.Status != middleware.StatusHealthy {
		t.Fatalf("after passing checks: %v", s.Status)
	}
	u.expect("small", 6*minute, preset.UpstreamSmallTries, true)
	// The VPN restarts at once, and when the restart ends the schedule
	// starts over: the startup check, then the small check a minute later,
	// the full one 5 minutes later.
	if _, healing := u.settle(); !healing {
		t.Fatal("no restart after the small check failed")
	}
	s := u.m.Snapshot()
	if s.Status != middleware.StatusUnhealthy || !strings.Contains(s.Last.Err.Error(), "small: all 10 tries failed") {
		t.Errorf("after the failed small check: %v, %v", s.Status, s.Last.Err)
	}
	if s.Healing == nil || s.Healing.Time.Sub(epoch) != 8*minute {
		t.Errorf("Healing = %+v, want a restart since 8m0s, when the last try failed", s.Healing)
	}
	u.answerWith(func(tierCall) error { return nil })
	if e := u.endHeal(u.gate, nil); e.Time.Sub(epoch) != 8*minute {
		t.Errorf("restart at %v, want 8m0s", e.Time.Sub(epoch))
	}
	close(gate)
	// RetryWait after the failed run's start has long passed: at once.
	u.expect("full", 8*minute, preset.UpstreamStartupTries, false)
	u.wake()
	if s := u.m.Snapshot(); s.Status != middleware.StatusHealthy {
		t.Errorf("after the startup check passed: %v", s.Status)
	}
	u.expect("small", 9*minute, preset.UpstreamSmallTries[:1], false)

	// The full check fails at once, three times: a restart, then the
	// startup check no sooner than RetryWait after the failed run began.
	u.answerWith(func(c tierCall) error {
		if c.check == "full" {
			return errDown
		}
		return nil
	})
	for k := 2; k <= 5; k++ {
		u.wake()
		u.expect("small", time.Duration(8+k)*minute, preset.UpstreamSmallTries[:1], false)
	}
	// Due with the small check again: at once after it.
	u.expect("full", 13*minute, preset.UpstreamFullTries, false)
	u.answerWith(func(tierCall) error { return nil })
	if _, healed := u.step(u.gate, nil); !healed {
		t.Fatal("no restart after the full check failed")
	}
	if d := u.wake(); d != middleware.DefaultRetryWait {
		t.Errorf("startup check %v after the failed full check, want RetryWait", d)
	}
	u.expect("full", 13*minute+time.Second, preset.UpstreamStartupTries[:1], false)
	u.noHeal()
}

// Without a restart (Heal unset) a failed tier only turns the state
// unhealthy, and the schedule goes on.
func TestUpstreamWithoutRestartsGoesOn(t *testing.T) {
	u := newUpstreamRig(t, false)
	u.answerWith(func(tierCall) error { return errDown })
	u.run()
	u.expect("full", 0, preset.UpstreamStartupTries, false)
	if d := u.wake(); d != time.Minute {
		t.Errorf("small check %v after the failed startup, want 1m", d)
	}
	if s := u.m.Snapshot(); s.Status != middleware.StatusUnhealthy {
		t.Fatalf("after a failed startup check: %v", s.Status)
	}
	u.expect("small", time.Minute, preset.UpstreamSmallTries, false)
	u.answerWith(func(tierCall) error { return nil })
	u.wake()
	u.expect("small", 2*time.Minute, preset.UpstreamSmallTries[:1], false)
	u.wake()
	if s := u.m.Snapshot(); s.Status != middleware.StatusHealthy {
		t.Errorf("after a passing small check: %v", s.Status)
	}
	u.noHeal()
}

func TestTiersConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg     middleware.Config
		mention string
	}{
		{middleware.Config{Mode: middleware.ModeProbe, Tiers: []middleware.Tier{{}}}, "needs ModeLoop"},
		{middleware.Config{Tiers: []middleware.Tier{{Every: -time.Second}}}, "Tiers[0].Every"},
		{middleware.Config{Tiers: []middleware.Tier{{Tries: middleware.Ladder{0}}}}, "Tiers[0].Tries[0]"},
	} {
		if _, err := middleware.New(check.Func(nil), tc.cfg); err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("New with %+v: %v, want an error naming %q", tc.cfg.Tiers, err, tc.mention)
		}
	}
}
