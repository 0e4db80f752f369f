package middleware_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// waitChangeAsync calls WaitChange from seen in a goroutine the test
// waits for, and delivers what it returned.
func waitChangeAsync(t *testing.T, m *middleware.Monitor, seen middleware.Snapshot) <-chan middleware.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	ch := make(chan middleware.Snapshot, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ch <- m.WaitChange(ctx, seen)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return ch
}

func receiveSnapshot(t *testing.T, ch <-chan middleware.Snapshot) middleware.Snapshot {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(hangGuard):
		t.Fatal("WaitChange did not return")
		return middleware.Snapshot{}
	}
}

// WaitChange follows the recorded state: a result that leaves the status
// as it was does not end the wait, one that changes it does.
func TestWaitChangeFollowsTheStatus(t *testing.T) {
	var up atomic.Bool
	up.Store(true)
	m, err := middleware.New(check.Func(func(context.Context) error {
		if up.Load() {
			return nil
		}
		return errDown
	}), middleware.Config{Mode: middleware.ModeProbe, Clock: clockwork.NewFakeClockAt(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Snapshot()
	for i, step := range []struct {
		up   bool
		want middleware.Status
	}{{true, middleware.StatusHealthy}, {false, middleware.StatusUnhealthy}, {true, middleware.StatusHealthy}} {
		changed := waitChangeAsync(t, m, s)
		if i > 0 {
			// A result that keeps the status: a WaitChange that returned
			// on it would return the old status.
			m.Probe(context.Background())
		}
		up.Store(step.up)
		m.Probe(context.Background())
		s = receiveSnapshot(t, changed)
		if s.Status != step.want {
			t.Fatalf("step %d: WaitChange returned %v, want %v", i, s.Status, step.want)
		}
	}

	// A context that ends returns the state as it is.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := m.WaitChange(ctx, s); got.Status != middleware.StatusHealthy {
		t.Errorf("after cancel: %v", got.Status)
	}
}

// stuckLoop returns a rig whose loop passed its check at 0 s and is, at
// 5 s, stuck in the next one, deaf to its timeout: it owes a result by 7 s
// and records nothing.
func stuckLoop(t *testing.T) *rig {
	t.Helper()
	release := make(chan struct{})
	cfg := middleware.Config{Timeouts: []time.Duration{2 * time.Second}, Period: 5 * time.Second}
	r := newRig(t, cfg, func(int) error { return nil })
	r.outcome = func(_ context.Context, n int) error {
		if n == 2 {
			<-release // deaf to its context
		}
		return nil
	}
	r.run()
	t.Cleanup(func() { close(release) }) // before the rig stops the loop
	r.nextCall()
	r.wake() // the pass at 0 s; the next check at 5 s owes its result by 7 s
	r.nextCall()
	return r
}

// A loop stuck in a check that ignores its timeout records nothing, yet the
// state goes Stale a Period past what the loop owed: WaitChange returns
// then, on the monitor's clock.
func TestWaitChangeSeesTheLoopGoStale(t *testing.T) {
	r := stuckLoop(t)
	s := r.m.Snapshot()
	if s.Status != middleware.StatusHealthy || s.Stale || !s.DueBy.Equal(epoch.Add(7*time.Second)) {
		t.Fatalf("at 5 s: %v, stale %v, due by %v", s.Status, s.Stale, s.DueBy.Sub(epoch))
	}
	changed := waitChangeAsync(t, r.m, s)
	waitForTimers(t, r.clock, 2) // the check's timeout and WaitChange's
	r.clock.Advance(7 * time.Second)
	select {
	case s := <-changed:
		t.Fatalf("at 12 s, exactly a Period past due: WaitChange returned stale %v", s.Stale)
	default:
	}
	r.clock.Advance(time.Millisecond)
	if s := receiveSnapshot(t, changed); !s.Stale || s.Status != middleware.StatusHealthy {
		t.Errorf("WaitChange returned %v, stale %v; want healthy and stale", s.Status, s.Stale)
	}
}
