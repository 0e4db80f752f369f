package middleware_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// The status answer is rendered once per state: every change of the state
// must show in the next answer, in both formats, with the same headers.
func TestStatusAnswerFollowsEveryChange(t *testing.T) {
	var fail atomic.Bool
	checker := check.Func(func(context.Context) error {
		if fail.Load() {
			return errDown
		}
		return nil
	})
	m, srv := server(t, checker, middleware.Config{Mode: middleware.ModeProbe, FailureThreshold: 2})
	steps := []struct {
		fail       bool
		code       int
		text, json string
	}{
		{false, 200, "healthy\n", `"status": "pass"`},
		{true, 200, "healthy, but the last 1 check(s) failed: tunnel down\n", `"status": "warn"`},
		{true, 503, "unhealthy after 2 failed check(s): tunnel down\n", `"consecutiveFailures": 2`},
		{false, 200, "healthy\n", `"consecutiveFailures": 0`},
	}
	for i, step := range steps {
		fail.Store(step.fail)
		m.Probe(context.Background())
		for range 2 { // the second answer is the kept one
			text, js := get(t, srv.URL+"/"), get(t, srv.URL+"/?format=json")
			if text.code != step.code || text.body != step.text {
				t.Errorf("step %d text: %d %q, want %d %q", i, text.code, text.body, step.code, step.text)
			}
			if js.code != step.code || !strings.Contains(js.body, step.json) {
				t.Errorf("step %d JSON: %d %s, want %d with %s", i, js.code, js.body, step.code, step.json)
			}
			wantHeaders(t, text.header, "text/plain; charset=utf-8", "nosniff")
			wantHeaders(t, js.header, "application/health+json", "")
		}
	}
	head := do(t, http.MethodHead, srv.URL+"/?format=json")
	if head.code != 200 || head.body != "" {
		t.Errorf("HEAD: %d %q", head.code, head.body)
	}
	wantHeaders(t, head.header, "application/health+json", "")
}

// A failure cut short by its caller's deadline is not recorded, yet the
// status says so: a change of the state that wakes nobody must show too.
func TestStatusAnswerShowsUnrecordedFailures(t *testing.T) {
	blocked := make(chan struct{})
	t.Cleanup(func() { close(blocked) })
	checker := check.Func(func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-blocked:
			return nil
		}
	})
	_, srv := server(t, checker, middleware.Config{Mode: middleware.ModeProbe})
	if r := get(t, srv.URL+"/"); strings.Contains(r.body, "not recorded") {
		t.Fatalf("before: %q", r.body)
	}
	if r := get(t, srv.URL+"/check/?timeout=1ms"); r.code != 503 {
		t.Fatalf("/check/ with a short deadline: %d %q", r.code, r.body)
	}
	if r := get(t, srv.URL+"/"); !strings.Contains(r.body, "were not recorded") {
		t.Errorf("after an unrecorded failure: %q", r.body)
	}
}

// A loop stuck in a check that ignores its timeout changes nothing in the
// state, yet the state turns stale a Period past what the loop owed: the
// kept answer, read without a lock, must not outlive that.
func TestStatusAnswerTurnsStaleOnTheClock(t *testing.T) {
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
	h := r.m.StatusHandler()
	status := func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		return w
	}
	for range 2 { // the second answer is the kept one
		if w := status(); w.Code != 200 || w.Body.String() != "healthy\n" {
			t.Fatalf("at 5 s: %d %q", w.Code, w.Body.String())
		}
	}
	waitForTimers(t, r.clock, 1) // the stuck check's timeout
	r.clock.Advance(7*time.Second + time.Millisecond)
	if w := status(); w.Code != 503 || !strings.HasPrefix(w.Body.String(), "stale: ") {
		t.Errorf("at 12 s, a Period past due: %d %q, want stale", w.Code, w.Body.String())
	}
}

func wantHeaders(t *testing.T, h http.Header, contentType, sniff string) {
	t.Helper()
	if h.Get("Cache-Control") != "no-store" || h.Get("Content-Type") != contentType || h.Get("X-Content-Type-Options") != sniff {
		t.Errorf("headers %v, want Cache-Control no-store, Content-Type %q, X-Content-Type-Options %q", h, contentType, sniff)
	}
}

// The status endpoint answers a kept state without allocating, in both
// formats: what lets it keep up with the handler it sits in.
func TestStatusAnswersWithoutAllocating(t *testing.T) {
	m, err := middleware.New(failing(errors.New("down")), middleware.Config{Mode: middleware.ModeProbe})
	if err != nil {
		t.Fatal(err)
	}
	m.Probe(context.Background())
	h := m.StatusHandler()
	for _, path := range []string{"/", "/?format=json", "/?format=text"} {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		w := newDiscard()
		if n := testing.AllocsPerRun(1000, func() { h.ServeHTTP(w, req) }); n > 0 {
			t.Errorf("GET %s: %.1f allocations per request", path, n)
		}
	}
}
