package middleware

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

var errTCPDropped = errors.New("tls 10.0.0.1:443: handshake: i/o timeout")

// namedCheck is a check named as the built-in checks are.
type namedCheck struct {
	check.Func
	name string
}

func (c namedCheck) String() string { return c.name }

// A far side that answers the probes and drops what the users' traffic
// needs: the full check, run while the probes pass, fails checks after
// FullCheckFailures failures in a row, saying so, until it passes again.
func TestFullCheckFailsChecksTheProbesWouldPass(t *testing.T) {
	r := newProbeRig(t, Evidence{FullCheckPeriod: time.Minute})
	var fails atomic.Bool
	fails.Store(true)
	r.ev.full.checker = namedCheck{name: "tls 10.0.0.1:443", Func: func(context.Context) error {
		if fails.Load() {
			return errTCPDropped
		}
		return nil
	}}
	if got := r.ticks(6, true, 0, 0, 0); !strings.HasSuffix(got, "PPPP") {
		t.Fatalf("answered: %s", got)
	}
	r.ev.full.runOnce(context.Background())
	if got := r.ticks(2, true, 0, 0, 0); got != "PP" {
		t.Errorf("after one failed full check: %s, want PP: one failure may be the target's", got)
	}
	r.ev.full.runOnce(context.Background())
	v := r.tick(true, 0, 0, 0)
	if !errors.Is(v.err, ErrFullCheckFails) || !errors.Is(v.err, errTCPDropped) ||
		!strings.Contains(v.err.Error(), "the tunnel answers probes but tls 10.0.0.1:443 fails (2 full checks in a row") {
		t.Fatalf("after two: %+v, want the full check's failure, naming the check", v)
	}
	unnamed := r.ev.full.checker.(namedCheck).Func
	r.ev.full.checker = unnamed
	if v := r.ev.decide(); v.err == nil || !strings.Contains(v.err.Error(), "the tunnel answers probes but the active check fails") {
		t.Errorf("a check with no name: %v, want it called the active check", v.err)
	}
	r.ev.full.checker = namedCheck{name: "tls 10.0.0.1:443", Func: unnamed}
	// The probes alone still pass: the full check goes on running.
	if !r.ev.probesPass() {
		t.Error("probesPass is false: the full check would stop running and never clear")
	}
	fails.Store(false)
	r.ev.full.runOnce(context.Background())
	if got := r.ticks(2, true, 0, 0, 0); got != "PP" {
		t.Errorf("after a passing full check: %s, want PP", got)
	}
}

// The full check runs at once, then a period after the end of the last
// active check, whoever ran it, never beside another, and at once after a
// heal.
func TestFullCheckSchedule(t *testing.T) {
	r := newProbeRig(t, Evidence{FullCheckPeriod: time.Minute})
	f := r.ev.full
	runs := make(chan time.Time, 8)
	f.checker = check.Func(func(context.Context) error { runs <- r.clock.Now(); return nil })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	f.probesPass = func() bool { return true }
	go func() { defer close(done); f.run(ctx) }()
	defer func() { cancel(); <-done }()
	next := func() time.Time {
		t.Helper()
		select {
		case at := <-runs:
			return at
		case <-time.After(10 * time.Second):
			t.Fatal("no full check ran")
			return time.Time{}
		}
	}
	// waiting waits for the loop's timer, and for the timer of a full
	// check's timeout that ended the last run (n = 2): a fake clock's
	// context keeps its timer until it fires, cancelled or not.
	waiting := func(n int) {
		t.Helper()
		bctx, bcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer bcancel()
		if err := r.clock.BlockUntilContext(bctx, n); err != nil {
			t.Fatal("the full check's loop did not wait")
		}
	}
	t0 := r.clock.Now()
	if at := next(); !at.Equal(t0) {
		t.Errorf("first full check at %v, want at once", at.Sub(t0))
	}
	waiting(2)
	// An active check of a caller passes 20 s on: the next full check is
	// due a minute after it.
	r.clock.Advance(20 * time.Second)
	f.activeEnded(f.activeStarted(), r.clock.Now(), nil)
	r.clock.Advance(40 * time.Second) // the old due time: nothing runs
	waiting(1)
	select {
	case at := <-runs:
		t.Fatalf("a full check ran at %v, 40 s after an active check passed", at.Sub(t0))
	default:
	}
	r.clock.Advance(20 * time.Second)
	if at := next(); !at.Equal(t0.Add(80 * time.Second)) {
		t.Errorf("second full check at %v, want 80s", at.Sub(t0))
	}
	waiting(2)
	// While another active check runs, none starts beside it.
	tunnel := f.activeStarted()
	r.clock.Advance(2 * time.Minute)
	waiting(1)
	select {
	case at := <-runs:
		t.Fatalf("a full check ran at %v beside an active check", at.Sub(t0))
	default:
	}
	f.activeEnded(tunnel, r.clock.Now(), errTCPDropped)
	// A heal: the new tunnel is checked at once.
	f.forget()
	if at := next(); !at.Equal(r.clock.Now()) {
		t.Errorf("after a heal the full check ran at %v, want at once", at.Sub(t0))
	}
}

// A full check due when the monitor stops is not run: run returns rather
// than run checks whose outcome it drops, over and over.
func TestFullCheckStopsWhenDue(t *testing.T) {
	r := newProbeRig(t, Evidence{FullCheckPeriod: time.Minute})
	f := r.ev.full
	var calls atomic.Int32
	f.checker = check.Func(func(context.Context) error { calls.Add(1); return nil })
	f.probesPass = func() bool { return true }
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // stopped, with the first full check due at once
	done := make(chan struct{})
	go func() { defer close(done); f.run(ctx) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("run did not return once stopped (%d checks run)", calls.Load())
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d full checks ran after the stop", n)
	}
}

// A full check that ends after a heal checked the old tunnel: its failure
// counts against nothing, and the new tunnel's first full check is still
// due at once (issue 46: it was recorded on the new tunnel, and delayed
// its first full check by a period).
func TestFullCheckAcrossAHealIsTheOldTunnels(t *testing.T) {
	r := newProbeRig(t, Evidence{FullCheckPeriod: time.Minute})
	started, release := make(chan struct{}), make(chan struct{})
	r.ev.full.checker = check.Func(func(context.Context) error {
		close(started)
		<-release
		return errTCPDropped
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.ev.full.runOnce(context.Background())
	}()
	<-started
	r.ev.full.forget() // the heal, while the full check runs
	close(release)
	<-done
	if due := r.ev.full.due(); due.After(r.clock.Now()) {
		t.Errorf("the new tunnel's first full check is due at %v, want at once (%v)", due, r.clock.Now())
	}
	// The new tunnel's first full check fails: one failure, which fails
	// no check; with the old one's counted, two would.
	r.ev.full.checker = check.Func(func(context.Context) error { return errTCPDropped })
	r.ev.full.runOnce(context.Background())
	if v := r.ev.full.decide(r.clock.Now()); v.ok {
		t.Errorf("after one failed full check of the new tunnel: %+v, want nothing decided", v)
	}
	// Nor does a caller's active check begun before a heal and passed
	// after it stand for the new tunnel's full check.
	tunnel := r.ev.full.activeStarted()
	r.ev.full.forget()
	r.ev.full.activeEnded(tunnel, r.clock.Now(), nil)
	if due := r.ev.full.due(); due.After(r.clock.Now()) {
		t.Errorf("after a heal during a caller's active check, the full check is due at %v, want at once", due)
	}
}
