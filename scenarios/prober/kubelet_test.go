package prober

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

var t0 = time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)

// fakeContainer is a Container on a fake clock. Restart starts a new
// container at once, unless hold is set: then it waits for a value on hold
// and starts a new one only if that value is true.
type fakeContainer struct {
	clock      *clockwork.FakeClock
	hold       chan bool
	restarting chan struct{} // if not nil, gets a value when Restart is called
	err        error

	mu       sync.Mutex
	n        int
	started  time.Time
	restarts []string // "at reason"
}

func newFakeContainer(clock *clockwork.FakeClock, started time.Time) *fakeContainer {
	return &fakeContainer{clock: clock, n: 1, started: started}
}

func (c *fakeContainer) ID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("c%d", c.n)
}

func (c *fakeContainer) StartedAt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started
}

func (c *fakeContainer) Restart(ctx context.Context, reason string) error {
	c.mu.Lock()
	c.restarts = append(c.restarts, fmt.Sprintf("%v %s", c.clock.Since(t0), reason))
	c.mu.Unlock()
	if c.restarting != nil {
		c.restarting <- struct{}{}
	}
	if c.err != nil {
		return c.err
	}
	newContainer := true
	if c.hold != nil {
		select {
		case newContainer = <-c.hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if newContainer {
		c.newContainer()
	}
	return nil
}

// newContainer replaces the container, as a restart does.
func (c *fakeContainer) newContainer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	c.started = c.clock.Now()
}

func (c *fakeContainer) Restarts() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.restarts)
}

// rig runs a Kubelet or a Docker prober on a fake clock with a scripted
// probe and records what it does.
type rig struct {
	t     *testing.T
	clock *clockwork.FakeClock
	c     *fakeContainer
	idle  chan struct{} // a value each time the worker waits for a tick

	// script gives the outcome of each probe in turn; Failure once it runs
	// out. block, if set, is called at the start of each probe.
	script []Outcome
	block  func(n int)

	mu        sync.Mutex
	calls     int
	probes    []Result
	decisions []Decision
}

func newRig(t *testing.T, script ...Outcome) *rig {
	clock := clockwork.NewFakeClockAt(t0)
	return &rig{
		t:      t,
		clock:  clock,
		c:      newFakeContainer(clock, t0),
		idle:   make(chan struct{}, 1000),
		script: script,
	}
}

func (h *rig) probe(ctx context.Context) Result {
	h.mu.Lock()
	n := h.calls
	h.calls++
	h.mu.Unlock()
	if h.block != nil {
		h.block(n)
	}
	o := Failure
	if n < len(h.script) {
		o = h.script[n]
	}
	return Result{Outcome: o, Code: map[Outcome]int{Success: 200, Warning: 302, Failure: 503}[o]}
}

func (h *rig) onProbe(r Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.probes = append(h.probes, r)
}

func (h *rig) onDecision(d Decision) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.decisions = append(h.decisions, d)
}

// kubelet returns a Kubelet wired to the rig, with the rig's scripted
// probe.
func (h *rig) kubelet(cfg KubeletConfig) *Kubelet {
	h.t.Helper()
	if cfg.URL == "" {
		cfg.URL = "http://probe.test/healthz"
	}
	k := h.realKubelet(cfg)
	k.probe = h.probe
	return k
}

// realKubelet returns a Kubelet wired to the rig that runs its real probe.
func (h *rig) realKubelet(cfg KubeletConfig) *Kubelet {
	h.t.Helper()
	cfg.Clock, cfg.OnProbe, cfg.OnDecision = h.clock, h.onProbe, h.onDecision
	k, err := NewKubelet(cfg, h.c)
	if err != nil {
		h.t.Fatal(err)
	}
	k.waiting = func() { h.idle <- struct{}{} }
	return k
}

// start runs run in a goroutine until the test ends, and returns a channel
// with its result.
func (h *rig) start(run func(context.Context) error) <-chan error {
	ctx, cancel := context.WithCancel(context.Background())
	done, exited := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(exited)
		done <- run(ctx)
	}()
	h.t.Cleanup(func() {
		cancel()
		<-exited
	})
	return done
}

// waitIdle waits until the worker waits for its next tick.
func (h *rig) waitIdle() {
	h.t.Helper()
	select {
	case <-h.idle:
	case <-time.After(10 * time.Second):
		h.t.Fatal("the worker never went idle")
	}
}

// advance moves the clock by d and waits until the worker is idle again.
func (h *rig) advance(d time.Duration) {
	h.t.Helper()
	h.clock.Advance(d)
	h.waitIdle()
}

// probeTimes returns when each probe started, relative to t0.
func (h *rig) probeTimes() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ts []time.Duration
	for _, p := range h.probes {
		ts = append(ts, p.Start.Sub(t0))
	}
	return ts
}

// decisionLog returns the decisions as "time kind" strings.
func (h *rig) decisionLog() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var s []string
	for _, d := range h.decisions {
		s = append(s, fmt.Sprintf("%v %s %s", d.Time.Sub(t0), d.ContainerID, d.Kind))
	}
	return s
}

func wantEqual[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\ngot  %v\nwant %v", what, got, want)
	}
}

func secs(n ...float64) []time.Duration {
	ds := make([]time.Duration, len(n))
	for i, s := range n {
		ds[i] = time.Duration(s * float64(time.Second))
	}
	return ds
}

// Defaults: timeoutSeconds 1, periodSeconds 10, successThreshold 1,
// failureThreshold 3, initialDelaySeconds 0.
func TestKubeletDefaults(t *testing.T) {
	t.Parallel()
	k, err := NewKubelet(KubeletConfig{URL: "http://x/"}, newFakeContainer(clockwork.NewFakeClock(), t0))
	if err != nil {
		t.Fatal(err)
	}
	c := k.cfg
	if c.Period != 10*time.Second || c.Timeout != time.Second || c.InitialDelay != 0 ||
		c.SuccessThreshold != 1 || c.FailureThreshold != 3 || c.Type != Liveness {
		t.Errorf("defaults: %+v", c)
	}
}

// successThreshold must be 1 for liveness and startup probes; errors name
// the field.
func TestKubeletConfigErrors(t *testing.T) {
	t.Parallel()
	c := newFakeContainer(clockwork.NewFakeClock(), t0)
	tests := []struct {
		cfg  KubeletConfig
		want string
	}{
		{KubeletConfig{URL: "http://x/", SuccessThreshold: 2}, "successThreshold must be 1 for liveness and startup"},
		{KubeletConfig{URL: "http://x/", Type: Startup, SuccessThreshold: 2}, "successThreshold must be 1"},
		{KubeletConfig{URL: "http://x/", Period: -time.Second}, "period"},
		{KubeletConfig{URL: "http://x/", Timeout: -time.Second}, "timeout"},
		{KubeletConfig{URL: "http://x/", InitialDelay: -time.Second}, "initialDelay"},
		{KubeletConfig{URL: "http://x/", FailureThreshold: -1}, "failureThreshold"},
		{KubeletConfig{URL: "ftp://x/"}, "url"},
		{KubeletConfig{}, "exactly one handler"},
		{KubeletConfig{URL: "http://x/", TCPSocket: "x:1"}, "exactly one handler"},
		{KubeletConfig{TCPSocket: "x:1", Exec: []string{"true"}}, "exactly one handler"},
		{KubeletConfig{TCPSocket: "x"}, "tcpSocket must be host:port"},
		{KubeletConfig{Exec: []string{""}}, "exec: the command is empty"},
	}
	for _, tt := range tests {
		if _, err := NewKubelet(tt.cfg, c); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewKubelet(%+v) = %v, want an error with %q", tt.cfg, err, tt.want)
		}
	}
	if _, err := NewKubelet(KubeletConfig{URL: "http://x/", Type: Readiness, SuccessThreshold: 2}, c); err != nil {
		t.Errorf("readiness with successThreshold 2: %v", err)
	}
	if _, err := NewKubelet(KubeletConfig{URL: "http://x/"}, nil); err == nil {
		t.Error("nil container accepted")
	}
}

// The first probe runs at once (the kubelet started long ago), then one on
// every tick of the period.
func TestKubeletProbesAtOnceThenEveryPeriod(t *testing.T) {
	t.Parallel()
	h := newRig(t, Success, Success, Success)
	k := h.kubelet(KubeletConfig{})
	h.start(k.Run)
	h.waitIdle()
	h.advance(10 * time.Second)
	h.advance(10 * time.Second)
	wantEqual(t, "probe times", h.probeTimes(), secs(0, 10, 20))
}

// A kubelet that started less than a period ago sleeps a random time in
// [0, period) before the first probe; the ticker starts after the sleep.
func TestKubeletInitialJitter(t *testing.T) {
	t.Parallel()
	h := newRig(t, Success, Success)
	want := time.Duration(rand.New(rand.NewPCG(1, 2)).Float64() * float64(10*time.Second))
	k := h.kubelet(KubeletConfig{
		KubeletStartedAt: t0.Add(-3 * time.Second),
		Rand:             rand.New(rand.NewPCG(1, 2)),
	})
	h.start(k.Run)
	if err := h.clock.BlockUntilContext(context.Background(), 1); err != nil { // the sleep's timer
		t.Fatal(err)
	}
	h.clock.Advance(want - time.Millisecond)
	if n := len(h.probeTimes()); n != 0 {
		t.Fatalf("%d probes before the sleep ended", n)
	}
	h.advance(time.Millisecond)
	h.advance(10 * time.Second)
	wantEqual(t, "probe times", h.probeTimes(), []time.Duration{want, want + 10*time.Second})

	// A kubelet that started a period ago or more probes at once.
	h2 := newRig(t, Success)
	k2 := h2.kubelet(KubeletConfig{KubeletStartedAt: t0.Add(-10 * time.Second), Rand: rand.New(rand.NewPCG(1, 2))})
	h2.start(k2.Run)
	h2.waitIdle()
	wantEqual(t, "probe times without jitter", h2.probeTimes(), secs(0))
}

// initialDelaySeconds is checked on ticks only, against the whole seconds
// since the container started: the first probe lands between delay and
// delay + period.
func TestKubeletInitialDelayOnTicks(t *testing.T) {
	t.Parallel()
	h := newRig(t, Success, Success)
	h.c.started = t0.Add(-400 * time.Millisecond)
	k := h.kubelet(KubeletConfig{InitialDelay: 15 * time.Second})
	h.start(k.Run)
	h.waitIdle()                // 0.4 s: skipped
	h.advance(10 * time.Second) // 10.4 s: skipped
	if n := len(h.probeTimes()); n != 0 {
		t.Fatalf("%d probes within the initial delay", n)
	}
	h.advance(10 * time.Second) // 20.4 s: probed
	wantEqual(t, "probe times", h.probeTimes(), secs(20))

	// Whole seconds: 9.7 s since the start counts as 9, below a 9.5 s delay.
	h2 := newRig(t, Success)
	h2.c.started = t0.Add(-9700 * time.Millisecond)
	k2 := h2.kubelet(KubeletConfig{InitialDelay: 9500 * time.Millisecond, Period: time.Second})
	h2.start(k2.Run)
	h2.waitIdle()
	h2.advance(time.Second)
	wantEqual(t, "probe times, whole seconds", h2.probeTimes(), secs(1))
}

// Probes never overlap; a tick that arrives during a probe is dropped, so a
// probe longer than the period is followed at once by the next one.
func TestKubeletNoOverlapDroppedTicks(t *testing.T) {
	t.Parallel()
	h := newRig(t, Success, Success, Success)
	entered, release := make(chan struct{}), make(chan struct{})
	var running, most atomic.Int32
	h.block = func(n int) {
		r := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); r > m && !most.CompareAndSwap(m, r); m = most.Load() {
		}
		if n == 0 {
			entered <- struct{}{}
			<-release
		}
	}
	k := h.kubelet(KubeletConfig{})
	h.start(k.Run)
	<-entered
	h.clock.Advance(25 * time.Second) // ticks at 10 s and 20 s: one kept, one dropped
	close(release)
	h.waitIdle()                     // after the long probe
	h.waitIdle()                     // after the next one, at once
	h.advance(5 * time.Second)       // the tick at 30 s
	h.clock.Advance(9 * time.Second) // no tick until 40 s
	wantEqual(t, "probe times", h.probeTimes(), secs(0, 25, 30))
	if got := h.probes[0].Duration; got != 25*time.Second {
		t.Errorf("long probe took %v, want 25s", got)
	}
	if most.Load() != 1 {
		t.Errorf("%d probes ran at once", most.Load())
	}
}

// The same result adds one to the count; a different one resets it to 1: one
// success among failures resets the failure streak.
func TestKubeletStreakCounting(t *testing.T) {
	t.Parallel()
	h := newRig(t, Failure, Failure, Success, Failure, Failure, Failure)
	k := h.kubelet(KubeletConfig{FailureThreshold: 3})
	h.start(k.Run)
	h.waitIdle()
	for range 5 {
		h.advance(10 * time.Second)
	}
	wantEqual(t, "decisions", h.decisionLog(), []string{"0s c1 live", "50s c1 restart"})
	wantEqual(t, "restarts", h.c.Restarts(), []string{"50s failed liveness probe, will be restarted"})
}

// The stored state changes only when the count reaches the threshold: a
// readiness probe with successThreshold 2 and failureThreshold 2. A new
// container starts not ready.
func TestKubeletThresholds(t *testing.T) {
	t.Parallel()
	h := newRig(t, Success, Failure, Success, Success, Success, Failure, Failure, Failure)
	k := h.kubelet(KubeletConfig{Type: Readiness, SuccessThreshold: 2, FailureThreshold: 2})
	h.start(k.Run)
	h.waitIdle()
	for range 7 {
		h.advance(10 * time.Second)
	}
	wantEqual(t, "decisions", h.decisionLog(), []string{"0s c1 not-ready", "30s c1 ready", "1m0s c1 not-ready"})
	if k.State() != Failure || k.Restarted() {
		t.Errorf("state %v, restarted %v; want failure, no restart", k.State(), k.Restarted())
	}
	if len(h.c.Restarts()) != 0 {
		t.Errorf("readiness restarted the container: %v", h.c.Restarts())
	}
}

// Initial results for a new container: readiness Failure, liveness Success,
// startup Unknown.
func TestKubeletInitialResults(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		typ  ProbeType
		want Outcome
		kind string
	}{{Readiness, Failure, DecisionNotReady}, {Liveness, Success, DecisionLive}, {Startup, Unknown, DecisionStarting}} {
		h := newRig(t)
		h.c.started = t0
		k := h.kubelet(KubeletConfig{Type: tt.typ, InitialDelay: time.Minute})
		if k.State() != Unknown {
			t.Errorf("%v: state %v before any container", tt.typ, k.State())
		}
		h.start(k.Run)
		h.waitIdle()
		if k.State() != tt.want {
			t.Errorf("%v: initial state %v, want %v", tt.typ, k.State(), tt.want)
		}
		wantEqual(t, tt.typ.String()+" decisions", h.decisionLog(), []string{"0s c1 " + tt.kind})
	}
}

// At the failure threshold the liveness worker restarts the container and
// holds, its count reset, until it sees a new container ID.
func TestKubeletLivenessRestartThenHold(t *testing.T) {
	t.Parallel()
	h := newRig(t, Failure, Failure, Failure, Failure)
	h.c.hold = make(chan bool)
	k := h.kubelet(KubeletConfig{FailureThreshold: 2})
	h.start(k.Run)
	h.waitIdle()
	h.clock.Advance(10 * time.Second) // second failure: restart
	h.c.hold <- false                 // the kill returns, but no new container yet
	h.waitIdle()
	h.advance(10 * time.Second) // 20 s: on hold
	h.advance(10 * time.Second) // 30 s: on hold
	wantEqual(t, "probe times while on hold", h.probeTimes(), secs(0, 10))

	h.c.newContainer()                // c2 shows up
	h.advance(10 * time.Second)       // 40 s: new container, probed
	h.clock.Advance(10 * time.Second) // 50 s: second failure of c2
	h.c.hold <- true
	h.waitIdle()
	wantEqual(t, "probe times", h.probeTimes(), secs(0, 10, 40, 50))
	// The count restarted with c2: one failure at 40 s did not restart it.
	wantEqual(t, "decisions", h.decisionLog(), []string{
		"0s c1 live", "10s c1 restart", "40s c2 live", "50s c2 restart",
	})
	if !k.Restarted() {
		t.Error("Restarted() = false")
	}
}

// Ticks that arrive while Restart runs are dropped: the new container's
// first probe lands on the first tick after it runs, not at once.
func TestKubeletRestartDropsStaleTick(t *testing.T) {
	t.Parallel()
	h := newRig(t, Failure, Success)
	h.c.hold = make(chan bool)
	h.c.restarting = make(chan struct{}, 1)
	k := h.kubelet(KubeletConfig{FailureThreshold: 1})
	h.start(k.Run)
	<-h.c.restarting                  // the failure at 0 s restarts
	h.clock.Advance(15 * time.Second) // the tick at 10 s waits in the ticker
	h.c.hold <- true                  // c2 runs from 15 s
	h.waitIdle()
	h.advance(5 * time.Second)
	wantEqual(t, "probe times", h.probeTimes(), secs(0, 20))
}

// A Restart that fails ends Run with its error.
func TestKubeletRestartError(t *testing.T) {
	t.Parallel()
	h := newRig(t, Failure)
	h.c.err = errors.New("kill failed")
	k := h.kubelet(KubeletConfig{FailureThreshold: 1})
	done := h.start(k.Run)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "kill failed") {
			t.Errorf("Run = %v, want the restart error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
}

// A startup probe that fails restarts the container ("failed startup probe,
// will be restarted"); once it passes it stops probing.
func TestKubeletStartup(t *testing.T) {
	t.Parallel()
	h := newRig(t, Failure, Failure, Success)
	k := h.kubelet(KubeletConfig{Type: Startup, FailureThreshold: 2})
	h.start(k.Run)
	h.waitIdle()
	h.advance(10 * time.Second) // restart, c2
	h.advance(10 * time.Second) // c2 passes
	h.advance(10 * time.Second) // started: no probe
	h.advance(10 * time.Second)
	wantEqual(t, "probe times", h.probeTimes(), secs(0, 10, 20))
	wantEqual(t, "restarts", h.c.Restarts(), []string{"10s failed startup probe, will be restarted"})
	wantEqual(t, "decisions", h.decisionLog(), []string{
		"0s c1 starting", "10s c1 restart", "20s c2 starting", "20s c2 started",
	})
}

// Liveness and readiness wait until the container counts as started.
func TestKubeletWaitsForStartup(t *testing.T) {
	t.Parallel()
	h := newRig(t, Success)
	var started atomic.Bool
	k := h.kubelet(KubeletConfig{Started: started.Load})
	h.start(k.Run)
	h.waitIdle()
	h.advance(10 * time.Second)
	started.Store(true)
	h.advance(10 * time.Second)
	wantEqual(t, "probe times", h.probeTimes(), secs(20))
}

// A probe that errs (Outcome Unknown) is run again at once, up to three
// attempts, and a result that never came is thrown away: the count does not
// move.
func TestKubeletProbeErrorsRetried(t *testing.T) {
	t.Parallel()
	h := newRig(t, Unknown, Unknown, Unknown, Unknown, Success)
	k := h.kubelet(KubeletConfig{Type: Readiness})
	h.start(k.Run)
	h.waitIdle()
	if k.State() != Failure {
		t.Errorf("state %v after three errors, want the initial failure", k.State())
	}
	h.advance(10 * time.Second)
	wantEqual(t, "probe times", h.probeTimes(), secs(0, 0, 0, 10, 10))
	wantEqual(t, "decisions", h.decisionLog(), []string{"0s c1 not-ready", "10s c1 ready"})
}

// A 3xx (Warning) counts as a success.
func TestKubeletWarningIsSuccess(t *testing.T) {
	t.Parallel()
	h := newRig(t, Warning)
	k := h.kubelet(KubeletConfig{Type: Readiness})
	h.start(k.Run)
	h.waitIdle()
	wantEqual(t, "decisions", h.decisionLog(), []string{"0s c1 not-ready", "0s c1 ready"})
}

// The worker probes a real endpoint with HTTPGet by default.
func TestKubeletHTTP(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	h := newRig(t)
	k := h.realKubelet(KubeletConfig{URL: srv.URL, Timeout: 5 * time.Second})
	h.start(k.Run)
	h.waitIdle()
	h.advance(10 * time.Second)
	h.advance(10 * time.Second)
	if hits.Load() != 3 {
		t.Errorf("%d requests, want 3", hits.Load())
	}
	wantEqual(t, "decisions", h.decisionLog(), []string{"0s c1 live", "20s c1 restart"})
	if p := h.probes[0]; p.Code != 503 || p.Outcome != Failure {
		t.Errorf("probe %+v, want a 503 failure", p)
	}
}

func TestProbeTypeText(t *testing.T) {
	for _, typ := range []ProbeType{Liveness, Readiness, Startup} {
		text, _ := typ.MarshalText()
		var back ProbeType
		if err := back.UnmarshalText(text); err != nil || back != typ {
			t.Errorf("%v reads back as %v, %v", typ, back, err)
		}
	}
	var typ ProbeType
	if err := typ.UnmarshalText([]byte("Readiness")); err != nil || typ != Readiness {
		t.Errorf("UnmarshalText(Readiness) = %v, %v: names read in any case", typ, err)
	}
	if err := typ.UnmarshalText([]byte("live")); err == nil || !strings.Contains(err.Error(), "want liveness, readiness or startup") {
		t.Errorf("UnmarshalText(live): %v", err)
	}
}

func TestResultString(t *testing.T) {
	for _, tc := range []struct {
		r    Result
		want string
	}{
		{Result{Start: t0, Duration: 1234567 * time.Nanosecond, Outcome: Success, Code: 200}, "12:00:00.000 probe success 200 1.23ms"},
		{Result{Start: t0.Add(5 * time.Millisecond), Duration: time.Second, Outcome: Failure, Err: errors.New("timeout")},
			"12:00:00.005 probe failure --- 1s: timeout"},
	} {
		if got := tc.r.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}
