package middleware_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/preset"
)

var (
	errDown = errors.New("tunnel down")
	epoch   = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

// hangGuard bounds every wait in the monitor tests; it only fires when a
// test is broken, never to pace one.
const hangGuard = 10 * time.Second

type checkCall struct {
	source  middleware.Source
	at      time.Time
	timeout time.Duration // until the check's context deadline
}

// rig runs a Monitor's loop on a fake clock. The loop reports each timer it
// sets through the sleep hook; wake advances the clock to it, so the test
// walks the loop one iteration at a time with no real waiting.
type rig struct {
	t      *testing.T
	clock  *clockwork.FakeClock
	m      *middleware.Monitor
	calls  chan checkCall
	sleeps chan time.Time
	heals  chan middleware.HealEvent
	// healStarts receives each heal as it starts.
	healStarts chan middleware.HealStart
	n          atomic.Int64
	// outcome gives the n-th check's result (n from 1). Set it before run.
	outcome func(ctx context.Context, n int) error
}

// newRig builds a monitor whose check returns outcome(n) on its n-th call
// (from 1); r.outcome may replace it before run. It does not start the loop.
func newRig(t *testing.T, cfg middleware.Config, outcome func(n int) error) *rig {
	t.Helper()
	r := &rig{
		t:      t,
		clock:  clockwork.NewFakeClockAt(epoch),
		calls:  make(chan checkCall, 64),
		sleeps: make(chan time.Time, 8),
		heals:  make(chan middleware.HealEvent, 64),

		healStarts: make(chan middleware.HealStart, 64),
	}
	var source atomic.Int64
	cfg.Clock = r.clock
	cfg.Observer = middleware.ObserverFuncs{
		OnCheckStarted: func(s middleware.CheckStart) { source.Store(int64(s.Source)) },
		OnHealStarted:  func(h middleware.HealStart) { r.healStarts <- h },
		OnHealed:       func(e middleware.HealEvent) { r.heals <- e },
	}
	checker := check.Func(func(ctx context.Context) error {
		deadline, _ := ctx.Deadline()
		n := int(r.n.Add(1)) // counted before the test hears of the call
		r.calls <- checkCall{
			source:  middleware.Source(source.Load()),
			at:      r.clock.Now(),
			timeout: deadline.Sub(r.clock.Now()),
		}
		return r.outcome(ctx, n)
	})
	m, err := middleware.New(checker, cfg)
	if err != nil {
		t.Fatal(err)
	}
	middleware.SetSleepHook(m, func(until time.Time) { r.sleeps <- until })
	r.m = m
	r.outcome = func(_ context.Context, n int) error { return outcome(n) }
	return r
}

// run starts the loop; it is stopped and waited for at cleanup.
func (r *rig) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.m.Run(ctx) }()
	r.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			r.t.Errorf("Run returned %v", err)
		}
	})
}

func (r *rig) nextCall() checkCall {
	r.t.Helper()
	select {
	case c := <-r.calls:
		return c
	case <-time.After(hangGuard):
		r.t.Fatal("no check was run")
		return checkCall{}
	}
}

// wake waits for the loop to set its timer, advances the clock to it and
// returns how long after now the loop meant to wait.
func (r *rig) wake() time.Duration {
	r.t.Helper()
	select {
	case until := <-r.sleeps:
		d := until.Sub(r.clock.Now())
		r.clock.Advance(d)
		return d
	case <-time.After(hangGuard):
		r.t.Fatal("the loop did not wait")
		return 0
	}
}

// A healGate is a heal function that ends when the test says (endHeal),
// or when its context does.
type healGate chan error

func (g healGate) heal(ctx context.Context) error {
	select {
	case err := <-g:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// settle waits for the loop to wait for its next check, and returns when
// that wait ends and whether a heal started before it.
func (r *rig) settle() (until time.Time, healing bool) {
	r.t.Helper()
	until = r.nextSleep()
	select {
	case <-r.healStarts:
		return until, true
	default:
		return until, false
	}
}

// endHeal ends the running heal with err while the loop waits (after
// settle), so that the heal's end, not the timer, wakes the loop, which then
// checks at once; it returns the heal's event.
func (r *rig) endHeal(g healGate, err error) middleware.HealEvent {
	r.t.Helper()
	g <- err
	select {
	case e := <-r.heals:
		return e
	case <-time.After(hangGuard):
		r.t.Fatal("the heal's end was not reported")
		return middleware.HealEvent{}
	}
}

// step lets the loop go on after a check: when a heal started, it ends it
// with err and returns its event; otherwise it advances the clock to the
// end of the loop's wait.
func (r *rig) step(g healGate, err error) (middleware.HealEvent, bool) {
	r.t.Helper()
	until, healing := r.settle()
	if !healing {
		r.advanceTo(until)
		return middleware.HealEvent{}, false
	}
	return r.endHeal(g, err), true
}

func (r *rig) noHeal() {
	r.t.Helper()
	select {
	case e := <-r.heals:
		r.t.Fatalf("unexpected heal at %v", e.Time.Sub(epoch))
	default:
	}
}

func TestLoopLadderStepsUpPerFailureAndResetsOnPass(t *testing.T) {
	r := newRig(t, preset.Reference(), func(n int) error {
		if n <= 6 || n == 8 {
			return errDown
		}
		return nil
	})
	r.run()
	want := []time.Duration{2, 4, 6, 8, 10, 10, 10, 2}
	for i, w := range want {
		c := r.nextCall()
		if c.timeout != w*time.Second {
			t.Errorf("check %d: timeout %v, want %v", i+1, c.timeout, w*time.Second)
		}
		wait := r.wake()
		// The reference retries at once after a failure (bounded here by
		// RetryWait from the failed check's start, as it returned at once)
		// and waits the period after a pass.
		wantWait := middleware.DefaultRetryWait
		if i == 6 {
			wantWait = 5 * time.Second
		}
		if wait != wantWait {
			t.Errorf("after check %d: waited %v, want %v", i+1, wait, wantWait)
		}
	}
}

func TestLoopFailureThresholdAndStreakReset(t *testing.T) {
	cfg := middleware.Config{FailureThreshold: 3}
	// pass, fail, fail, pass, fail, fail, fail
	outcomes := []error{nil, errDown, errDown, nil, errDown, errDown, errDown}
	want := []struct {
		status   middleware.Status
		failures int
	}{
		{middleware.StatusHealthy, 0},
		{middleware.StatusHealthy, 1},
		{middleware.StatusHealthy, 2},
		{middleware.StatusHealthy, 0}, // one pass resets the streak
		{middleware.StatusHealthy, 1},
		{middleware.StatusHealthy, 2},
		{middleware.StatusUnhealthy, 3},
	}
	r := newRig(t, cfg, func(n int) error { return outcomes[min(n, len(outcomes))-1] })
	r.run()
	for i, w := range want {
		r.nextCall()
		until := r.nextSleep() // the result is recorded before the loop sleeps
		s := r.m.Snapshot()
		if s.Status != w.status || s.ConsecutiveFailures != w.failures {
			t.Errorf("after check %d: %v with %d failures, want %v with %d",
				i+1, s.Status, s.ConsecutiveFailures, w.status, w.failures)
		}
		r.advanceTo(until)
	}
}

func TestLoopHealBackoffFollowsReference(t *testing.T) {
	cfg := preset.Reference()
	cfg.Timeouts = []time.Duration{time.Second}
	gate := make(healGate)
	cfg.Heal = gate.heal
	var passAt atomic.Int64 // the check that passes, once set
	r := newRig(t, cfg, func(n int) error {
		if int64(n) == passAt.Load() {
			return nil
		}
		return errDown
	})
	r.run()

	// Unhealthy from the first failure at t=0: heals 6 s, then 11 s and
	// 16 s apart (t=6, 17, 33), each an attempt counted from 1, and a heal
	// error does not stop the loop.
	var heals []middleware.HealEvent
	for len(heals) < 3 {
		r.nextCall()
		if e, healed := r.step(gate, errors.New("vpn restart failed")); healed {
			heals = append(heals, e)
		}
	}
	for i, want := range []time.Duration{6, 17, 33} {
		if got := heals[i].Time.Sub(epoch); got != want*time.Second {
			t.Errorf("heal %d at %v, want %v", i+1, got, want*time.Second)
		}
		if heals[i].Attempt != i+1 || heals[i].Err == nil {
			t.Errorf("heal %d: attempt %d err %v", i+1, heals[i].Attempt, heals[i].Err)
		}
	}

	// A pass resets the back-off: the next unhealthy spell heals 6 s after
	// it starts.
	r.nextCall() // the check at once after the heal fails
	passAt.Store(r.n.Load() + 1)
	r.step(gate, nil)
	r.nextCall()
	r.wake()
	r.noHeal()
	spell := r.nextCall().at
	for {
		if e, healed := r.step(gate, nil); healed {
			if got := e.Time.Sub(spell); got != 6*time.Second || e.Attempt != 1 {
				t.Errorf("after a pass: heal attempt %d %v into the spell, want attempt 1 at 6s", e.Attempt, got)
			}
			return
		}
		r.nextCall()
	}
}

func TestLoopLadderRestartsAfterHeal(t *testing.T) {
	cfg := preset.Reference()
	gate := make(healGate)
	cfg.Heal = gate.heal
	r := newRig(t, cfg, func(int) error { return errDown })
	r.run()
	for {
		last := r.nextCall()
		if _, healed := r.step(gate, nil); !healed {
			continue
		}
		if last.timeout == 2*time.Second {
			t.Errorf("the heal came before the ladder stepped up")
		}
		if next := r.nextCall(); next.timeout != 2*time.Second {
			t.Errorf("first try after a heal: timeout %v, want 2s", next.timeout)
		}
		return
	}
}

func TestLoopTimeoutIsAFailureNamingTheTimeout(t *testing.T) {
	cfg := middleware.Config{Timeouts: []time.Duration{3 * time.Second}}
	r := newRig(t, cfg, nil)
	r.outcome = func(ctx context.Context, n int) error {
		<-ctx.Done() // a check that hangs until its deadline
		return ctx.Err()
	}
	r.run()
	r.nextCall()
	r.clock.Advance(3 * time.Second) // the check's deadline
	// The reference retries at once after a failure, so the next check
	// starts with no wait; the failure is recorded by then.
	if retry := r.nextCall(); retry.at != epoch.Add(3*time.Second) {
		t.Errorf("retry at %v, want at once (3s)", retry.at.Sub(epoch))
	}
	s := r.m.Snapshot()
	if s.Status != middleware.StatusUnhealthy {
		t.Fatalf("status %v after a timed-out check, want unhealthy", s.Status)
	}
	if !errors.Is(s.Last.Err, context.DeadlineExceeded) || !strings.Contains(s.Last.Err.Error(), "timed out after 3s") {
		t.Errorf("error %q: want a deadline error naming 3s", s.Last.Err)
	}
	if s.Last.Duration != 3*time.Second {
		t.Errorf("duration %v, want 3s", s.Last.Duration)
	}
}

// nextSleep returns the time the loop set its timer for, without advancing.
func (r *rig) nextSleep() time.Time {
	r.t.Helper()
	select {
	case until := <-r.sleeps:
		return until
	case <-time.After(hangGuard):
		r.t.Fatal("the loop did not wait")
		return time.Time{}
	}
}

func (r *rig) advanceTo(t time.Time) { r.clock.Advance(t.Sub(r.clock.Now())) }

func (r *rig) wantCall(source middleware.Source, at time.Time) {
	r.t.Helper()
	c := r.nextCall()
	if c.source != source || !c.at.Equal(at) {
		r.t.Errorf("check by %v at %v, want by %v at %v", c.source, c.at.Sub(epoch), source, at.Sub(epoch))
	}
}

func (r *rig) noCall() {
	r.t.Helper()
	select {
	case c := <-r.calls:
		r.t.Errorf("unexpected check by %v at %v", c.source, c.at.Sub(epoch))
	default:
	}
}

func TestAutoModeHandsOverInBothDirections(t *testing.T) {
	cfg := middleware.Config{Mode: middleware.ModeAuto, Period: 5 * time.Second}
	r := newRig(t, cfg, func(int) error { return errDown })
	r.run()
	t0 := epoch

	// No probe yet: the loop drives, and fails.
	r.wantCall(middleware.SourceLoop, t0)
	retry := r.nextSleep()

	// A probe arrives: from the loop's next turn on it stands down until
	// two periods after the last probe.
	r.m.Probe(context.Background())
	r.wantCall(middleware.SourceProbe, t0)
	r.advanceTo(retry)
	if until := r.nextSleep(); !until.Equal(t0.Add(10 * time.Second)) {
		t.Fatalf("loop stands down until %v, want 10s", until.Sub(epoch))
	}
	r.advanceTo(t0.Add(6 * time.Second))
	r.m.Probe(context.Background()) // probes keep coming once a period
	r.wantCall(middleware.SourceProbe, t0.Add(6*time.Second))
	if until := r.nextSleep(); !until.Equal(t0.Add(16 * time.Second)) {
		t.Fatalf("loop stands down until %v, want 16s", until.Sub(epoch))
	}
	r.advanceTo(t0.Add(10 * time.Second))
	r.noCall()

	// Probes stop: two periods after the last one the loop takes over.
	r.advanceTo(t0.Add(16 * time.Second))
	r.wantCall(middleware.SourceLoop, t0.Add(16*time.Second))
}

// Callers whose checks record their failures drive the checks in ModeAuto,
// but the heal stays on the loop's schedule: a client that calls /check/
// in a loop against a dead tunnel holds no heal back.
func TestAutoModeCallersCannotHoldBackAHeal(t *testing.T) {
	cfg := middleware.Config{
		Mode:        middleware.ModeAuto,
		Period:      5 * time.Second,
		Heal:        func(context.Context) error { return nil },
		HealBackoff: middleware.HealBackoff{Initial: 3 * time.Second, Step: time.Second},
	}
	r := newRig(t, cfg, func(int) error { return errDown })
	r.run()
	t0 := epoch
	r.wantCall(middleware.SourceLoop, t0) // unhealthy from t0: a heal is due at 3s
	retry := r.nextSleep()
	r.m.Probe(context.Background())
	r.wantCall(middleware.SourceProbe, t0)
	r.advanceTo(retry)
	if until := r.nextSleep(); !until.Equal(t0.Add(3 * time.Second)) {
		t.Fatalf("loop stands down until %v, want the heal's time, 3s", until.Sub(epoch))
	}
	r.advanceTo(t0.Add(3 * time.Second))
	select {
	case e := <-r.heals:
		if !e.Time.Equal(t0.Add(3 * time.Second)) {
			t.Errorf("heal at %v, want 3s", e.Time.Sub(epoch))
		}
	case <-time.After(hangGuard):
		t.Fatal("no heal while callers' checks recorded the tunnel down")
	}
	r.noCall() // the callers still drive the checks
}

func TestProbeModeRunsNoLoop(t *testing.T) {
	r := newRig(t, middleware.Config{Mode: middleware.ModeProbe}, func(int) error { return nil })
	r.run()
	if s := r.m.Snapshot(); s.Status != middleware.StatusUnknown || s.Last != nil {
		t.Fatalf("before any probe: %+v", s)
	}
	r.m.Probe(context.Background())
	r.wantCall(middleware.SourceProbe, epoch)
	r.clock.Advance(time.Hour)
	r.noCall()
	select {
	case until := <-r.sleeps:
		t.Errorf("probe mode set a loop timer until %v", until.Sub(epoch))
	default:
	}
	if s := r.m.Snapshot(); s.Status != middleware.StatusHealthy || s.Last.Source != middleware.SourceProbe {
		t.Errorf("after a passing probe: %v from %v", s.Status, s.Last.Source)
	}
}

func TestLoopModeStillChecksOnDemand(t *testing.T) {
	r := newRig(t, middleware.Config{}, func(n int) error {
		if n == 2 {
			return errDown
		}
		return nil
	})
	r.run()
	r.wantCall(middleware.SourceLoop, epoch)
	r.nextSleep()
	res := r.m.Probe(context.Background())
	r.wantCall(middleware.SourceProbe, epoch)
	if !errors.Is(res.Err, errDown) || res.Source != middleware.SourceProbe {
		t.Errorf("on-demand result %+v", res)
	}
	// Loop and probe results feed one state.
	if s := r.m.Snapshot(); s.Status != middleware.StatusUnhealthy {
		t.Errorf("status %v after a failed probe, want unhealthy", s.Status)
	}
}
