package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// counters is a CounterSource a test sets.
type counters struct {
	mu  sync.Mutex
	c   middleware.Counters
	err error
}

func (s *counters) ReadCounters() (middleware.Counters, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c, s.err
}

func (s *counters) add(rx, tx uint64) {
	s.mu.Lock()
	s.c.RxBytes += rx
	s.c.TxBytes += tx
	s.mu.Unlock()
}

// TestCountersOnlyFailChecks runs a probe-mode monitor with traffic
// counters and no light probe: a busy tunnel's traffic proves nothing, so
// the active check runs; a tunnel sending into silence fails without it;
// every answer says which way it was decided.
func TestCountersOnlyFailChecks(t *testing.T) {
	clock := clockwork.NewFakeClock()
	src := &counters{}
	var active atomic.Int32
	checker := check.Func(func(context.Context) error { active.Add(1); return errors.New("dial timeout") })
	var observed []middleware.Result
	var mu sync.Mutex
	mon, err := middleware.New(checker, middleware.Config{
		Mode: middleware.ModeProbe, Clock: clock, Evidence: &middleware.Evidence{Source: src},
		Observer: middleware.ObserverFuncs{OnCheckFinished: func(r middleware.Result) {
			mu.Lock()
			observed = append(observed, r)
			mu.Unlock()
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// second lets a second pass in which the tunnel received rx and sent
	// tx bytes, then samples, as Run does every Interval.
	second := func(rx, tx uint64) {
		src.add(rx, tx)
		clock.Advance(time.Second)
		middleware.SampleEvidence(mon)
	}
	middleware.SampleEvidence(mon)
	get := func(path string) (int, string) {
		t.Helper()
		rec := httptest.NewRecorder()
		mon.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, strings.TrimSpace(rec.Body.String())
	}

	second(200_000, 100_000)
	second(200_000, 100_000)
	if code, body := get("/check/"); code != http.StatusServiceUnavailable || body != "fail: dial timeout" || active.Load() != 1 {
		t.Errorf("busy: %d %q, %d active checks; want the active check's answer", code, body, active.Load())
	}
	for range 5 { // the tunnel dies: it sends, nothing comes back
		second(0, 20_000)
	}
	code, body := get("/check/?format=json")
	var js struct {
		Checks map[string][]struct {
			Status, Output, DecidedBy string
		}
	}
	if err := json.Unmarshal([]byte(body), &js); err != nil {
		t.Fatal(err)
	}
	c := js.Checks["tunnel:connectivity"][0]
	if code != http.StatusServiceUnavailable || c.DecidedBy != "counters" || !strings.Contains(c.Output, "sending into silence: sent 100.00 kB in 4s") {
		t.Errorf("dead: %d %+v", code, c)
	}
	if n := active.Load(); n != 1 {
		t.Errorf("the active check ran %d times, want once", n)
	}

	// Counters that cannot be read decide nothing: the active check runs,
	// and every answer warns that the evidence is missing.
	setErr := func(err error) {
		src.mu.Lock()
		src.err = err
		src.mu.Unlock()
	}
	setErr(errors.New(`no interface "wg0" in this network namespace`))
	second(0, 0)
	code, body = get("/check/")
	if want := `fail: dial timeout; warning: evidence: no interface "wg0" in this network namespace`; code != http.StatusServiceUnavailable || body != want || active.Load() != 2 {
		t.Errorf("no counters: %d %q, %d active checks; want %q", code, body, active.Load(), want)
	}
	if _, ok, err := mon.TrafficCounters(); !ok || err == nil {
		t.Errorf("TrafficCounters: %v, %v; want the reading's error", ok, err)
	}
	if _, body := get("/?format=json"); !strings.Contains(body, `"tunnel:counters": [`) || !strings.Contains(body, `"status": "warn"`) {
		t.Errorf("status JSON without the counters' warning:\n%s", body)
	}
	// The interface appears, as a VPN's does after its sidecar started.
	setErr(nil)
	second(0, 0)
	if _, body := get("/"); strings.Contains(body, "warning") {
		t.Errorf("the warning outlived the interface's return: %q", body)
	}
	mu.Lock()
	defer mu.Unlock()
	var by []string
	for _, r := range observed {
		by = append(by, r.DecidedBy())
	}
	if strings.Join(by, ",") != "active,counters,active" {
		t.Errorf("observer saw %v", by)
	}
}

// probeRun runs a probe-mode monitor whose light probe answers while up is
// set and is refused at once otherwise (an ICMP unreachable), on a fake
// clock. step lets one Interval pass and waits for the probe it sent.
type probeRun struct {
	t      *testing.T
	clock  *clockwork.FakeClock
	mon    *middleware.Monitor
	up     atomic.Bool
	active atomic.Int32
	ended  chan middleware.LightProbeResult
	probes int // how many light probes the monitor sends each Interval
}

func newProbeRun(t *testing.T, ev middleware.Evidence) *probeRun {
	r := newRun(t)
	r.up.Store(true)
	ev.Interval = 500 * time.Millisecond // the tests step by it
	if ev.FullCheckPeriod == 0 {
		ev.FullCheckPeriod = -1 // the checks of callers only: they count active checks
	}
	ev.Probes = []middleware.LightProbe{{Kind: "icmp", Target: "10.64.0.1", Check: check.Func(func(context.Context) error {
		if r.up.Load() {
			return nil
		}
		return errors.New("icmp 10.64.0.1: echo reply: network is unreachable")
	})}}
	r.start(check.Func(func(context.Context) error { r.active.Add(1); return errors.New("tls: handshake timeout") }), ev)
	return r
}

func newRun(t *testing.T) *probeRun {
	return &probeRun{t: t, clock: clockwork.NewFakeClockAt(epoch), ended: make(chan middleware.LightProbeResult, 64)}
}

// start runs a probe-mode monitor of checker with ev (its check timeout
// 9 s) until the test ends, and waits for the first light probes' ends,
// sent at once.
func (r *probeRun) start(checker check.Checker, ev middleware.Evidence) {
	t := r.t
	mon, err := middleware.New(checker, middleware.Config{
		Mode: middleware.ModeProbe, Clock: r.clock, Evidence: &ev, Timeouts: middleware.Ladder{9 * time.Second},
		Observer: middleware.ObserverFuncs{OnLightProbe: func(p middleware.LightProbeResult) { r.ended <- p }},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.mon, r.probes = mon, len(ev.Probes)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mon.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	for range r.probes {
		r.wait()
	}
}

// ticks lets n Intervals pass, each time taking the end of every light
// probe sent.
func (r *probeRun) ticks(n int, interval time.Duration) {
	r.t.Helper()
	for range n {
		r.clock.Advance(interval)
		for range r.probes {
			r.wait()
		}
	}
}

// wait takes the next light probe's end.
func (r *probeRun) wait() middleware.LightProbeResult {
	r.t.Helper()
	select {
	case p := <-r.ended:
		return p
	case <-time.After(hangGuard):
		r.t.Fatal("no light probe ended")
		return middleware.LightProbeResult{}
	}
}

// step lets an Interval pass, and takes the probe sent then. The sender
// sets its timer before it sends a probe, so once a probe ended the timer
// is set.
func (r *probeRun) step(interval time.Duration) middleware.LightProbeResult {
	r.t.Helper()
	r.clock.Advance(interval)
	return r.wait()
}

func (r *probeRun) get(path string) (int, string) {
	r.t.Helper()
	rec := httptest.NewRecorder()
	r.mon.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, strings.TrimSpace(rec.Body.String())
}

// TestLightProbeDecidesChecks: Run sends the light probe every Interval; an
// answer passes a check at once without the active check, an error answer
// proves nothing, and a Window without an answer fails the check; the JSON
// says which probe, its round trip and its loss.
func TestLightProbeDecidesChecks(t *testing.T) {
	const interval = 500 * time.Millisecond
	r := newProbeRun(t, middleware.Evidence{})
	if code, body := r.get("/check/"); code != http.StatusOK || body != "pass (proof of life: icmp 10.64.0.1 answered 0s ago)" {
		t.Errorf("answered: %d %q", code, body)
	}
	r.step(interval)
	code, body := r.get("/check/?format=json")
	var js struct {
		Checks map[string][]struct {
			Status, Output, DecidedBy, ObservedUnit string
			ObservedValue                           *float64
		}
		LightProbes []struct {
			Kind, Target   string
			Sent, Answered int
		}
	}
	if err := json.Unmarshal([]byte(body), &js); err != nil {
		t.Fatal(err)
	}
	if code != http.StatusOK || js.Checks["tunnel:connectivity"][0].DecidedBy != "light-probe" || len(js.LightProbes) != 1 ||
		js.LightProbes[0].Kind != "icmp" || js.LightProbes[0].Target != "10.64.0.1" || js.LightProbes[0].Sent != 2 || js.LightProbes[0].Answered != 2 {
		t.Errorf("JSON %d %s", code, body)
	}
	if l := js.Checks["tunnel:probe-loss"]; len(l) != 1 || l[0].ObservedValue == nil || *l[0].ObservedValue != 0 || l[0].ObservedUnit != "%" {
		t.Errorf("loss %+v", l)
	}
	if rtt := js.Checks["tunnel:probe-rtt"]; len(rtt) != 1 || rtt[0].ObservedValue == nil || rtt[0].ObservedUnit != "ms" {
		t.Errorf("rtt %+v", rtt)
	}

	// The tunnel dies; its far side answers with ICMP unreachables at
	// once. Those prove nothing: a Window (3 s) after the first probe
	// that went unanswered the check fails, still without the active
	// check.
	r.up.Store(false)
	var last middleware.LightProbeResult
	for range 7 {
		last = r.step(interval)
	}
	if last.Err == nil {
		t.Fatal("an unreachable answered the probe")
	}
	code, body = r.get("/check/")
	if code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "fail: no proof of life: 7 icmp probe(s) to 10.64.0.1 sent over the last 3s, none answered") {
		t.Errorf("dead: %d %q", code, body)
	}
	if n := r.active.Load(); n != 0 {
		t.Errorf("the active check ran %d times while the probes decided", n)
	}
	if s := r.mon.LightProbeStats(); len(s) != 1 || s[0].Sent != 9 || s[0].Answered != 2 {
		t.Errorf("stats %+v", s)
	}
}

// TestEvidenceSampledByRun: Run samples the counters every Interval, in
// probe mode too.
func TestEvidenceSampledByRun(t *testing.T) {
	clock := clockwork.NewFakeClock()
	reads := make(chan struct{}, 16)
	src := middleware.CounterSourceFunc(func() (middleware.Counters, error) {
		reads <- struct{}{}
		return middleware.Counters{}, nil
	})
	mon, err := middleware.New(check.Func(func(context.Context) error { return nil }),
		middleware.Config{Mode: middleware.ModeProbe, Clock: clock, Evidence: &middleware.Evidence{Source: src, Interval: 500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mon.Run(ctx) }()
	<-reads // at once
	for range 3 {
		if err := clock.BlockUntilContext(ctx, 1); err != nil {
			t.Fatal(err)
		}
		clock.Advance(500 * time.Millisecond)
		<-reads
	}
	stop()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

// Several light probes, each to a target of its own: an answer from any
// passes; a target silent while another answers fails nothing and is
// reported; once every target is silent for a window, the check fails.
func TestSeveralLightProbesAnyAnswerIsProof(t *testing.T) {
	r := newRun(t)
	r.up.Store(true)
	ev := middleware.Evidence{Interval: 500 * time.Millisecond, FullCheckPeriod: -1, Probes: []middleware.LightProbe{
		{Kind: "icmp", Target: "1.1.1.1", Check: check.Func(func(context.Context) error {
			if r.up.Load() {
				return nil
			}
			return errors.New("icmp 1.1.1.1: echo reply: i/o timeout")
		})},
		{Kind: "icmp", Target: "9.9.9.9", Check: check.Func(func(context.Context) error {
			return errors.New("icmp 9.9.9.9: echo reply: i/o timeout")
		})},
	}}
	r.start(check.Func(func(context.Context) error { return errors.New("tls: handshake timeout") }), ev)
	r.ticks(8, ev.Interval)
	if code, body := r.get("/check/"); code != http.StatusOK || !strings.Contains(body, "icmp 1.1.1.1 answered") ||
		!strings.Contains(body, "light probe icmp 9.9.9.9 silent while icmp 1.1.1.1 answers: its silence fails nothing") {
		t.Errorf("one target silent, the other answering: %d %q", code, body)
	}
	if _, js := r.get("/?format=json"); strings.Count(js, `"target": "`) != 2 {
		t.Errorf("JSON does not list both targets:\n%s", js)
	}
	r.up.Store(false)
	r.ticks(8, ev.Interval)
	if code, body := r.get("/check/"); code != http.StatusServiceUnavailable || !strings.Contains(body, "no proof of life") {
		t.Errorf("both silent: %d %q, want a failure", code, body)
	}
}

// A light probe whose target never answers decides nothing: while the
// tunnel works the status says the probe proves nothing; once the active
// check fails it says why that took longer than the probe's window.
func TestQuietLightProbeSaysWhyTheActiveCheckDecided(t *testing.T) {
	r := newRun(t)
	r.up.Store(true)
	ev := middleware.Evidence{Interval: 500 * time.Millisecond, FullCheckPeriod: -1, Probes: []middleware.LightProbe{
		{Kind: "icmp", Target: "9.9.9.9", Check: check.Func(func(context.Context) error {
			return errors.New("icmp 9.9.9.9: echo reply: i/o timeout")
		})},
	}}
	r.start(check.Func(func(context.Context) error {
		if r.up.Load() {
			return nil
		}
		return errors.New("tls: connection refused")
	}), ev)
	r.ticks(8, ev.Interval)
	if code, body := r.get("/check/"); code != http.StatusOK ||
		!strings.Contains(body, "light probe silent while the tunnel works (the last check passed on active): icmp 9.9.9.9 proves nothing now") {
		t.Errorf("quiet target, working tunnel: %d %q", code, body)
	}
	r.up.Store(false)
	code, body := r.get("/check/")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "connection refused") ||
		!strings.Contains(body, "light probe icmp 9.9.9.9 silent, which decides nothing: the active check decided, which takes up to its 9s timeout where a target that answers fails a dead tunnel within the 3s window") {
		t.Errorf("quiet target, dead tunnel: %d %q, want the active check's failure and why it decided", code, body)
	}
}
