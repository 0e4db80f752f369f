package middleware

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// fakeCounters is a CounterSource a test drives.
type fakeCounters struct {
	c   Counters
	err error
}

func (f *fakeCounters) ReadCounters() (Counters, error) { return f.c, f.err }

// evidenceRig samples a fakeCounters once a second on a fake clock.
type evidenceRig struct {
	t     *testing.T
	clock *clockwork.FakeClock
	src   *fakeCounters
	ev    *evidence
}

func newEvidenceRig(t *testing.T, cfg Evidence) *evidenceRig {
	src := &fakeCounters{}
	cfg.Source = src
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClockAt(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	r := &evidenceRig{t: t, clock: clock, src: src, ev: newEvidence(cfg, clock)}
	r.ev.sample()
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
	r.ev.sample()
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

func TestEvidenceBusyTunnelPasses(t *testing.T) {
	r := newEvidenceRig(t, Evidence{})
	v := r.second(150_000, 90_000)
	if !v.ok || v.err != nil || v.text != "traffic evidence: received 150 packets (150.00 kB) in the last 1s" {
		t.Fatalf("busy tunnel: %+v", v)
	}
	// Still a pass once the window is full: it counts the last 5 s.
	got := r.seconds(10, 150_000, 90_000)
	if kinds(got) != "PPPPPPPPPP" || !strings.Contains(got[9].text, "received 750 packets (750.00 kB) in the last 5s") {
		t.Errorf("busy tunnel: %s, last %q", kinds(got), got[9].text)
	}
}

func TestEvidenceDeadTunnelFailsAfterTheWindow(t *testing.T) {
	r := newEvidenceRig(t, Evidence{})
	r.seconds(10, 100_000, 100_000) // busy, then the tunnel dies
	// Received traffic in the window keeps passing, then nothing decides
	// until the first unanswered send is a window old, then it fails.
	got := r.seconds(10, 0, 20_000)
	if want := "PPPP.FFFFF"; kinds(got) != want {
		t.Fatalf("dead tunnel: %s, want %s", kinds(got), want)
	}
	v := got[5]
	if !errors.Is(v.err, ErrSilentTunnel) || !strings.Contains(v.err.Error(), "sent 120 packets (120.00 kB) in 5s, received nothing") {
		t.Errorf("err %v", v.err)
	}
}

func TestEvidenceIdleTunnelDecidesNothing(t *testing.T) {
	r := newEvidenceRig(t, Evidence{})
	if got := kinds(r.seconds(30, 0, 0)); got != strings.Repeat(".", 30) {
		t.Errorf("idle: %s", got)
	}
}

// Traps that must not fail a working tunnel.
func TestEvidenceTraps(t *testing.T) {
	t.Run("a lone lost packet", func(t *testing.T) {
		r := newEvidenceRig(t, Evidence{})
		r.second(0, 1500)
		if got := kinds(r.seconds(60, 0, 0)); strings.Contains(got, "F") {
			t.Errorf("%s", got)
		}
	})
	t.Run("keepalives into an idle peer", func(t *testing.T) {
		r := newEvidenceRig(t, Evidence{})
		var got string
		for range 12 { // five minutes of WireGuard keepalives, 32 bytes every 25 s
			got += kinds([]verdict{r.second(0, 32)}) + kinds(r.seconds(24, 0, 0))
		}
		if strings.Contains(got, "F") {
			t.Errorf("%s", got)
		}
	})
	t.Run("a deep queue", func(t *testing.T) {
		// An idle tunnel starts a transfer; the first reply comes after
		// 4 s of queueing delay, then replies keep coming.
		r := newEvidenceRig(t, Evidence{})
		r.seconds(10, 0, 0)
		got := kinds(r.seconds(4, 0, 50_000)) + kinds(r.seconds(20, 5_000, 50_000))
		if strings.Contains(got, "F") {
			t.Errorf("%s", got)
		}
	})
	t.Run("upload with acknowledgements only", func(t *testing.T) {
		r := newEvidenceRig(t, Evidence{})
		if got := kinds(r.seconds(20, 80, 1_000_000)); got != strings.Repeat("P", 20) {
			t.Errorf("%s", got)
		}
	})
	t.Run("download only", func(t *testing.T) {
		r := newEvidenceRig(t, Evidence{})
		if got := kinds(r.seconds(20, 1_000_000, 0)); got != strings.Repeat("P", 20) {
			t.Errorf("%s", got)
		}
	})
	t.Run("a device made anew", func(t *testing.T) {
		// A VPN restart recreates the interface: counters fall to zero.
		r := newEvidenceRig(t, Evidence{})
		r.seconds(10, 100_000, 100_000)
		r.src.c = Counters{}
		got := kinds(r.seconds(4, 0, 10_000))
		if strings.Contains(got, "F") {
			t.Errorf("after a reset: %s", got)
		}
	})
}

// Counters that are not fresh decide nothing: evidence never keeps a state
// alive on old samples.
func TestEvidenceNeedsFreshCounters(t *testing.T) {
	t.Run("sampling stopped", func(t *testing.T) {
		r := newEvidenceRig(t, Evidence{})
		r.seconds(3, 100_000, 100_000)
		r.clock.Advance(3 * time.Second) // no sample for 3 s
		if v := r.ev.decide(); v.ok {
			t.Errorf("stale samples decided: %+v", v)
		}
	})
	t.Run("the source fails", func(t *testing.T) {
		r := newEvidenceRig(t, Evidence{})
		r.seconds(3, 100_000, 100_000)
		r.src.err = errors.New("no such device")
		if v := r.second(0, 0); v.ok {
			t.Errorf("a failed read decided: %+v", v)
		}
	})
}

func TestEvidenceThresholds(t *testing.T) {
	// A window of 10 s and a higher bar for silence.
	r := newEvidenceRig(t, Evidence{Window: 10 * time.Second, MinSentBytes: 100_000})
	r.seconds(3, 100, 100)
	got := kinds(r.seconds(20, 0, 8_000))
	if want := "PPPPPPPPP...FFFFFFFF"; got != want { // received 9 s ago at most; then silent 10 s and 100 kB
		t.Errorf("got %s, want %s", got, want)
	}
	for _, bad := range []Evidence{
		{},
		{Source: &fakeCounters{}, Window: -time.Second},
		{Source: &fakeCounters{}, Window: time.Second, Interval: 2 * time.Second},
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
	r := newEvidenceRig(t, Evidence{})
	r.seconds(10, 100_000, 100_000)
	got := kinds(r.seconds(5, 0, 20_000)) // silent since the first of these
	if got != "PPPP." {
		t.Fatalf("before the check: %s", got)
	}
	done := make(chan verdict, 1)
	go func() { done <- r.ev.await(context.Background()) }()
	ctx := t.Context()
	if err := r.clock.BlockUntilContext(ctx, 1); err != nil { // await sleeps for the next sample
		t.Fatal(err)
	}
	r.clock.Advance(time.Second)
	if err := r.clock.BlockUntilContext(ctx, 1); err != nil { // none came: still pending, it sleeps again
		t.Fatal(err)
	}
	r.src.c.TxBytes += 20_000
	r.ev.sample()
	r.clock.Advance(time.Second)
	v := <-done
	if !v.ok || !errors.Is(v.err, ErrSilentTunnel) {
		t.Errorf("await: %+v, want the silence's failure", v)
	}
}
