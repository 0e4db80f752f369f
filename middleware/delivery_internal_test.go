package middleware

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeDelivery is a DeliverySource a test drives: the acknowledged
// amount of each connection.
type fakeDelivery struct {
	d   Delivery
	err error
}

func (f *fakeDelivery) ReadDelivery() (Delivery, error) {
	out := Delivery{}
	for k, v := range f.d {
		out[k] = v
	}
	return out, f.err
}

// deliveryRig is a probe rig with a delivery source read at each tick.
type deliveryRig struct {
	*probeRig
	src *fakeDelivery
}

func newDeliveryRig(t *testing.T) *deliveryRig {
	src := &fakeDelivery{d: Delivery{}}
	r := &deliveryRig{probeRig: newProbeRig(t, Evidence{Delivery: src, FullCheckPeriod: -1}), src: src}
	return r
}

// tick lets an Interval pass with the probes answered or not, the given
// connections acknowledging more data, and returns the verdict.
func (r *deliveryRig) tick(answered bool, progressing ...uint64) verdict {
	for _, k := range progressing {
		r.src.d[k] += 1448
	}
	r.clock.Advance(r.ev.cfg.Interval)
	r.ev.delivery.sample()
	return r.probeRig.tick(answered, 0, 0, 0)
}

func (r *deliveryRig) ticks(n int, answered bool, progressing ...uint64) string {
	vs := make([]verdict, n)
	for i := range vs {
		vs[i] = r.tick(answered, progressing...)
	}
	return kinds(vs)
}

// Data the far end acknowledged passes checks while the probes go
// unanswered (a full queue drops them, a far side filters ICMP): it
// proves both directions. It only passes: connections that make no
// progress (idle, or a tunnel dead either way, whose far side retransmits
// and acknowledges nothing new) decide nothing, and the probes' silence
// fails then.
func TestDeliveryPassesWhatTheProbesWouldFail(t *testing.T) {
	r := newDeliveryRig(t)
	r.src.d[1], r.src.d[2] = 1000, 5000
	if got := r.ticks(6, true); !strings.HasSuffix(got, "PPP") {
		t.Fatalf("probes answered: %s", got)
	}
	// The probes are lost from now on; connection 2 delivers.
	got := r.ticks(20, false, 2)
	if got != strings.Repeat("P", 20) {
		t.Errorf("probes lost, a connection delivering: %s, want passes", got)
	}
	v := r.tick(false, 2)
	if v.proof != ProofDelivery || !strings.Contains(v.text, "1 TCP connection(s) through the tunnel had data acknowledged") {
		t.Errorf("verdict %+v, want one by delivery", v)
	}
	// The connection stops making progress (the tunnel died): the
	// delivery proves nothing after a Window, and the probes' silence
	// fails.
	got = r.ticks(10, false)
	if !strings.HasSuffix(got, "F") || strings.Count(got, "P") > 6 {
		t.Errorf("no progress: %s, want a Window of passes at most, then failures", got)
	}
}

// Only a connection read twice proves anything: a new one, or one that
// came and went between readings, does not; nor does a reading that
// failed.
func TestDeliveryComparesTheSameConnectionOnly(t *testing.T) {
	r := newDeliveryRig(t)
	r.ticks(3, true)
	for i := range uint64(10) {
		// A new connection at every reading, each with more acknowledged.
		r.src.d = Delivery{100 + i: 1000 * (i + 1)}
		r.clock.Advance(r.ev.cfg.Interval)
		r.ev.delivery.sample()
	}
	if v := r.ev.delivery.decide(r.clock.Now()); v.ok {
		t.Errorf("connections that came and went: %+v, want nothing decided", v)
	}
	r.src.err = errors.New("netlink: dump interrupted")
	r.src.d[109] += 1
	r.ev.delivery.sample()
	if v := r.ev.delivery.decide(r.clock.Now()); v.ok {
		t.Errorf("a failed reading: %+v, want nothing decided", v)
	}
	r.src.err = nil
	r.ev.delivery.sample()
	if v := r.ev.delivery.decide(r.clock.Now()); !v.ok {
		t.Errorf("the same connection, read again after the failure: %+v, want a pass", v)
	}
}

// After a heal only connections through the new tunnel, read twice,
// prove it.
func TestDeliveryForgetsTheOldTunnel(t *testing.T) {
	r := newDeliveryRig(t)
	r.src.d[1] = 10
	r.tick(true, 1)
	r.tick(true, 1)
	if v := r.ev.delivery.decide(r.clock.Now()); !v.ok {
		t.Fatalf("delivering: %+v", v)
	}
	r.ev.delivery.forget()
	if v := r.ev.delivery.decide(r.clock.Now()); v.ok {
		t.Errorf("after a heal: %+v, want nothing until a connection is read twice", v)
	}
	r.src.d[1] += 10
	r.ev.delivery.sample()
	if v := r.ev.delivery.decide(r.clock.Now()); v.ok {
		t.Errorf("one reading after the heal: %+v", v)
	}
}

// What the tunnel delivers is never overridden by the full check's
// failures: the users' data got through.
func TestDeliveryOutranksTheFullCheck(t *testing.T) {
	src := &fakeDelivery{d: Delivery{1: 0}}
	r := &deliveryRig{probeRig: newProbeRig(t, Evidence{Delivery: src}), src: src}
	r.ticks(4, true)
	r.ev.full.failures, r.ev.full.lastErr = FullCheckFailures, errTCPDropped
	if v := r.tick(true); !errors.Is(v.err, ErrFullCheckFails) {
		t.Fatalf("the full check failing, nothing delivered: %+v", v)
	}
	r.tick(true, 1)
	if v := r.tick(true, 1); v.err != nil || v.proof != ProofDelivery {
		t.Errorf("the full check failing, data delivered: %+v, want a pass by delivery", v)
	}
}

// Growth read after readings failed for longer than the Window proves
// nothing: it may have come just after the last good reading, when the
// tunnel still worked (issue 46: a tunnel dead 21 s read "acknowledged
// 0s ago").
func TestDeliveryGrowthAcrossFailedReadingsIsAsOldAsTheLastGoodOne(t *testing.T) {
	r := newDeliveryRig(t)
	r.src.d[1] = 10
	r.tick(true, 1)
	r.src.err = errors.New("sock_diag: no buffer space")
	for range 21 {
		r.clock.Advance(r.ev.cfg.Interval)
		r.ev.delivery.sample()
	}
	r.src.err = nil
	r.src.d[1] += 1448
	r.clock.Advance(r.ev.cfg.Interval)
	r.ev.delivery.sample()
	if v := r.ev.delivery.decide(r.clock.Now()); v.ok {
		t.Errorf("growth against a reading %v old: %+v, want nothing decided", 22*r.ev.cfg.Interval, v)
	}
	// Read again at once, the same growth proves the tunnel alive.
	r.src.d[1] += 1448
	r.clock.Advance(r.ev.cfg.Interval)
	r.ev.delivery.sample()
	if v := r.ev.delivery.decide(r.clock.Now()); !v.ok {
		t.Errorf("growth between two good readings: %+v, want a pass", v)
	}
}

// So is growth read long after the last reading, by a reader held (a
// paused process, a socket table that took seconds to dump).
func TestDeliveryGrowthAfterAStalledReadingIsAsOldAsTheLastOne(t *testing.T) {
	r := newDeliveryRig(t)
	r.src.d[1] = 10
	r.tick(true, 1)
	r.clock.Advance(20 * time.Second)
	r.src.d[1] += 1448
	r.ev.delivery.sample()
	if v := r.ev.delivery.decide(r.clock.Now()); v.ok {
		t.Errorf("growth against a reading 20s old: %+v, want nothing decided", v)
	}
}

// A reading begun before a heal's forget is the old tunnel's: it is no
// baseline for the new one, whose connections must be read twice.
func TestDeliveryReadingAcrossAForgetIsDropped(t *testing.T) {
	r := newDeliveryRig(t)
	r.src.d[1] = 10
	r.tick(true, 1)
	healing := r.src
	r.ev.delivery.cfg.Delivery = DeliverySourceFunc(func() (Delivery, error) {
		d, err := healing.ReadDelivery()
		r.ev.delivery.forget() // the heal, while the socket table is read
		return d, err
	})
	r.clock.Advance(r.ev.cfg.Interval)
	r.ev.delivery.sample()
	r.ev.delivery.cfg.Delivery = healing
	r.src.d[1] += 1448
	r.clock.Advance(r.ev.cfg.Interval)
	r.ev.delivery.sample()
	if v := r.ev.delivery.decide(r.clock.Now()); v.ok {
		t.Errorf("one reading after the heal, against one begun before it: %+v, want nothing decided", v)
	}
}
