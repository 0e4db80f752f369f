package middleware

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

var evidenceEpoch = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// fakeCounters is a CounterSource a test drives.
type fakeCounters struct {
	c   Counters
	err error
}

func (f *fakeCounters) ReadCounters() (Counters, error) { return f.c, f.err }

// evidenceRig decides on a fake clock from a fakeCounters it samples once
// a second and, with a probe, from light probes the test sends and ends
// itself.
type evidenceRig struct {
	t     *testing.T
	clock *clockwork.FakeClock
	src   *fakeCounters
	ev    *evidence
}

// newEvidenceRig builds the evidence of cfg with counters, and with a light
// probe when withProbe is set.
func newEvidenceRig(t *testing.T, cfg Evidence, withProbe bool) *evidenceRig {
	src := &fakeCounters{}
	cfg.Source = src
	if withProbe {
		cfg.Probes = []LightProbe{{Kind: probeICMP, Target: "10.0.0.1", Check: check.Func(func(context.Context) error { return nil })}}
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClockAt(evidenceEpoch)
	r := &evidenceRig{t: t, clock: clock, src: src, ev: newEvidence(cfg, check.Func(func(context.Context) error { return nil }), Config{Clock: clock, Timeouts: Ladder{time.Second}}, ObserverFuncs{})}
	r.ev.counters.sample()
	return r
}

// second lets one second pass, in which the tunnel received rx and sent tx
// bytes (one packet per 1,000 bytes begun), then samples.
func (r *evidenceRig) second(rx, tx uint64) verdict {
	r.clock.Advance(time.Second)
	r.src.c.RxBytes += rx
	r.src.c.TxBytes += tx
	r.src.c.RxPackets += (rx + 999) / 1000
	r.src.c.TxPackets += (tx + 999) / 1000
	r.ev.counters.sample()
	return r.ev.decide()
}

// seconds runs n seconds of the same traffic and returns every verdict.
func (r *evidenceRig) seconds(n int, rx, tx uint64) []verdict {
	out := make([]verdict, n)
	for i := range out {
		out[i] = r.second(rx, tx)
	}
	return out
}

// kinds writes verdicts as P (pass), F (fail), . (nothing decided).
func kinds(vs []verdict) string {
	var b strings.Builder
	for _, v := range vs {
		switch {
		case !v.ok:
			b.WriteByte('.')
		case v.err == nil:
			b.WriteByte('P')
		default:
			b.WriteByte('F')
		}
	}
	return b.String()
}

// What a tunnel receives never passes a check: a far side that cannot hear
// us keeps sending.
func TestCountersNeverPass(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rx, tx uint64
	}{
		{"busy both ways", 150_000, 90_000},
		{"download only: retransmissions into a tunnel whose uplink is dead", 1_000_000, 0},
		{"a one-way stream in", 200_000, 0},
		{"keepalives", 32, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newEvidenceRig(t, Evidence{}, false)
			if got := kinds(r.seconds(20, tc.rx, tc.tx)); strings.Contains(got, "P") {
				t.Errorf("%s", got)
			}
		})
	}
}

func TestCountersSilenceFailsAfterTheWindow(t *testing.T) {
	r := newEvidenceRig(t, Evidence{}, false)
	r.seconds(10, 100_000, 100_000) // busy, then the tunnel dies
	// Nothing decides until the first unanswered send is a window old,
	// then the silence fails.
	got := r.seconds(8, 0, 20_000)
	if want := "...FFFFF"; kinds(got) != want {
		t.Fatalf("dead tunnel: %s, want %s", kinds(got), want)
	}
	v := got[3]
	if !errors.Is(v.err, ErrSilentTunnel) || !strings.Contains(v.err.Error(), "sent 80 packets (80.00 kB) in 3s, received nothing") {
		t.Errorf("err %v", v.err)
	}
}

func TestCountersIdleTunnelDecidesNothing(t *testing.T) {
	r := newEvidenceRig(t, Evidence{}, false)
	if got := kinds(r.seconds(30, 0, 0)); got != strings.Repeat(".", 30) {
		t.Errorf("idle: %s", got)
	}
}

// Traps that must not fail a working tunnel on its counters.
func TestCountersTraps(t *testing.T) {
	t.Run("a lone lost packet", func(t *testing.T) {
		r := newEvidenceRig(t, Evidence{}, false)
		r.second(0, 1500)
		if got := kinds(r.seconds(60, 0, 0)); strings.Contains(got, "F") {
			t.Errorf("%s", got)
		}
	})
	t.Run("keepalives into an idle peer", func(t *testing.T) {
		r := newEvidenceRig(t, Evidence{}, false)
		var got string
		for range 12 { // five minutes of WireGuard keepalives, 32 bytes every 25 s
			got += kinds([]verdict{r.second(0, 32)}) + kinds(r.seconds(24, 0, 0))
		}
		if strings.Contains(got, "F") {
			t.Errorf("%s", got)
		}
	})
	t.Run("a queue shorter than the window", func(t *testing.T) {
		// An idle tunnel starts a transfer; the first reply comes after
		// 2 s of queueing delay, then replies keep coming.
		r := newEvidenceRig(t, Evidence{}, false)
		r.seconds(10, 0, 0)
		got := kinds(r.seconds(2, 0, 50_000)) + kinds(r.seconds(20, 5_000, 50_000))
		if strings.Contains(got, "F") {
			t.Errorf("%s", got)
		}
	})
	t.Run("upload with acknowledgements only", func(t *testing.T) {
		r := newEvidenceRig(t, Evidence{}, false)
		if got := kinds(r.seconds(20, 80, 1_000_000)); strings.Contains(got, "F") {
			t.Errorf("%s", got)
		}
	})
	t.Run("a device made anew", func(t *testing.T) {
		// A VPN restart recreates the interface: counters fall to zero.
		r := newEvidenceRig(t, Evidence{}, false)
		r.seconds(10, 100_000, 100_000)
		r.src.c = Counters{}
		got := kinds(r.seconds(2, 0, 10_000))
		if strings.Contains(got, "F") {
			t.Errorf("after a reset: %s", got)
		}
	})
}

// A gap in the samples (the interface went away and came back) starts the
// counters over: what was sent across the gap is not a silence they saw,
// and a silence needs a whole window after it.
func TestCountersGapStartsOver(t *testing.T) {
	r := newEvidenceRig(t, Evidence{}, false)
	r.seconds(5, 100_000, 100_000)
	r.src.err = errors.New("no interface wg0 in this network namespace")
	if got := kinds(r.seconds(20, 0, 50_000)); got != strings.Repeat(".", 20) {
		t.Fatalf("during the gap: %s", got)
	}
	r.src.err = nil
	// 1 MB went out across the gap and nothing came back: only a silence
	// seen for a whole window after the gap fails.
	if got := kinds(r.seconds(6, 0, 20_000)); got != "....FF" {
		t.Errorf("after the gap: %s, want ....FF", got)
	}
}

// A new tunnel on the same interface (a heal under OpenVPN's persist-tun)
// starts clean: the old tunnel's silence fails none of its checks (issue
// 46: the first check after a heal failed "sent 50 kB in 5.3 s"), and its
// own silence fails them a Window after it began.
func TestCountersNewTunnelForgetsTheOldSilence(t *testing.T) {
	r := newEvidenceRig(t, Evidence{}, false)
	r.seconds(5, 100_000, 100_000)
	if got := kinds(r.seconds(6, 0, 20_000)); !strings.HasSuffix(got, "F") {
		t.Fatalf("the old tunnel dead: %s", got)
	}
	r.ev.newTunnel(r.clock.Now())
	if v := r.ev.decide(); v.ok {
		t.Errorf("the first check after the heal: %+v, want nothing decided on the old tunnel's silence", v)
	}
	if c, ok, err := r.ev.counters.latest(); !ok || err != nil || c.TxBytes == 0 {
		t.Errorf("the status's counters after the heal: %+v, %v, %v; want the latest reading", c, ok, err)
	}
	if got := kinds(r.seconds(6, 0, 20_000)); got != "....FF" {
		t.Errorf("the new tunnel sending into silence: %s, want ....FF", got)
	}

	// A sample begun before a heal is the old tunnel's: it is no first
	// sample of the new one, whose silence starts with its own.
	src := r.ev.counters.cfg.Source
	r.ev.counters.cfg.Source = CounterSourceFunc(func() (Counters, error) {
		c, err := src.ReadCounters()
		r.ev.newTunnel(r.clock.Now()) // the heal, while the counters are read
		return c, err
	})
	r.second(0, 20_000)
	r.ev.counters.cfg.Source = src
	if got := kinds(r.seconds(4, 0, 20_000)); got != "...." {
		t.Errorf("after a heal during a sample: %s, want a Window of nothing decided first", got)
	}
}

// Counters that are not fresh decide nothing: evidence never keeps a state
// on old samples.
func TestCountersNeedFreshSamples(t *testing.T) {
	r := newEvidenceRig(t, Evidence{}, false)
	r.seconds(3, 100_000, 100_000)
	r.seconds(5, 0, 100_000) // a silence that fails...
	r.clock.Advance(3 * time.Second)
	if v := r.ev.decide(); v.ok { // ...but no sample for 3 s
		t.Errorf("stale samples decided: %+v", v)
	}
}

func TestEvidenceThresholds(t *testing.T) {
	// A window of 10 s and a higher bar for silence: the first sample with
	// 100 kB sent is the 13th, and by then the silence is 12 s old.
	r := newEvidenceRig(t, Evidence{Window: 10 * time.Second, MinSentBytes: 100_000}, false)
	r.seconds(3, 100, 100)
	if got, want := kinds(r.seconds(20, 0, 8_000)), strings.Repeat(".", 12)+strings.Repeat("F", 8); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	probe := []LightProbe{{Check: check.Func(func(context.Context) error { return nil })}}
	for _, bad := range []Evidence{
		{},
		{Probes: []LightProbe{{}}},
		{Source: &fakeCounters{}, Window: -time.Second},
		{Source: &fakeCounters{}, Window: time.Second, Interval: 2 * time.Second},
		{Probes: probe, ProbeTimeout: -time.Second},
		{Probes: probe, MaxLoss: 1},
		{Probes: probe, MaxLoss: -0.1},
		{Probes: probe, MaxLoss: math.NaN()},
		{Probes: probe, Interval: time.Nanosecond}, // a socket and a goroutine per nanosecond
		{Probes: probe, ProbeTimeout: time.Millisecond},
		{Probes: probe, MaxLoss: 0.2, LossWindow: time.Second}, // 4 probes: MaxLoss could never act
	} {
		if _, err := bad.withDefaults(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestParseNetDev(t *testing.T) {
	const dev = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    1234      12    0    0    0     0          0         0     1234      12    0    0    0     0       0          0
   wg0: 9876543   54321    0    0    0     0          0         0  1234567   23456    0    0    0     0       0          0
`
	c, err := parseNetDev([]byte(dev), "wg0")
	if err != nil || c != (Counters{RxBytes: 9876543, RxPackets: 54321, TxBytes: 1234567, TxPackets: 23456}) {
		t.Errorf("wg0: %+v, %v", c, err)
	}
	if _, err := parseNetDev([]byte(dev), "tun0"); err == nil || !strings.Contains(err.Error(), "tun0") {
		t.Errorf("tun0: %v, want an error naming it", err)
	}
	if _, err := parseNetDev([]byte("wg0: 1 2 3\n"), "wg0"); err == nil {
		t.Error("a short line parsed")
	}
}

// A check that comes while the tunnel has been sending into silence for
// less than a window waits for the counters instead of dialing.
func TestEvidenceAwaitsASilenceInProgress(t *testing.T) {
	r := newEvidenceRig(t, Evidence{Interval: time.Second}, false)
	r.seconds(10, 100_000, 100_000)
	got := kinds(r.seconds(2, 0, 20_000)) // silent since the first of these
	if got != ".." {
		t.Fatalf("before the check: %s", got)
	}
	done := make(chan verdict, 1)
	go func() { done <- r.ev.await(context.Background()) }()
	ctx := t.Context()
	// await sleeps for the next sample, sees none, sleeps again; then two
	// samples of sending into silence make the silence a window old.
	for i := range 3 {
		if err := r.clock.BlockUntilContext(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			r.src.c.TxBytes += 20_000
			r.ev.counters.sample()
		}
		r.clock.Advance(time.Second)
	}
	v := <-done
	if !v.ok || !errors.Is(v.err, ErrSilentTunnel) {
		t.Errorf("await: %+v, want the silence's failure", v)
	}
}

// A new incarnation of the tunnel (a new interface index, as a sidecar
// sees the kubelet's restart of its VPN) is a new tunnel, as a heal is;
// a reading that fails changes nothing.
func TestNewIncarnationIsANewTunnel(t *testing.T) {
	var n atomic.Uint64
	var fail atomic.Bool
	r := newProbeRig(t, Evidence{Incarnation: func() (uint64, error) {
		if fail.Load() {
			return 0, errors.New("no interface wg0")
		}
		return n.Load(), nil
	}})
	r.ticks(6, true, 0, 0, 0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.ev.watchIncarnation(ctx) }()
	defer func() { cancel(); <-done }()
	step := func() {
		t.Helper()
		bctx, bcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer bcancel()
		if err := r.clock.BlockUntilContext(bctx, 1); err != nil {
			t.Fatal("the watch did not wait")
		}
		r.clock.Advance(r.ev.cfg.Interval)
	}
	forgotten := func() bool {
		r.ev.proofs[0].mu.Lock()
		defer r.ev.proofs[0].mu.Unlock()
		return !r.ev.proofs[0].answersFrom.IsZero()
	}
	step()
	fail.Store(true)
	step()
	step()
	if forgotten() {
		t.Fatal("a failed reading started a new tunnel")
	}
	fail.Store(false)
	n.Store(7)
	step()
	step()
	if !forgotten() {
		t.Error("a new incarnation did not start a new tunnel")
	}
}
