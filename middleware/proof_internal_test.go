package middleware

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// probeRig drives the light probes by hand on the evidence rig's fake
// clock: each tick sends a probe, as run does every Interval, and the test
// says whether the tunnel answers and how late.
type probeRig struct {
	*evidenceRig
	// out holds the probes not yet ended.
	out []rigProbe
	// losing makes the probes sent from now on lost: never answered.
	losing bool
}

type rigProbe struct {
	sent time.Time
	lost bool
}

// newProbeRig builds the rig with a 0.5 s Interval unless cfg sets one:
// the rule's tests count ticks of that.
func newProbeRig(t *testing.T, cfg Evidence) *probeRig {
	if cfg.Interval == 0 {
		cfg.Interval = 500 * time.Millisecond
	}
	return &probeRig{evidenceRig: newEvidenceRig(t, cfg, true)}
}

// tick lets an Interval pass, in which the tunnel received rx bytes and
// sent tx, and sends a probe. When alive, the probes out that were sent
// rtt ago or earlier and not lost are answered then; probes ProbeTimeout
// old end unanswered. It returns the verdict after it.
func (r *probeRig) tick(alive bool, rtt time.Duration, rx, tx uint64) verdict {
	r.clock.Advance(r.ev.cfg.Interval)
	now := r.clock.Now()
	r.src.c.RxBytes += rx
	r.src.c.TxBytes += tx
	r.ev.counters.sample()
	var still []rigProbe
	for _, p := range r.out {
		switch {
		case alive && !p.lost && now.Sub(p.sent) >= rtt:
			r.ev.proofs[0].end(p.sent, nil)
		case now.Sub(p.sent) >= r.ev.cfg.ProbeTimeout:
			r.ev.proofs[0].end(p.sent, context.DeadlineExceeded)
		default:
			still = append(still, p)
		}
	}
	r.out = append(still, rigProbe{sent: now, lost: r.losing})
	r.ev.proofs[0].sent()
	return r.ev.decide()
}

// ticks runs n ticks alike and returns their verdicts as kinds.
func (r *probeRig) ticks(n int, alive bool, rtt time.Duration, rx, tx uint64) string {
	vs := make([]verdict, n)
	for i := range vs {
		vs[i] = r.tick(alive, rtt, rx, tx)
	}
	return kinds(vs)
}

func TestProofOfLifePassesOnAnswers(t *testing.T) {
	r := newProbeRig(t, Evidence{})
	// The first probe is out, none was ever answered: the probes decide
	// nothing yet, and the active check runs.
	if v := r.tick(false, 0, 0, 0); v.ok || v.pending {
		t.Fatalf("first probe out: %+v, want nothing decided", v)
	}
	if got := r.ticks(20, true, 20*time.Millisecond, 0, 0); got != strings.Repeat("P", 20) {
		t.Errorf("answered probes on an idle tunnel: %s", got)
	}
	if v := r.tick(true, 0, 0, 0); !strings.HasPrefix(v.text, "proof of life: icmp 10.0.0.1 answered 0s ago") {
		t.Errorf("text %q", v.text)
	}
}

// A dead tunnel fails a Window after the first probe sent into it, loaded
// or idle, whatever still arrives: retransmissions, a stream, keepalives.
func TestProofOfLifeFailsWithoutAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rx, tx uint64
	}{
		{"idle", 0, 0},
		{"receive-only: retransmissions keep coming", 500_000, 0},
		{"sending, and receiving a one-way stream", 200_000, 100_000},
		{"keepalives only", 16, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newProbeRig(t, Evidence{})
			r.ticks(10, true, 0, tc.rx, tc.tx)
			// The tunnel dies: the last answer passes for a Window (3 s,
			// six ticks), then the first unanswered probe is a Window
			// old one tick later.
			got := r.ticks(10, false, 0, tc.rx, tc.tx)
			if want := "PPPPPFFFFF"; got != want {
				t.Fatalf("%s, want %s", got, want)
			}
			v := r.tick(false, 0, tc.rx, tc.tx)
			if !errors.Is(v.err, ErrNoProofOfLife) || !strings.Contains(v.err.Error(), "icmp probe(s) to 10.0.0.1 sent over the last") {
				t.Errorf("err %v", v.err)
			}
		})
	}
}

// Answers that wait in a queue longer than the cadence, even longer than
// the Window, still pass: they arrive an Interval apart.
func TestProofOfLifeDeepQueue(t *testing.T) {
	r := newProbeRig(t, Evidence{})
	got := r.ticks(5, true, 2500*time.Millisecond, 0, 100_000) // no answer can have come yet
	if strings.Contains(got, "F") {
		t.Errorf("before the first answer: %s", got)
	}
	if got := r.ticks(60, true, 2500*time.Millisecond, 0, 100_000); got != strings.Repeat("P", 60) {
		t.Errorf("rtt 2.5s: %s", got)
	}
	// The queue deepens to 8 s, longer than the Window: answers still
	// come an Interval apart, and pass.
	var all string
	for rtt := 2500 * time.Millisecond; rtt <= 8*time.Second; rtt += 100 * time.Millisecond {
		all += r.ticks(1, true, rtt, 0, 100_000)
	}
	all += r.ticks(60, true, 8*time.Second, 0, 100_000)
	if all != strings.Repeat("P", len(all)) {
		t.Errorf("rtt up to 8s: %s", all)
	}
}

// A queue that fills at once delays the next answer by the jump in
// queueing delay: a jump shorter than the Window passes.
func TestProofOfLifeQueueJump(t *testing.T) {
	r := newProbeRig(t, Evidence{})
	r.ticks(10, true, 0, 0, 0)
	got := r.ticks(20, true, 2*time.Second, 0, 0)
	if strings.Contains(got, "F") {
		t.Errorf("%s", got)
	}
}

// Lost probes alone do not fail a working tunnel: only a Window without an
// answer does.
func TestProofOfLifeToleratesLoss(t *testing.T) {
	r := newProbeRig(t, Evidence{})
	r.ticks(10, true, 0, 0, 0)
	var got string
	for i := range 200 {
		// Four in five probes lost, the fifth answered: an answer every
		// 2.5 s.
		r.losing = i%5 != 4
		got += r.ticks(1, true, 0, 0, 0)
	}
	if strings.Contains(got, "F") {
		t.Errorf("%s", got)
	}
	s := r.ev.proofs[0].stats()
	if s.Sent < 100 || s.Loss < 0.75 || s.Loss > 0.85 {
		t.Errorf("stats %+v, want 80%% loss", s)
	}
}

func TestProofOfLifeMaxLoss(t *testing.T) {
	r := newProbeRig(t, Evidence{MaxLoss: 0.2, LossWindow: 10 * time.Second})
	r.ticks(30, true, 0, 0, 0)
	s := r.ev.proofs[0].stats()
	if s.Loss != 0 || s.RTT != 500*time.Millisecond || s.Answered == 0 {
		// Answered at the next tick: the rig ends probes at ticks only.
		t.Errorf("stats %+v", s)
	}
	// One in two lost: above 20% over the last 10 s, so answers no longer
	// pass; the loss fails the check.
	var v verdict
	for i := range 40 {
		r.losing = i%2 == 0
		v = r.tick(true, 0, 0, 0)
	}
	if !v.ok || !errors.Is(v.err, ErrProbeLoss) || !strings.Contains(v.err.Error(), "above the 20% allowed") {
		t.Errorf("verdict %+v, want a loss failure", v)
	}
}

// An outage's loss is not the quality of the tunnel that came back: after
// a silence of a Window, whoever restarted it (the kubelet, Docker), the
// first answer passes and MaxLoss counts from there.
func TestProofOfLifeMaxLossForgetsAnOutage(t *testing.T) {
	r := newProbeRig(t, Evidence{MaxLoss: 0.2, LossWindow: time.Minute})
	r.ticks(20, true, 0, 0, 0)
	r.losing = true
	if got := r.ticks(40, true, 0, 0, 0); !strings.HasSuffix(got, "FFFF") {
		t.Fatalf("20 s without an answer: %s, want failures", got)
	}
	r.losing = false
	r.tick(true, 0, 0, 0) // the first probe after the outage goes out
	if got := r.ticks(10, true, 0, 0, 0); got != strings.Repeat("P", 10) {
		t.Errorf("after the outage: %s, want passes: the outage's loss still counted", got)
	}
}

// Nor is the loss while the tunnel was not up yet: a VPN that takes its
// time to connect is judged from its first answer on.
func TestProofOfLifeMaxLossCountsFromTheFirstAnswer(t *testing.T) {
	r := newProbeRig(t, Evidence{MaxLoss: 0.2, LossWindow: time.Minute})
	r.losing = true
	r.ticks(30, true, 0, 0, 0) // 15 s, no answer: the active check decides
	r.losing = false
	r.tick(true, 0, 0, 0)
	if got := r.ticks(10, true, 0, 0, 0); got != strings.Repeat("P", 10) {
		t.Errorf("after the tunnel came up: %s, want passes: the loss before it still counted", got)
	}
}

// A sender that stopped decides nothing: evidence never keeps a state on
// old data.
func TestProofOfLifeNeedsAFreshSender(t *testing.T) {
	r := newProbeRig(t, Evidence{})
	r.ticks(10, true, 0, 0, 0)
	r.clock.Advance(10 * time.Second) // no probe sent since
	r.ev.counters.sample()
	if v := r.ev.decide(); v.ok || v.pending {
		t.Errorf("a stalled sender decided: %+v", v)
	}
}

// Counters reset by a recreated interface, or a gap in their samples,
// change nothing the probes decide.
func TestProofOfLifeWithCountersThatReset(t *testing.T) {
	r := newProbeRig(t, Evidence{})
	r.ticks(10, true, 0, 100_000, 100_000)
	r.src.c = Counters{} // the interface was made anew
	if got := r.ticks(4, true, 0, 10_000, 10_000); got != "PPPP" {
		t.Errorf("after a reset: %s", got)
	}
	r.src.err = errors.New("no interface wg0")
	if got := r.ticks(10, true, 0, 0, 0); got != strings.Repeat("P", 10) {
		t.Errorf("during a gap: %s", got)
	}
	r.src.err = nil
	if got := r.ticks(10, false, 0, 500_000, 0); got != "PPPPPFFFFF" {
		t.Errorf("after the gap, dead, receiving: %s", got)
	}
}

// An error answer (an ICMP unreachable, a reset) is a probe that ended
// unanswered: it proves nothing, however soon it came.
func TestProofOfLifeErrorAnswersProveNothing(t *testing.T) {
	r := newProbeRig(t, Evidence{})
	r.ticks(10, true, 0, 0, 0)
	var got []verdict
	for range 10 {
		r.clock.Advance(r.ev.cfg.Interval)
		now := r.clock.Now()
		for _, p := range r.out {
			r.ev.proofs[0].end(p.sent, errors.New("icmp 10.0.0.1: echo reply: network is unreachable"))
		}
		r.out = []rigProbe{{sent: now}}
		r.ev.proofs[0].sent()
		got = append(got, r.ev.decide())
	}
	if k := kinds(got); k != "PPPPPFFFFF" {
		t.Errorf("%s", k)
	}
}

// A target that never answers this kind of probe (a gateway that drops
// pings, a host that serves no DNS) must not fail a working tunnel for
// good: until the first answer the probes decide nothing.
func TestProofOfLifeNeverAnsweredDecidesNothing(t *testing.T) {
	r := newProbeRig(t, Evidence{})
	if got := r.ticks(60, false, 0, 100_000, 100_000); got != strings.Repeat(".", 60) {
		t.Errorf("never answered: %s", got)
	}
	if s := r.ev.proofs[0].stats(); s.Answered != 0 || !s.LastAnswer.IsZero() || s.Sent == 0 {
		t.Errorf("stats %+v, want probes sent and none answered", s)
	}
	// Once answered, the rule applies.
	if got := r.ticks(4, true, 0, 0, 0) + r.ticks(10, false, 0, 0, 0); got != "PPPP"+"PPPPPFFFFF" {
		t.Errorf("answered, then dead: %s", got)
	}
}

// A check that comes while the probes have gone unanswered for less than
// a Window waits for them: an answer passes it at once.
func TestProofOfLifeCheckWaitsForAnswers(t *testing.T) {
	r := newProbeRig(t, Evidence{})
	r.ticks(10, true, 0, 0, 0)
	// The last answer arrives between two sends, then none: 3.3 s later
	// the probes sent after it have been out for 2.8 s.
	r.clock.Advance(250 * time.Millisecond)
	r.ev.proofs[0].end(r.out[0].sent, nil)
	r.out = r.out[1:]
	got := r.ticks(6, false, 0, 0, 0)
	r.clock.Advance(50 * time.Millisecond)
	if v := r.ev.decide(); !v.pending || strings.Contains(got, "F") {
		t.Fatalf("before the check: %s, then %+v, want pending", got, v)
	}
	done := make(chan verdict, 1)
	go func() { done <- r.ev.await(context.Background()) }()
	if err := r.clock.BlockUntilContext(t.Context(), 1); err != nil { // await waits
		t.Fatal(err)
	}
	r.ev.proofs[0].end(r.out[0].sent, nil) // a late answer arrives
	if v := <-done; !v.ok || v.err != nil {
		t.Errorf("after an answer: %+v, want a pass", v)
	}
}

// A probe whose Check returns nil only after its timeout was not answered
// in time: it counts as lost.
func TestProofOfLifeLateNilIsNoAnswer(t *testing.T) {
	checker := check.Func(func(ctx context.Context) error { <-ctx.Done(); return nil })
	cfg, err := Evidence{Probes: []LightProbe{{Kind: probeTCP, Target: "x", Check: checker}}, ProbeTimeout: 10 * time.Millisecond}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	p := newProofOfLife(cfg, cfg.Probes[0], clockwork.NewRealClock(), ObserverFuncs{}, newChanges())
	p.probe(context.Background(), p.sent())
	if s := p.stats(); s.Sent != 1 || s.Answered != 0 {
		t.Errorf("stats %+v, want one probe, unanswered", s)
	}
}

// A check whose deadline comes while the probes are about to decide says
// so, and does not run the active check with no time left.
func TestPendingEvidenceAtTheDeadline(t *testing.T) {
	var active int
	clock := clockwork.NewFakeClockAt(evidenceEpoch)
	probe := []LightProbe{{Kind: probeICMP, Target: "10.0.0.1", Check: check.Func(func(context.Context) error { return nil })}}
	m, err := New(check.Func(func(context.Context) error { active++; return nil }),
		Config{Mode: ModeProbe, Clock: clock, Timeouts: Ladder{time.Second}, Evidence: &Evidence{Probes: probe, Interval: 500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	pl := m.evidence.proofs[0]
	pl.end(pl.sent(), nil) // answered at 0 s
	clock.Advance(250 * time.Millisecond)
	for i := range 6 { // sends at 0.25 s ... 2.75 s, none answered
		if i > 0 {
			clock.Advance(500 * time.Millisecond)
		}
		pl.sent()
	}
	// At 3.1 s the last answer is a Window old, and the first probe after
	// it has been out for 2.85 s: pending.
	clock.Advance(350 * time.Millisecond)
	if v := m.evidence.decide(); !v.pending {
		t.Fatalf("at 3.1 s: %+v, want pending", v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the caller's deadline has come
	r := m.execute(ctx, SourceProbe, time.Second, m.checker, func() stop { return stop{reason: errors.New("timed out after 1s")} })
	if active != 0 || r.Err == nil || !strings.Contains(r.Err.Error(), "evidence undecided at the deadline (no answer from icmp 10.0.0.1 for") {
		t.Errorf("active checks %d, result %v", active, r.Err)
	}
}

// Probes that prove nothing (their target turned into an address of this
// host, or the route through the tunnel went away) decide nothing for as
// long as they last, never a pass on the answers of before nor a failure
// on their own silence; the first answer after them counts again.
func TestProofOfLifeProbesThatProveNothingDecideNothing(t *testing.T) {
	r := newProbeRig(t, Evidence{})
	if got := r.ticks(10, true, 0, 0, 0); !strings.HasSuffix(got, "PPPP") {
		t.Fatalf("answered: %s", got)
	}
	why := fmt.Errorf("%w: %w vtun to 10.79.0.2: network is unreachable", ErrProvesNothing, check.ErrNoRouteThrough)
	var got strings.Builder
	for range 20 {
		r.clock.Advance(r.ev.cfg.Interval)
		r.ev.proofs[0].void(why)
		got.WriteString(kinds([]verdict{r.ev.decide()}))
		r.ev.proofs[0].sent()
	}
	if want := strings.Repeat(".", 20); got.String() != want {
		t.Errorf("probes that prove nothing: %s, want %s", got.String(), want)
	}
	if s := r.ev.proofs[0].stats(); !errors.Is(s.ProvesNothing, check.ErrNoRouteThrough) {
		t.Errorf("stats say %v, want why the probes prove nothing", s.ProvesNothing)
	}
	r.out = nil
	if got := r.ticks(3, true, 0, 0, 0); got != ".PP" {
		t.Errorf("answered again: %s, want .PP", got)
	}
	if s := r.ev.proofs[0].stats(); s.ProvesNothing != nil {
		t.Errorf("stats still say %v after an answer", s.ProvesNothing)
	}
}

// A heal forgets the old tunnel's answers: answers to probes sent before
// it ended pass no check after it (a heal that returns before its restart
// takes effect would pass checks on them), and a heal followed by silence
// fails a Window after the first probe of the new tunnel.
func TestProofOfLifeHealForgetsTheOldTunnelsAnswers(t *testing.T) {
	r := newProbeRig(t, Evidence{})
	// Answers take 1.5 s: three probes are out when the heal ends.
	if got := r.ticks(10, true, 1500*time.Millisecond, 0, 0); !strings.HasSuffix(got, "PPPP") {
		t.Fatalf("before the heal: %s", got)
	}
	r.ev.proofs[0].forgetTunnel(r.clock.Now())
	// The old tunnel still answers what was sent to it; nothing sent to
	// the new one is answered.
	r.losing = true
	got := r.ticks(8, true, 1500*time.Millisecond, 0, 0)
	if strings.Contains(got, "P") || !strings.HasSuffix(got, "F") {
		t.Fatalf("after the heal, the old tunnel's answers only: %s, want no pass and a failure within a Window", got)
	}
	if first := strings.IndexByte(got, 'F'); first > 6 {
		t.Errorf("after the heal: %s: the first failure came %d ticks after it, want at most a Window (6) and a tick", got, first+1)
	}
	if v := r.tick(true, 1500*time.Millisecond, 0, 0); !strings.Contains(v.err.Error(), "none answered since the heal") {
		t.Errorf("error %v, want it to say none was answered since the heal", v.err)
	}
	// The new tunnel answers: its answers pass.
	r.losing = false
	if got := r.ticks(8, true, 500*time.Millisecond, 0, 0); !strings.HasSuffix(got, "PPP") {
		t.Errorf("the new tunnel answers: %s", got)
	}
}

// A heal the loop runs forgets the old tunnel's answers (loop.finishHeal):
// answers to probes sent before the heal ended, which the old tunnel gives
// while a heal that returns before its restart takes effect runs, pass no
// check after it, also when they arrive after it; a heal followed by
// silence fails a Window after the first probe sent after it; the new
// tunnel's answers pass.
func TestHealThroughTheLoopForgetsTheOldTunnelsAnswers(t *testing.T) {
	r := newHealRig(t)
	// At 0 s the first probe goes out, and the loop's check, which the
	// probes cannot decide yet, fails on the active check: a heal starts.
	p0 := r.probe()
	r.wait(r.healStarted)
	r.nextSleep()
	// The heal runs; the old tunnel answers the probes sent so far.
	r.clock.Advance(time.Second)
	p1 := r.probe()
	r.answer(p0, true)
	r.answer(p1, true)
	r.clock.Advance(time.Second)
	p2 := r.probe() // answered only after the heal
	r.clock.Advance(500 * time.Millisecond)
	r.heal <- nil
	r.wait(r.healed)
	r.nextSleep() // the loop checks at once after a heal
	if last := r.m.Snapshot().Last; last.Err == nil {
		t.Errorf("the loop's check after the heal passed (%s): on the old tunnel's answers", last.Evidence)
	}
	r.answer(p2, true)
	// Silence: nothing sent after the heal is answered.
	var vs []verdict
	for range 4 {
		r.clock.Advance(time.Second)
		r.answer(r.probe(), false)
		vs = append(vs, r.m.evidence.decide())
	}
	if got := kinds(vs); got != "...F" {
		t.Errorf("after the heal, silence: %s, want ...F: no pass, and a failure a Window after the first probe sent after the heal", got)
	}
	if v := vs[len(vs)-1]; v.err == nil || !strings.Contains(v.err.Error(), "none answered since the heal") {
		t.Errorf("error %v, want it to say none was answered since the heal", v.err)
	}
	// The new tunnel answers.
	r.clock.Advance(time.Second)
	r.answer(r.probe(), true)
	if got := kinds([]verdict{r.m.evidence.decide()}); got != "P" {
		t.Errorf("the new tunnel answers: %s, want P", got)
	}
}

// healRig runs a loop-mode monitor on a fake clock with one light probe
// (every second, a Window of 3 s) whose answers the test gives, an active
// check that fails, and a heal that starts at the first failure and ends
// when the test says.
type healRig struct {
	t                   *testing.T
	clock               *clockwork.FakeClock
	m                   *Monitor
	probes              chan heldProbe
	ended               chan struct{}
	healStarted, healed chan struct{}
	sleeps              chan time.Time
	heal                chan error
}

// heldProbe is a light probe waiting for the test's answer: true is an
// answer, false a loss.
type heldProbe chan bool

func newHealRig(t *testing.T) *healRig {
	r := &healRig{t: t, clock: clockwork.NewFakeClockAt(evidenceEpoch), probes: make(chan heldProbe, 16), ended: make(chan struct{}, 16),
		healStarted: make(chan struct{}, 4), healed: make(chan struct{}, 4), sleeps: make(chan time.Time, 16), heal: make(chan error)}
	ev := Evidence{Interval: time.Second, Window: 3 * time.Second, FullCheckPeriod: -1, Probes: []LightProbe{{Kind: probeICMP, Target: "10.0.0.1",
		Check: check.Func(func(ctx context.Context) error {
			p := make(heldProbe, 1)
			r.probes <- p
			select {
			case ok := <-p:
				if ok {
					return nil
				}
				return errors.New("icmp 10.0.0.1: echo reply: i/o timeout")
			case <-ctx.Done():
				return ctx.Err()
			}
		})}}}
	m, err := New(check.Func(func(context.Context) error { return errors.New("tls 10.0.0.1:443: handshake: i/o timeout") }), Config{
		Clock: r.clock, Timeouts: Ladder{time.Second}, RetryWait: time.Hour, HealBackoff: HealBackoff{Step: time.Hour}, Evidence: &ev,
		Heal: func(ctx context.Context) error {
			select {
			case err := <-r.heal:
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		Observer: ObserverFuncs{
			OnLightProbe:  func(LightProbeResult) { r.ended <- struct{}{} },
			OnHealStarted: func(HealStart) { r.healStarted <- struct{}{} },
			OnHealed:      func(HealEvent) { r.healed <- struct{}{} },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m.sleeping = func(until time.Time) { r.sleeps <- until }
	r.m = m
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	return r
}

// probe takes the probe sent at the clock's time. The sender set its
// timer for the next one before it sent this one.
func (r *healRig) probe() heldProbe {
	r.t.Helper()
	select {
	case p := <-r.probes:
		return p
	case <-time.After(10 * time.Second):
		r.t.Fatal("no light probe was sent")
		return nil
	}
}

// answer ends p, answered or lost, and waits until its end is recorded.
func (r *healRig) answer(p heldProbe, answered bool) {
	r.t.Helper()
	p <- answered
	r.wait(r.ended)
}

func (r *healRig) nextSleep() {
	r.t.Helper()
	select {
	case <-r.sleeps:
	case <-time.After(10 * time.Second):
		r.t.Fatal("the loop did not wait")
	}
}

func (r *healRig) wait(ch <-chan struct{}) {
	r.t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		r.t.Fatal("the monitor did not get there")
	}
}

// A target that went quiet before a restart (a new server filtering ICMP,
// a provider blocking the resolver) decides nothing on the new tunnel
// until it answers it: the new tunnel is restarted once for its silence,
// not again and again. One that answered until the restart fails the new
// tunnel after a Window of silence, as before.
func TestProofOfLifeQuietTargetRestartsAWorkingTunnelOnce(t *testing.T) {
	r := newProbeRig(t, Evidence{})
	r.ticks(6, true, 0, 0, 0)
	r.losing = true // the target goes quiet; the tunnel works
	if got := r.ticks(10, true, 0, 0, 0); !strings.HasSuffix(got, "FFF") {
		t.Fatalf("the target quiet: %s, want failures (nothing else proves the tunnel here)", got)
	}
	// The restart its silence caused: the new tunnel works, the target
	// stays quiet.
	r.ev.proofs[0].forgetTunnel(r.clock.Now())
	if got := r.ticks(20, true, 0, 0, 0); got != strings.Repeat(".", 20) {
		t.Errorf("the new tunnel, the target still quiet: %s, want nothing decided: the active check decides", got)
	}
	r.losing = false
	if got := r.ticks(4, true, 0, 0, 0); !strings.HasSuffix(got, "PP") {
		t.Errorf("the target answers the new tunnel: %s", got)
	}
}

// On an idle tunnel whose light probe target is quiet, the probes' own
// packets are all that goes out: the counters' silence rule leaves them
// out, so that the quiet target decides nothing (the active check does),
// while the users' data into silence still fails a check.
func TestCountersLeaveOutTheLightProbesOwnPackets(t *testing.T) {
	r := newProbeRig(t, Evidence{})
	// A minute of echoes (84 bytes each: 20 of IP, 8 of ICMP, 56 of data),
	// none answered: 10 kB into silence.
	if got := r.ticks(120, false, 0, 0, 84); got != strings.Repeat(".", 120) {
		t.Errorf("a quiet target on an idle tunnel: %s, want nothing decided", got)
	}
	r.ticks(8, false, 0, 0, 8<<10) // the users' data, unanswered
	if v := r.tick(false, 0, 0, 0); !v.ok || !errors.Is(v.err, ErrSilentTunnel) {
		t.Errorf("the users' data into silence: %+v, want %v", v, ErrSilentTunnel)
	}
}
