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

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// expired is a caller whose deadline has passed already, as /check/?timeout=1ns.
func expired(t *testing.T) context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now())
	t.Cleanup(cancel)
	return ctx
}

func TestShortCallerDeadlinesDoNotMakeAWorkingTunnelUnhealthy(t *testing.T) {
	// A working tunnel whose check takes a round trip of 20 ms.
	working := check.Func(func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
			return nil
		}
	})
	m, err := middleware.New(working, middleware.Config{Mode: middleware.ModeProbe})
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Probe(context.Background()); !r.Passed() {
		t.Fatal(r.Err)
	}
	for range 10 {
		r := m.Probe(expired(t))
		if r.Passed() {
			t.Fatal("a check with no time passed")
		}
		if !strings.Contains(r.Err.Error(), "not recorded") && !strings.Contains(r.Err.Error(), "gave up") {
			t.Errorf("the short caller is told %q", r.Err)
		}
	}
	if s := m.Snapshot(); s.Status != middleware.StatusHealthy || s.ConsecutiveFailures != 0 {
		t.Errorf("after 10 callers with no time: %v with %d failures, want healthy with 0", s.Status, s.ConsecutiveFailures)
	}
}

func TestCachedTimeoutServesOnlyCallersWhoWouldNotWaitLonger(t *testing.T) {
	var runs atomic.Int64
	started := make(chan struct{}, 4)
	hang := check.Func(func(ctx context.Context) error {
		runs.Add(1)
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	// Once a check has started, its caller's deadline timer and the
	// check's MaxCheckTimeout timer are set: the clock may move.
	waitStarted := func() bool {
		select {
		case <-started:
			return true
		case <-time.After(hangGuard):
			return false
		}
	}
	m, srv, clock := fakeServer(t, hang, middleware.Config{
		Timeouts: []time.Duration{time.Second}, MinCheckInterval: 5 * time.Second, MaxCheckTimeout: 20 * time.Second,
	})
	// A caller with 2 s: a timeout after 2 s, recorded (over the 1 s floor).
	pending := getAsync(t, srv.URL+"/check/?timeout=2s")
	waitStarted()
	clock.Advance(2 * time.Second)
	if r := receive(t, pending); r.code != 503 || strings.Contains(r.body, "not recorded") {
		t.Fatalf("%d %q, want a recorded timeout", r.code, r.body)
	}
	if s := m.Snapshot(); !s.Last.TimedOut || s.Last.Duration != 2*time.Second {
		t.Fatalf("last result %+v, want a 2 s timeout", s.Last)
	}

	// Within the interval, a caller with no more patience gets it again,
	// as does a bare /check/, whose deadline is the 1 s check timeout...
	for _, q := range []string{"?timeout=1s", ""} {
		if r := get(t, srv.URL+"/check/"+q); r.code != 503 || runs.Load() != 1 {
			t.Errorf("%q: %d %q after %d runs, want the cached failure", q, r.code, r.body, runs.Load())
		}
	}
	// ...but one whose deadline would have let the check go on gets a
	// check of its own, up to MaxCheckTimeout.
	for _, tc := range []struct {
		q       string
		advance time.Duration // to its deadline: its own, or MaxCheckTimeout
	}{{"?timeout=9s", 9 * time.Second}, {"?timeout=1h", 20 * time.Second}} {
		q := tc.q
		pending = getAsync(t, srv.URL+"/check/"+q)
		if !waitStarted() {
			t.Fatalf("%q: served the cached timeout, want a new check: %+v", q, receive(t, pending))
		}
		clock.Advance(tc.advance)
		receive(t, pending)
	}
}

func TestCachedHardFailureServesEveryone(t *testing.T) {
	var runs atomic.Int64
	refused := check.Func(func(context.Context) error { runs.Add(1); return errors.New("connection refused") })
	_, srv, _ := fakeServer(t, refused, middleware.Config{MinCheckInterval: 5 * time.Second})
	for _, q := range []string{"", "?timeout=9s", "?timeout=1s"} {
		if r := get(t, srv.URL+"/check/"+q); r.code != 503 || !strings.Contains(r.body, "refused") {
			t.Errorf("%q: %d %q", q, r.code, r.body)
		}
	}
	if runs.Load() != 1 {
		t.Errorf("%d runs, want 1: a refusal says the same to every caller", runs.Load())
	}
}

func TestCallerDeadlineEqualToTheCheckTimeoutIsRecorded(t *testing.T) {
	// On the real clock a caller sets its deadline a few microseconds
	// before it asks, as /check/?timeout=9s behind serve --timeout 9s does:
	// the check was still given the check timeout.
	hang := check.Func(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	const timeout = 200 * time.Millisecond
	m, err := middleware.New(hang, middleware.Config{Mode: middleware.ModeProbe, Timeouts: []time.Duration{timeout}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if r := m.Probe(ctx); r.Abandoned || !r.TimedOut {
		t.Errorf("a caller that gave the check its timeout: %+v, want a recorded timeout", r)
	}
	if s := m.Snapshot(); s.Status != middleware.StatusUnhealthy {
		t.Errorf("state %v, want unhealthy", s.Status)
	}
}

// A bare /check/ takes the check timeout (Timeouts[0], serve's --timeout),
// not the most any check may take (MaxCheckTimeout): a check that outlasts
// it fails then, and is recorded.
func TestBareCheckTakesTheCheckTimeout(t *testing.T) {
	started := make(chan struct{}, 1)
	hang := check.Func(func(ctx context.Context) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	m, srv, clock := fakeServer(t, hang, middleware.Config{Timeouts: []time.Duration{9 * time.Second}, FailureThreshold: 1})
	pending := getAsync(t, srv.URL+"/check/")
	select {
	case <-started:
	case <-time.After(hangGuard):
		t.Fatal("the check did not start")
	}
	clock.Advance(9 * time.Second)
	if r := receive(t, pending); r.code != 503 || !strings.Contains(r.body, "timed out") {
		t.Errorf("bare /check/ after 9 s: %d %q, want a timeout", r.code, r.body)
	}
	if s := m.Snapshot(); s.Last == nil || s.Last.Duration != 9*time.Second || s.Status != middleware.StatusUnhealthy {
		t.Errorf("recorded %+v, %v; want the 9 s timeout, unhealthy", s.Last, s.Status)
	}
}

// A bare /check/ behind a router that gives every request a deadline of its
// own (chi's Timeout, http.TimeoutHandler) still takes the check timeout.
func TestBareCheckBehindARouterTimeout(t *testing.T) {
	started := make(chan struct{}, 1)
	hang := check.Func(func(ctx context.Context) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	clock := clockwork.NewFakeClockAt(epoch)
	m, err := middleware.New(hang, middleware.Config{Mode: middleware.ModeProbe, Clock: clock, Timeouts: []time.Duration{9 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	routerTimeout := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
			defer cancel()
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
	srv := httptest.NewServer(routerTimeout(m.Handler()))
	defer srv.Close()
	pending := getAsync(t, srv.URL+"/check/")
	select {
	case <-started:
	case <-time.After(hangGuard):
		t.Fatal("the check did not start")
	}
	if err := clock.BlockUntilContext(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(9 * time.Second)
	if r := receive(t, pending); r.code != 503 || !strings.Contains(r.body, "timed out") {
		t.Errorf("bare /check/ behind a 1-minute router timeout, after 9 s: %d %q, want a timeout", r.code, r.body)
	}
}
