package harness

import (
	"testing"
	"time"
)

var t0 = time.Unix(1_000_000, 0)

func pkt(n int) *packet { return &packet{buf: make([]byte, n), n: n} }

// drain collects every packet due at now.
func drain(q *shaper, now time.Time) []*packet {
	var out []*packet
	for {
		p, _ := q.next(now)
		if p == nil {
			return out
		}
		out = append(out, p)
	}
}

func TestShaperSerialisesAtRate(t *testing.T) {
	// 8 Mbit/s: a 1000-byte packet takes exactly 1 ms.
	q := newShaper(Settings{Rate: 8_000_000}, 1, nil)
	for range 3 {
		if !q.enqueue(t0, pkt(1000)) {
			t.Fatal("packet refused by an empty default queue")
		}
	}
	if p, wait := q.next(t0); p != nil || wait != time.Millisecond {
		t.Fatalf("at t0: got %v, wait %v; want nothing for 1ms", p, wait)
	}
	for i, want := range []int{1, 1, 1, 0} {
		now := t0.Add(time.Duration(i+1) * time.Millisecond)
		if got := len(drain(q, now)); got != want {
			t.Fatalf("at %v: delivered %d, want %d", now.Sub(t0), got, want)
		}
	}
	c := q.counters()
	if c.Packets != 3 || c.Bytes != 3000 || c.QueueHighPackets != 3 || c.QueueHighBytes != 3000 || c.QueuePackets != 0 {
		t.Fatalf("counters %+v", c)
	}
}

func TestShaperLateWakeupKeepsRate(t *testing.T) {
	// Looking only once after 10 ms releases the 10 packets serialised by
	// then, and not one more: the rate comes from virtual time.
	q := newShaper(Settings{Rate: 8_000_000}, 1, nil)
	for range 20 {
		q.enqueue(t0, pkt(1000))
	}
	if got := len(drain(q, t0.Add(10*time.Millisecond))); got != 10 {
		t.Fatalf("delivered %d after 10ms, want 10", got)
	}
	// An idle link does not bank credit: after a pause, a packet takes its
	// full serialisation time again.
	drain(q, t0.Add(time.Second))
	q.enqueue(t0.Add(2*time.Second), pkt(1000))
	if got := len(drain(q, t0.Add(2*time.Second+999*time.Microsecond))); got != 0 {
		t.Fatalf("delivered %d before serialisation ended", got)
	}
	if got := len(drain(q, t0.Add(2*time.Second+time.Millisecond))); got != 1 {
		t.Fatalf("delivered %d, want 1", got)
	}
}

func TestShaperDelay(t *testing.T) {
	q := newShaper(Settings{Rate: 8_000_000, Delay: 20 * time.Millisecond}, 1, nil)
	q.enqueue(t0, pkt(1000))
	if got := len(drain(q, t0.Add(20*time.Millisecond))); got != 0 {
		t.Fatal("delivered before serialisation + delay")
	}
	if _, wait := q.next(t0.Add(20 * time.Millisecond)); wait != time.Millisecond {
		t.Fatalf("wait %v, want 1ms", wait)
	}
	if got := len(drain(q, t0.Add(21*time.Millisecond))); got != 1 {
		t.Fatalf("delivered %d at 21ms, want 1", got)
	}
	// Unlimited rate: only the delay applies.
	q = newShaper(Settings{Delay: 5 * time.Millisecond}, 1, nil)
	q.enqueue(t0, pkt(1000))
	if got := len(drain(q, t0.Add(5*time.Millisecond))); got != 1 {
		t.Fatalf("unlimited rate: delivered %d at 5ms, want 1", got)
	}
}

func TestShaperTailDrop(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit QueueLimit
		want  int
	}{
		{"packets", QueueLimit{Packets: 4}, 4},
		{"bytes", QueueLimit{Bytes: 2500}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			freed := 0
			q := newShaper(Settings{Rate: 8_000_000, Queue: tc.limit}, 1, func(*packet) { freed++ })
			accepted := 0
			for range 10 {
				if q.enqueue(t0, pkt(1000)) {
					accepted++
				}
			}
			c := q.counters()
			if accepted != tc.want || c.Drops != uint64(10-tc.want) || freed != 10-tc.want {
				t.Fatalf("accepted %d, drops %d, freed %d; want %d accepted", accepted, c.Drops, freed, tc.want)
			}
			// Once the head is serialised, one slot frees up.
			if !q.enqueue(t0.Add(time.Millisecond), pkt(1000)) {
				t.Fatal("no room after the head left the queue")
			}
		})
	}
}

func TestShaperLossIsSeeded(t *testing.T) {
	run := func(seed uint64) (lost uint64) {
		q := newShaper(Settings{Loss: 0.25}, seed, nil)
		for range 4000 {
			q.enqueue(t0, pkt(100))
			drain(q, t0)
		}
		return q.counters().Lost
	}
	a, b := run(7), run(7)
	if a != b {
		t.Fatalf("same seed lost %d then %d", a, b)
	}
	if a < 850 || a > 1150 {
		t.Fatalf("lost %d of 4000 at p=0.25", a)
	}
}

func TestShaperOutage(t *testing.T) {
	q := newShaper(Settings{Rate: 8_000_000, Delay: 10 * time.Millisecond}, 1, nil)
	q.enqueue(t0, pkt(1000))
	q.enqueue(t0, pkt(1000))
	// At 1.5 ms one packet is on the wire and one serialising.
	q.settings(t0.Add(1500*time.Microsecond), Settings{Rate: 8_000_000, Delay: 10 * time.Millisecond, Down: true})
	if q.enqueue(t0.Add(2*time.Millisecond), pkt(1000)) {
		t.Fatal("accepted a packet while down")
	}
	q.settings(t0.Add(3*time.Millisecond), Settings{Rate: 8_000_000, Delay: 10 * time.Millisecond})
	if got := len(drain(q, t0.Add(time.Second))); got != 0 {
		t.Fatalf("delivered %d packets from before the outage", got)
	}
	if c := q.counters(); c.OutageDrops != 3 || c.QueuePackets != 0 {
		t.Fatalf("counters %+v", c)
	}
	q.enqueue(t0.Add(2*time.Second), pkt(1000))
	if got := len(drain(q, t0.Add(2*time.Second+11*time.Millisecond))); got != 1 {
		t.Fatal("link did not recover")
	}
}

func TestShaperLiveRateChange(t *testing.T) {
	q := newShaper(Settings{Rate: 8_000_000}, 1, nil)
	for range 3 {
		q.enqueue(t0, pkt(1000))
	}
	// At 1 ms the first packet is done; the rest go at 16 Mbit/s (0.5 ms).
	q.settings(t0.Add(time.Millisecond), Settings{Rate: 16_000_000})
	if got := len(drain(q, t0.Add(2*time.Millisecond))); got != 3 {
		t.Fatalf("delivered %d by 2ms, want 3", got)
	}
}

// The MTU counts a datagram as the IP packet it would be on a path (its
// IPv4 and UDP headers included) and drops larger ones on arrival, counted
// apart from tail drops and losses; a lower MTU leaves what is queued.
func TestShaperMTU(t *testing.T) {
	freed := 0
	q := newShaper(Settings{Rate: 8_000_000, MTU: 1280}, 1, func(*packet) { freed++ })
	if !q.enqueue(t0, pkt(1280-LinkHeaders)) {
		t.Fatal("a datagram whose IP packet is the MTU was dropped")
	}
	if q.enqueue(t0, pkt(1280-LinkHeaders+1)) {
		t.Fatal("a datagram one byte over the MTU was queued")
	}
	if c := q.counters(); c.MTUDrops != 1 || c.Drops != 0 || c.Lost != 0 || c.OutageDrops != 0 || freed != 1 {
		t.Fatalf("counters %+v, freed %d; want one MTU drop and nothing else", c, freed)
	}
	q.enqueue(t0, pkt(1200))
	q.settings(t0, Settings{Rate: 8_000_000, MTU: 576})
	if q.enqueue(t0, pkt(1200)) {
		t.Fatal("a datagram over the lowered MTU was queued")
	}
	q.settings(t0, Settings{Rate: 8_000_000}) // no limit
	if !q.enqueue(t0, pkt(60_000)) {
		t.Fatal("no MTU: a large datagram was dropped")
	}
	if got := len(drain(q, t0.Add(time.Second))); got != 3 || q.counters().MTUDrops != 2 {
		t.Fatalf("delivered %d, %d MTU drops; want the three that fitted on arrival and 2 drops", got, q.counters().MTUDrops)
	}
}

func TestSettingsString(t *testing.T) {
	for set, want := range map[Settings]string{
		{Rate: 20_000_000, Delay: 10 * time.Millisecond, Queue: QueueLimit{Packets: 256}}: "rate 20mbit, delay 10ms, queue 256p, loss 0, mtu unlimited",
		{MTU: 1280, Loss: 0.01, UplinkDown: true}:                                         "rate unlimited, delay 0s, queue 1000p, loss 0.01, mtu 1280, uplink down",
		{Down: true, DownlinkDown: true}:                                                  "rate unlimited, delay 0s, queue 1000p, loss 0, mtu unlimited, down",
	} {
		if got := set.String(); got != want {
			t.Errorf("%#v: %q, want %q", set, got, want)
		}
	}
}
