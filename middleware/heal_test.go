package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/preset"
)

// status asks m's status endpoint, as JSON when asJSON is set.
func status(t *testing.T, m *middleware.Monitor, asJSON bool) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	if asJSON {
		req.Header.Set("Accept", "application/json")
	}
	w := httptest.NewRecorder()
	m.StatusHandler().ServeHTTP(w, req)
	return w
}

// failUntilHeal is a loop that fails every check and heals 6 s into the
// unhealthy state (the reference back-off); heal is its heal function.
func failUntilHeal(t *testing.T, heal middleware.HealFunc, healStarted <-chan struct{}) *rig {
	t.Helper()
	cfg := preset.Reference()
	cfg.Timeouts = []time.Duration{time.Second}
	cfg.HealTimeout = 30 * time.Second
	cfg.Heal = heal
	r := newRig(t, cfg, func(int) error { return errDown })
	r.run()
	// Checks at 0 s, then every RetryWait (1 s): the one at 6 s heals.
	for range 6 {
		r.nextCall()
		r.wake()
	}
	r.nextCall()
	select {
	case <-healStarted:
	case <-time.After(hangGuard):
		t.Fatal("the loop did not heal")
	}
	return r
}

func TestHealThatHangsIsCutOffAtHealTimeout(t *testing.T) {
	started := make(chan struct{}, 1)
	r := failUntilHeal(t, func(ctx context.Context) error {
		started <- struct{}{}
		<-ctx.Done() // a VPN restart that never finishes, as `sleep 100000`
		return ctx.Err()
	}, started)

	// While it runs, the state says so, in the text and the JSON.
	s := r.m.Snapshot()
	if s.Healing == nil || s.Healing.Attempt != 1 || !s.Healing.Time.Equal(epoch.Add(6*time.Second)) {
		t.Fatalf("Healing = %+v, want attempt 1 since 6 s", s.Healing)
	}
	if w := status(t, r.m, false); !strings.Contains(w.Body.String(), "healing since 2026-01-01T00:00:06Z (attempt 1)") {
		t.Errorf("status %q does not name the heal", w.Body.String())
	}
	var body struct {
		Healing *struct {
			Since   string
			Attempt int
		}
	}
	if err := json.Unmarshal(status(t, r.m, true).Body.Bytes(), &body); err != nil || body.Healing == nil || body.Healing.Attempt != 1 {
		t.Errorf("JSON healing = %+v (%v)", body.Healing, err)
	}

	// The loop goes on checking, once a RetryWait, while the heal runs;
	// at 36 s the heal's context ends and it is reported as timed out.
	for at := 7; at <= 36; at++ {
		r.wake()
		if c := r.nextCall(); c.at != epoch.Add(time.Duration(at)*time.Second) {
			t.Fatalf("check at %v while healing, want %ds", c.at.Sub(epoch), at)
		}
	}
	select {
	case e := <-r.heals:
		if !errors.Is(e.Err, middleware.ErrHealTimeout) || e.Duration != 30*time.Second {
			t.Errorf("heal event %+v, want ErrHealTimeout after 30s", e)
		}
	case <-time.After(hangGuard):
		t.Fatal("the heal's timeout was not reported")
	}
	r.settle()
	if s := r.m.Snapshot(); s.Healing != nil || s.Stale {
		t.Errorf("after the heal: Healing %+v, Stale %v", s.Healing, s.Stale)
	}
}

// A heal that hangs must not freeze the state: the loop checks on while it
// runs, so a target that comes back and dies again during the heal reads
// 200, then 503 within the loop's schedule, not when the heal ends.
func TestHealDoesNotFreezeTheState(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	r := failUntilHeal(t, func(context.Context) error {
		started <- struct{}{}
		<-release // deaf to its context
		return nil
	}, started)
	t.Cleanup(func() { close(release) }) // before the rig stops the loop

	var up atomic.Bool
	r.outcome = func(context.Context, int) error {
		if up.Load() {
			return nil
		}
		return errDown
	}
	// The target comes back: an on-demand check passes, and so does the
	// loop's next check.
	up.Store(true)
	r.m.Probe(context.Background())
	r.nextCall()
	if w := status(t, r.m, false); w.Code != http.StatusOK {
		t.Fatalf("after a passing check: %d %q, want 200", w.Code, w.Body.String())
	}
	r.wake()
	r.nextCall()
	// The rig hears of a check before it reads up: settle first, which
	// returns once that check's pass is recorded and the loop sleeps.
	until, _ := r.settle()
	if want := epoch.Add(7*time.Second + middleware.DefaultPeriod); !until.Equal(want) {
		t.Errorf("next check at %v while healing, want %v", until.Sub(epoch), want.Sub(epoch))
	}
	// It goes away again: the loop's next check, a Period later, says so.
	up.Store(false)
	r.advanceTo(until)
	r.nextCall()
	until, _ = r.settle()
	w := status(t, r.m, false)
	if w.Code != http.StatusServiceUnavailable || !strings.HasPrefix(w.Body.String(), "unhealthy after 1 failed check(s)") ||
		!strings.Contains(w.Body.String(), "healing since 2026-01-01T00:00:06Z (attempt 1)") {
		t.Errorf("%d %q, want 503 unhealthy, healing since 6 s", w.Code, w.Body.String())
	}

	// Past its timeout the heal still runs, deaf to its context: the
	// status says so, the loop keeps the state fresh, and no second heal
	// starts beside it.
	for r.clock.Since(epoch) < 40*time.Second {
		r.advanceTo(until)
		r.nextCall()
		until, _ = r.settle()
	}
	w = status(t, r.m, false)
	if s := r.m.Snapshot(); s.Stale || !strings.Contains(w.Body.String(), "(attempt 1, 4s past its 30s timeout)") {
		t.Errorf("at 40 s: stale %v, %q; want fresh, naming the heal past its timeout", s.Stale, w.Body.String())
	}
	select {
	case h := <-r.healStarts:
		t.Errorf("a second heal started at %v beside the first", h.Time.Sub(epoch))
	default:
	}
}

func TestNoLoopNoStaleness(t *testing.T) {
	// Probe mode: nothing owes a result, however old the last one is.
	m, _, clock := fakeServer(t, passing(), middleware.Config{})
	m.Probe(context.Background())
	clock.Advance(24 * time.Hour)
	if s := m.Snapshot(); s.Stale || !s.DueBy.IsZero() {
		t.Errorf("probe mode: Stale %v, DueBy %v", s.Stale, s.DueBy)
	}
}

// Checks go on during a heal, so the state can pass and fail again while
// it runs: the new unhealthy spell starts the back-off over, but the next
// heal still comes no sooner than Initial (6 s) after the last one ended.
func TestHealBackoffCountsFromTheLastHealsEnd(t *testing.T) {
	cfg := preset.Reference()
	cfg.Timeouts = []time.Duration{time.Second}
	cfg.Period = time.Second
	gate := make(healGate)
	cfg.Heal = gate.heal
	var passAt atomic.Int64
	r := newRig(t, cfg, func(n int) error {
		if int64(n) == passAt.Load() {
			return nil
		}
		return errDown
	})
	r.run()
	// Checks at 0..6 s fail; the one at 6 s starts a heal.
	for {
		r.nextCall()
		until, healing := r.settle()
		if healing {
			r.advanceTo(until)
			break
		}
		r.advanceTo(until)
	}
	// At 7 s a check passes, at 8 s a new spell begins (since 8 s); the
	// heal ends at 10 s.
	passAt.Store(r.n.Load() + 1)
	for r.clock.Since(epoch) < 10*time.Second {
		r.nextCall()
		until, _ := r.settle()
		r.advanceTo(until)
	}
	r.nextCall()
	r.settle()
	if e := r.endHeal(gate, nil); e.Time != epoch.Add(6*time.Second) {
		t.Fatalf("heal at %v, want 6s", e.Time.Sub(epoch))
	}
	healEnd := r.clock.Now()
	for {
		r.nextCall()
		until, healing := r.settle()
		if healing {
			if at := r.clock.Now(); at.Sub(healEnd) < 6*time.Second {
				t.Errorf("the next heal %v after the last one ended, want 6s at least", at.Sub(healEnd))
			}
			return
		}
		r.advanceTo(until)
	}
}
