package prom_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/prom"
)

// hangGuard bounds waits that only a bug makes long.
const hangGuard = 10 * time.Second

// setup returns a registry holding the metrics of a monitor of check.
func setup(t *testing.T, checker check.Checker, cfg middleware.Config, wrap func(*prom.Observer) middleware.Observer) (*prometheus.Registry, *prom.Observer, *middleware.Monitor) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	obs, err := prom.NewObserver(reg, prom.Opts{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Observer = obs
	if wrap != nil {
		cfg.Observer = wrap(obs)
	}
	mon, err := middleware.New(checker, cfg)
	if err != nil {
		t.Fatal(err)
	}
	reg.MustRegister(prom.NewCollector(mon, prom.Opts{}))
	return reg, obs, mon
}

// documented are the metric names doc.go lists.
var documented = []string{
	"tunnelprobe_checks_total",
	"tunnelprobe_check_duration_seconds",
	"tunnelprobe_checks_in_flight",
	"tunnelprobe_check_coalesced_total",
	"tunnelprobe_heals_total",
	"tunnelprobe_heal_duration_seconds",
	"tunnelprobe_state_changes_total",
	"tunnelprobe_state",
	"tunnelprobe_consecutive_failures",
	"tunnelprobe_state_since_timestamp_seconds",
	"tunnelprobe_last_check_timestamp_seconds",
	"tunnelprobe_mode",
	"tunnelprobe_stale",
	"tunnelprobe_heal_in_progress",
}

func TestMetricsAfterChecks(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Unix(1_700_000_000, 0))
	var failing atomic.Bool
	checker := check.Func(func(context.Context) error {
		clock.Advance(250 * time.Millisecond) // each check takes 250 ms of fake time
		if failing.Load() {
			return errors.New("tunnel down")
		}
		return nil
	})
	reg, _, mon := setup(t, checker, middleware.Config{Mode: middleware.ModeProbe, Clock: clock}, nil)

	// Before any check: the state is unknown, the mode known.
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP tunnelprobe_state The health state: 1 for the current one (unknown, healthy or unhealthy), 0 for the others.
# TYPE tunnelprobe_state gauge
tunnelprobe_state{state="healthy"} 0
tunnelprobe_state{state="unhealthy"} 0
tunnelprobe_state{state="unknown"} 1
# HELP tunnelprobe_mode Who drives the checks: 1 for the monitor's mode (loop, probe or auto), 0 for the others.
# TYPE tunnelprobe_mode gauge
tunnelprobe_mode{mode="auto"} 0
tunnelprobe_mode{mode="loop"} 0
tunnelprobe_mode{mode="probe"} 1
`), "tunnelprobe_state", "tunnelprobe_mode"); err != nil {
		t.Error(err)
	}

	ctx := context.Background()
	mon.Probe(ctx)
	mon.Probe(ctx)
	failing.Store(true)
	mon.Probe(ctx)
	mon.Probe(ctx)

	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP tunnelprobe_checks_total Checks run, by source (loop, probe, or full: the active check run while the light probes pass) and result (pass, fail, or abandoned when every caller left).
# TYPE tunnelprobe_checks_total counter
tunnelprobe_checks_total{result="abandoned",source="loop"} 0
tunnelprobe_checks_total{result="abandoned",source="probe"} 0
tunnelprobe_checks_total{result="fail",source="loop"} 0
tunnelprobe_checks_total{result="fail",source="probe"} 2
tunnelprobe_checks_total{result="pass",source="loop"} 0
tunnelprobe_checks_total{result="pass",source="probe"} 2
# HELP tunnelprobe_checks_in_flight Checks running now, by source.
# TYPE tunnelprobe_checks_in_flight gauge
tunnelprobe_checks_in_flight{source="loop"} 0
tunnelprobe_checks_in_flight{source="probe"} 0
# HELP tunnelprobe_state The health state: 1 for the current one (unknown, healthy or unhealthy), 0 for the others.
# TYPE tunnelprobe_state gauge
tunnelprobe_state{state="healthy"} 0
tunnelprobe_state{state="unhealthy"} 1
tunnelprobe_state{state="unknown"} 0
# HELP tunnelprobe_consecutive_failures Recorded failed checks since the last pass.
# TYPE tunnelprobe_consecutive_failures gauge
tunnelprobe_consecutive_failures 2
# HELP tunnelprobe_state_changes_total Changes of the health state, by the state changed to.
# TYPE tunnelprobe_state_changes_total counter
tunnelprobe_state_changes_total{to="healthy"} 1
tunnelprobe_state_changes_total{to="unhealthy"} 1
# HELP tunnelprobe_state_since_timestamp_seconds When the state last changed, as Unix time; absent while it never has.
# TYPE tunnelprobe_state_since_timestamp_seconds gauge
tunnelprobe_state_since_timestamp_seconds 1.70000000075e+09
# HELP tunnelprobe_last_check_timestamp_seconds When the last recorded check ended, as Unix time; absent before the first.
# TYPE tunnelprobe_last_check_timestamp_seconds gauge
tunnelprobe_last_check_timestamp_seconds 1.700000001e+09
`), "tunnelprobe_checks_total", "tunnelprobe_checks_in_flight", "tunnelprobe_state",
		"tunnelprobe_consecutive_failures", "tunnelprobe_state_changes_total",
		"tunnelprobe_state_since_timestamp_seconds", "tunnelprobe_last_check_timestamp_seconds"); err != nil {
		t.Error(err)
	}

	// The histogram: two passes and two failures of 250 ms each.
	h := histogram(t, reg, "tunnelprobe_check_duration_seconds", map[string]string{"source": "probe", "result": "fail"})
	if h.GetSampleCount() != 2 || h.GetSampleSum() != 0.5 {
		t.Errorf("fail durations: count %d, sum %v; want 2, 0.5", h.GetSampleCount(), h.GetSampleSum())
	}
	for _, b := range h.GetBucket() {
		want := uint64(0)
		if b.GetUpperBound() >= 0.25 {
			want = 2
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("bucket le=%v holds %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}

	// Every documented name is exposed, and named as Prometheus wants.
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	exposed := map[string]bool{}
	for _, mf := range mfs {
		exposed[mf.GetName()] = true
	}
	for _, name := range documented {
		if !exposed[name] {
			t.Errorf("%s is documented but not exposed", name)
		}
	}
	for name := range exposed {
		if !strings.HasPrefix(name, prom.Namespace+"_") {
			t.Errorf("%s lacks the %s_ prefix", name, prom.Namespace)
		}
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// histogram returns the histogram of the named family whose labels include
// labels.
func histogram(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) *dto.Histogram {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			return m.GetHistogram()
		}
	}
	t.Fatalf("no %s%v", name, labels)
	return nil
}

// signalling tells the test when a check has started and when a caller
// has joined it, after the metrics have counted them.
type signalling struct {
	*prom.Observer
	started, joined chan struct{}
}

func (s signalling) CheckStarted(c middleware.CheckStart) {
	s.Observer.CheckStarted(c)
	s.started <- struct{}{}
}

func (s signalling) CheckJoined(j middleware.CheckJoin) {
	s.Observer.CheckJoined(j)
	s.joined <- struct{}{}
}

func TestCoalescedAndInFlight(t *testing.T) {
	const callers = 50
	release := make(chan struct{})
	checker := check.Func(func(ctx context.Context) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	sig := signalling{started: make(chan struct{}, 1), joined: make(chan struct{}, callers)}
	reg, obs, mon := setup(t, checker, middleware.Config{Mode: middleware.ModeProbe}, func(o *prom.Observer) middleware.Observer {
		sig.Observer = o
		return sig
	})

	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			mon.Probe(ctx)
		})
	}
	timeout := time.After(hangGuard)
	for i := range callers {
		ch := sig.joined
		if i == 0 {
			ch = sig.started
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("only %d of %d callers arrived", i, callers)
		}
	}
	// Everyone waits on the one check.
	if got := testutil.ToFloat64(inFlight(obs, "probe")); got != 1 {
		t.Errorf("checks_in_flight{probe} = %v during the check, want 1", got)
	}
	close(release)
	wg.Wait()

	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP tunnelprobe_check_coalesced_total Check requests that joined a check already running instead of starting one.
# TYPE tunnelprobe_check_coalesced_total counter
tunnelprobe_check_coalesced_total 49
# HELP tunnelprobe_checks_in_flight Checks running now, by source.
# TYPE tunnelprobe_checks_in_flight gauge
tunnelprobe_checks_in_flight{source="loop"} 0
tunnelprobe_checks_in_flight{source="probe"} 0
`), "tunnelprobe_check_coalesced_total", "tunnelprobe_checks_in_flight"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(checksTotal(obs, "probe", "pass")); got != 1 {
		t.Errorf("checks_total{probe,pass} = %v, want 1 for %d callers", got, callers)
	}
}

// inFlight and checksTotal pick one series of the observer's metrics.
func inFlight(o *prom.Observer, source string) prometheus.Collector {
	return pick(o, "tunnelprobe_checks_in_flight", map[string]string{"source": source})
}

func checksTotal(o *prom.Observer, source, result string) prometheus.Collector {
	return pick(o, "tunnelprobe_checks_total", map[string]string{"source": source, "result": result})
}

// pick is a Collector of the one metric of c with the given name and labels.
func pick(c prometheus.Collector, name string, labels map[string]string) prometheus.Collector {
	return pickCollector{c, name, labels}
}

type pickCollector struct {
	c      prometheus.Collector
	name   string
	labels map[string]string
}

func (p pickCollector) Describe(ch chan<- *prometheus.Desc) { p.c.Describe(ch) }

func (p pickCollector) Collect(ch chan<- prometheus.Metric) {
	all := make(chan prometheus.Metric)
	go func() {
		p.c.Collect(all)
		close(all)
	}()
	for m := range all {
		if !strings.Contains(m.Desc().String(), `fqName: "`+p.name+`"`) {
			continue
		}
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			continue
		}
		match := true
		for _, lp := range d.GetLabel() {
			if v, ok := p.labels[lp.GetName()]; ok && v != lp.GetValue() {
				match = false
			}
		}
		if match {
			ch <- m
		}
	}
}

func TestAbandonedAndHeals(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	obs, err := prom.NewObserver(reg, prom.Opts{ConstLabels: prometheus.Labels{"tunnel": "wg0"}})
	if err != nil {
		t.Fatal(err)
	}
	obs.CheckStarted(middleware.CheckStart{Source: middleware.SourceProbe})
	obs.CheckFinished(middleware.Result{Source: middleware.SourceProbe, Duration: time.Second, Err: context.Canceled, Abandoned: true})
	obs.CheckStarted(middleware.CheckStart{Source: middleware.SourceLoop})
	obs.CheckFinished(middleware.Result{Source: middleware.SourceLoop, Duration: 3 * time.Second, Err: errors.New("timeout")})
	obs.Healed(middleware.HealEvent{Attempt: 1, Duration: 2 * time.Second})
	obs.Healed(middleware.HealEvent{Attempt: 2, Duration: time.Second, Err: errors.New("exit status 1")})

	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP tunnelprobe_checks_total Checks run, by source (loop, probe, or full: the active check run while the light probes pass) and result (pass, fail, or abandoned when every caller left).
# TYPE tunnelprobe_checks_total counter
tunnelprobe_checks_total{result="abandoned",source="loop",tunnel="wg0"} 0
tunnelprobe_checks_total{result="abandoned",source="probe",tunnel="wg0"} 1
tunnelprobe_checks_total{result="fail",source="loop",tunnel="wg0"} 1
tunnelprobe_checks_total{result="fail",source="probe",tunnel="wg0"} 0
tunnelprobe_checks_total{result="pass",source="loop",tunnel="wg0"} 0
tunnelprobe_checks_total{result="pass",source="probe",tunnel="wg0"} 0
# HELP tunnelprobe_heals_total Heal calls, by result (ok, error, or timeout when it ran into the heal timeout).
# TYPE tunnelprobe_heals_total counter
tunnelprobe_heals_total{result="error",tunnel="wg0"} 1
tunnelprobe_heals_total{result="ok",tunnel="wg0"} 1
tunnelprobe_heals_total{result="timeout",tunnel="wg0"} 0
# HELP tunnelprobe_heal_duration_seconds Duration of the heal calls.
# TYPE tunnelprobe_heal_duration_seconds histogram
tunnelprobe_heal_duration_seconds_bucket{tunnel="wg0",le="0.1"} 0
tunnelprobe_heal_duration_seconds_bucket{tunnel="wg0",le="0.5"} 0
tunnelprobe_heal_duration_seconds_bucket{tunnel="wg0",le="1"} 1
tunnelprobe_heal_duration_seconds_bucket{tunnel="wg0",le="2.5"} 2
tunnelprobe_heal_duration_seconds_bucket{tunnel="wg0",le="5"} 2
tunnelprobe_heal_duration_seconds_bucket{tunnel="wg0",le="10"} 2
tunnelprobe_heal_duration_seconds_bucket{tunnel="wg0",le="30"} 2
tunnelprobe_heal_duration_seconds_bucket{tunnel="wg0",le="60"} 2
tunnelprobe_heal_duration_seconds_bucket{tunnel="wg0",le="120"} 2
tunnelprobe_heal_duration_seconds_bucket{tunnel="wg0",le="+Inf"} 2
tunnelprobe_heal_duration_seconds_sum{tunnel="wg0"} 3
tunnelprobe_heal_duration_seconds_count{tunnel="wg0"} 2
`), "tunnelprobe_checks_total", "tunnelprobe_heals_total", "tunnelprobe_heal_duration_seconds"); err != nil {
		t.Error(err)
	}
}

func TestRegisteringTwiceFails(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := prom.NewObserver(reg, prom.Opts{}); err != nil {
		t.Fatal(err)
	}
	if _, err := prom.NewObserver(reg, prom.Opts{}); err == nil {
		t.Error("a second observer on one registry registered without error")
	}
}

// TestCountersReadable: the gauge says whether the evidence's counters can
// be read (an interface that does not exist cannot), and is absent
// without counters.
func TestCountersReadable(t *testing.T) {
	var readErr atomic.Pointer[error]
	src := middleware.CounterSourceFunc(func() (middleware.Counters, error) {
		if p := readErr.Load(); p != nil {
			return middleware.Counters{}, *p
		}
		return middleware.Counters{}, nil
	})
	noSuch := errors.New(`no interface "wg0" in this network namespace`)
	readErr.Store(&noSuch)
	clock := clockwork.NewFakeClock()
	pass := check.Func(func(context.Context) error { return nil })
	reg, _, mon := setup(t, pass, middleware.Config{Mode: middleware.ModeProbe, Clock: clock,
		Evidence: &middleware.Evidence{Source: src}}, nil)
	const name = "tunnelprobe_evidence_counters_readable"
	if n, err := testutil.GatherAndCount(reg, name); err != nil || n != 0 {
		t.Fatalf("%s before the first reading: %d series, %v; want none", name, n, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	done := make(chan error, 1)
	go func() { done <- mon.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	// Run reads at once, then waits an Interval on the clock.
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	want := func(v string) {
		t.Helper()
		exp := "# HELP " + name + " 1 when the last reading of the tunnel's traffic counters succeeded, 0 when it failed (no such interface, yet); absent without counters.\n# TYPE " + name + " gauge\n" + name + " " + v + "\n"
		if err := testutil.GatherAndCompare(reg, strings.NewReader(exp), name); err != nil {
			t.Error(err)
		}
	}
	want("0")
	readErr.Store(nil) // the interface appears
	clock.Advance(time.Second)
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	want("1")
}

// A check that delivered data decided is counted under proof="delivery",
// and a light probe whose target never answered reads as silent.
func TestDeliveryDecisionAndSilentProbe(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Unix(1_700_000_000, 0))
	reads := make(chan struct{}, 64)
	var acked atomic.Uint64
	ev := middleware.Evidence{
		Interval: 500 * time.Millisecond, FullCheckPeriod: -1,
		Delivery: middleware.DeliverySourceFunc(func() (middleware.Delivery, error) {
			defer func() { reads <- struct{}{} }()
			return middleware.Delivery{1: acked.Add(1000)}, nil
		}),
		Probes: []middleware.LightProbe{{Kind: "icmp", Target: "9.9.9.9", Check: check.Func(func(context.Context) error {
			return errors.New("icmp 9.9.9.9: echo reply: i/o timeout")
		})}},
	}
	reg, _, mon := setup(t, check.Func(func(context.Context) error { return errors.New("the active check ran") }),
		middleware.Config{Mode: middleware.ModeProbe, Clock: clock, Evidence: &ev, Timeouts: middleware.Ladder{9 * time.Second}}, nil)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mon.Run(ctx) }()
	defer func() { stop(); <-done }()
	// Two readings of the same socket, its count advanced. The delivery
	// sets the timer of its next reading only after the first is taken
	// in, and other timers can be set by then, so the clock moves a
	// second at a time until the second reading comes.
	select {
	case <-reads:
	case <-time.After(hangGuard):
		t.Fatal("the first reading of the delivery did not come")
	}
	for guard := time.After(hangGuard); ; {
		clock.Advance(time.Second)
		select {
		case <-reads:
		case <-time.After(50 * time.Millisecond):
			continue
		case <-guard:
			t.Fatal("the second reading of the delivery did not come")
		}
		break
	}
	if r := mon.Probe(ctx); !r.Passed() || r.Proof != middleware.ProofDelivery {
		t.Fatalf("check: %v decided by %q, want a pass on delivery", r.Err, r.Proof)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP tunnelprobe_evidence_decisions_total Checks that evidence decided without an active check, by source, proof (light-probe, delivery, counters, full-check) and result.
# TYPE tunnelprobe_evidence_decisions_total counter
tunnelprobe_evidence_decisions_total{proof="counters",result="fail",source="loop"} 0
tunnelprobe_evidence_decisions_total{proof="counters",result="fail",source="probe"} 0
tunnelprobe_evidence_decisions_total{proof="delivery",result="pass",source="loop"} 0
tunnelprobe_evidence_decisions_total{proof="delivery",result="pass",source="probe"} 1
tunnelprobe_evidence_decisions_total{proof="full-check",result="fail",source="loop"} 0
tunnelprobe_evidence_decisions_total{proof="full-check",result="fail",source="probe"} 0
tunnelprobe_evidence_decisions_total{proof="light-probe",result="fail",source="loop"} 0
tunnelprobe_evidence_decisions_total{proof="light-probe",result="fail",source="probe"} 0
tunnelprobe_evidence_decisions_total{proof="light-probe",result="pass",source="loop"} 0
tunnelprobe_evidence_decisions_total{proof="light-probe",result="pass",source="probe"} 0
# HELP tunnelprobe_light_probe_silent 1 while a light probe's target has not answered for a window (or since the tunnel's last restart): with the state healthy, a target silent while the tunnel works.
# TYPE tunnelprobe_light_probe_silent gauge
tunnelprobe_light_probe_silent{kind="icmp",target="9.9.9.9"} 1
`), "tunnelprobe_evidence_decisions_total", "tunnelprobe_light_probe_silent"); err != nil {
		t.Error(err)
	}
}
