package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"
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
	cfg := middleware.Reference()
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

	r.clock.Advance(30 * time.Second)
	e := <-r.heals
	if !errors.Is(e.Err, middleware.ErrHealTimeout) || e.Duration != 30*time.Second {
		t.Errorf("heal event %+v, want ErrHealTimeout after 30s", e)
	}
	// The loop goes on checking, and the heal is over.
	c := r.nextCall()
	if c.at != epoch.Add(36*time.Second) {
		t.Errorf("next check at %v, want 36s", c.at.Sub(epoch))
	}
	if s := r.m.Snapshot(); s.Healing != nil || s.Stale {
		t.Errorf("after the heal: Healing %+v, Stale %v", s.Healing, s.Stale)
	}
}

func TestHealThatIgnoresItsContextMakesTheStateStale(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	r := failUntilHeal(t, func(context.Context) error {
		started <- struct{}{}
		<-release // deaf to its context
		return nil
	}, started)
	t.Cleanup(func() { close(release) }) // before the rig stops the loop

	// The loop owes a result by the end of the heal timeout (36 s) and is
	// given a period (5 s) more; a passing /check/ meanwhile does not make
	// a frozen loop's state healthy.
	r.outcome = func(context.Context, int) error { return nil }
	r.m.Probe(context.Background())
	r.clock.Advance(35 * time.Second)
	if s := r.m.Snapshot(); s.Stale || s.Status != middleware.StatusHealthy {
		t.Fatalf("at 41 s: stale %v, status %v; want fresh and healthy", s.Stale, s.Status)
	}
	if w := status(t, r.m, false); w.Code != http.StatusOK {
		t.Errorf("at 41 s: %d %q, want 200", w.Code, w.Body.String())
	}
	r.clock.Advance(time.Millisecond)
	s := r.m.Snapshot()
	if !s.Stale || !s.DueBy.Equal(epoch.Add(36*time.Second)) {
		t.Errorf("Stale %v, DueBy %v; want stale, due at 36 s", s.Stale, s.DueBy.Sub(epoch))
	}
	w := status(t, r.m, false)
	if w.Code != http.StatusServiceUnavailable || !strings.HasPrefix(w.Body.String(), "stale: the health loop owed a result by 2026-01-01T00:00:36Z and is 5s late") ||
		!strings.Contains(w.Body.String(), "healing since 2026-01-01T00:00:06Z") {
		t.Errorf("%d %q, want 503 stale, healing since 6 s", w.Code, w.Body.String())
	}
	var body struct {
		Status string
		Stale  bool
		DueBy  string
	}
	if err := json.Unmarshal(status(t, r.m, true).Body.Bytes(), &body); err != nil || body.Status != "fail" || !body.Stale || body.DueBy != "2026-01-01T00:00:36Z" {
		t.Errorf("JSON %+v (%v), want fail, stale, due at 36 s", body, err)
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
