package middleware

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
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
			r.ev.proof.end(p.sent, now, nil)
		case now.Sub(p.sent) >= r.ev.cfg.ProbeTimeout:
			r.ev.proof.end(p.sent, now, context.DeadlineExceeded)
		default:
			still = append(still, p)
		}
	}
	r.out = append(still, rigProbe{sent: now, lost: r.losing})
	r.ev.proof.sent(now)
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
	// The first probe is out: nothing yet, but the check would wait.
	if v := r.tick(false, 0, 0, 0); v.ok || !v.pending {
		t.Fatalf("first probe out: %+v, want pending", v)
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
	s := r.ev.proof.stats()
	if s.Sent < 100 || s.Loss < 0.75 || s.Loss > 0.85 {
		t.Errorf("stats %+v, want 80%% loss", s)
	}
}

func TestProofOfLifeMaxLoss(t *testing.T) {
	r := newProbeRig(t, Evidence{MaxLoss: 0.2, LossWindow: 10 * time.Second})
	r.ticks(30, true, 0, 0, 0)
	s := r.ev.proof.stats()
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
			r.ev.proof.end(p.sent, now, errors.New("icmp 10.0.0.1: echo reply: network is unreachable"))
		}
		r.out = []rigProbe{{sent: now}}
		r.ev.proof.sent(now)
		got = append(got, r.ev.decide())
	}
	if k := kinds(got); k != "PPPPPFFFFF" {
		t.Errorf("%s", k)
	}
}
