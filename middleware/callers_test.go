package middleware_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// Callers of /check/ that never let a check finish must not stand the loop
// down in ModeAuto: with the tunnel dead, the loop's own checks go on, the
// state turns unhealthy and the heal runs, whatever those callers do.
func TestAutoModeCallersWhoseChecksDoNotFinishDriveNothing(t *testing.T) {
	leave := map[string]func(r *rig) context.Context{
		// curl -m 0.2 /check/: the caller hangs up before the check ends.
		"cancelled": func(r *rig) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			go func() { r.nextCall(); cancel() }()
			return ctx
		},
		// /check/?timeout=1ms: a deadline too short to say anything.
		"short deadline": func(r *rig) context.Context {
			ctx, cancel := clockwork.WithTimeout(context.Background(), r.clock, time.Millisecond)
			r.t.Cleanup(cancel)
			go func() { r.nextCall(); r.clock.Advance(time.Millisecond) }()
			return ctx
		},
	}
	for name, ctxFor := range leave {
		t.Run(name, func(t *testing.T) {
			cfg := middleware.Config{
				Mode:             middleware.ModeAuto,
				Period:           5 * time.Second,
				RetryWait:        time.Second,
				FailureThreshold: 1,
				// A heal that never ends: the loop's checks then come on
				// its timers only.
				Heal:        healGate(make(chan error)).heal,
				HealBackoff: middleware.HealBackoff{Initial: time.Second, Step: time.Second},
			}
			r := newRig(t, cfg, nil)
			probes := make(chan struct{}, 1)
			r.outcome = func(ctx context.Context, n int) error {
				switch {
				case n == 1:
					return nil // the tunnel worked at first
				case len(probes) > 0:
					<-probes
					<-ctx.Done() // the caller's check never finishes
					return ctx.Err()
				}
				return errDown
			}
			r.run()
			r.wantCall(middleware.SourceLoop, epoch)
			next := r.nextSleep()

			// Callers come before every turn of the loop and leave early.
			for range 3 {
				probes <- struct{}{}
				if res := r.m.Probe(ctxFor(r)); res.Err == nil {
					t.Fatalf("a check that did not finish passed: %+v", res)
				}
				r.advanceTo(next)
				c := r.nextCall()
				if c.source != middleware.SourceLoop || c.at.After(next) {
					t.Fatalf("check by %v at %v, want the loop's by %v: the callers stood it down",
						c.source, c.at.Sub(epoch), next.Sub(epoch))
				}
				next = r.nextSleep()
			}
			if s := r.m.Snapshot(); s.Status != middleware.StatusUnhealthy {
				t.Errorf("status %v with the tunnel dead, want unhealthy", s.Status)
			}
			select {
			case <-r.healStarts:
			case <-time.After(hangGuard):
				t.Fatal("no heal ran while the tunnel was dead")
			}
		})
	}
}

// In ModeProbe, a caller that leaves early must change neither what another
// caller with a deadline is told nor whether that caller's failure is
// recorded: each is told, and records, what it would alone.
func TestCallerWhoLeavesDoesNotHideAnotherCallersFailure(t *testing.T) {
	clock := clockwork.NewFakeClockAt(epoch)
	started := make(chan struct{}, 4)
	hang := check.Func(func(ctx context.Context) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	m, err := middleware.New(hang, middleware.Config{
		Mode: middleware.ModeProbe, Clock: clock, Timeouts: []time.Duration{2 * time.Second}, FailureThreshold: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	joined := make(chan struct{}, 4)
	middleware.SetJoinHook(m, func() { joined <- struct{}{} })

	// The first caller gives the check a minute and hangs up at 3.5 s
	// (curl -m 3.5 '/check/?timeout=1m'); the second gives it 3 s
	// (/check/?timeout=3s).
	minute, cancelMinute := clockwork.WithTimeout(context.Background(), clock, time.Minute)
	defer cancelMinute()
	hangUp, cancel := context.WithCancel(minute)
	first := make(chan middleware.Result, 1)
	go func() { first <- m.Probe(hangUp) }()
	<-joined
	<-started
	patient, cancelPatient := clockwork.WithTimeout(context.Background(), clock, 3*time.Second)
	defer cancelPatient()
	second := make(chan middleware.Result, 1)
	go func() { second <- m.Probe(patient) }()
	<-joined
	clock.Advance(3 * time.Second)
	r := <-second
	if r.Err == nil || !r.TimedOut || strings.Contains(r.Err.Error(), "gave up") || !errors.Is(r.Err, context.DeadlineExceeded) {
		t.Errorf("the caller whose 3 s deadline ended was told %+v, want the check's timeout", r)
	}
	s := m.Snapshot()
	if s.Last == nil || s.Last.Passed() || s.Status != middleware.StatusUnhealthy {
		t.Fatalf("after the 3 s deadline: status %v, last %+v; want the failure recorded", s.Status, s.Last)
	}
	clock.Advance(500 * time.Millisecond)
	cancel()
	if r := <-first; r.Err == nil || !errors.Is(r.Err, context.Canceled) {
		t.Errorf("the caller that hung up got %+v", r)
	}
	if after := m.Snapshot(); after.ConsecutiveFailures != 1 {
		t.Errorf("%d failures recorded, want 1: the one that hung up recorded one too", after.ConsecutiveFailures)
	}
}
