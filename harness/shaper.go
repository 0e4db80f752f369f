package harness

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Settings describe the shaped link. Both directions get the same settings,
// each with its own FIFO queue. The zero value is an unlimited, undelayed,
// lossless link with the default queue limit.
type Settings struct {
	// Rate is the serialisation rate of each direction in bits per second
	// of UDP payload (the encrypted WireGuard packets); 0 is unlimited.
	Rate Rate
	// Delay is the one-way propagation delay added after serialisation.
	Delay time.Duration
	// Queue is the tail-drop limit of each direction's FIFO.
	Queue QueueLimit
	// Loss is the probability in 0..1 that an arriving packet is lost.
	Loss float64
	// Down drops every packet, queued, in flight or arriving: an outage.
	Down bool
	// UplinkDown and DownlinkDown do the same in one direction only
	// (client to server, server to client): a one-way outage, such as a
	// path that lets the client's packets out and nothing back.
	UplinkDown, DownlinkDown bool
	// MTU is the largest IP packet the path carries, in bytes, counted as
	// a network engineer counts it: a datagram of the link (the tunnel's
	// encrypted UDP payload) and the LinkHeaders (IPv4 and UDP) it would
	// travel with on a real path. A larger one, in either direction, is
	// dropped silently on arrival (Counters.MTUDrops), as on a path whose
	// ICMP "fragmentation needed" is filtered (PPPoE, LTE): an MTU black
	// hole. WireGuard makes an inner packet WireGuardOverhead bytes
	// longer, after padding it to a multiple of 16 (never past the
	// tunnel's MTU), so the tunnel's full 1420-byte packets are 1480-byte
	// IP packets here and MTU 1280 passes inner packets of up to 1216
	// bytes. Zero: no limit; else MinMTU..MaxMTU. Packets already queued
	// when it is lowered still go through.
	MTU int
}

// The sizes that Settings.MTU is measured with.
const (
	// LinkHeaders are the bytes of IPv4 (20) and UDP (8) headers that a
	// datagram of the link would carry on a real path: its IP packet is
	// its length and these.
	LinkHeaders = 20 + 8
	// WireGuardOverhead is what WireGuard adds to an inner packet in its
	// UDP payload: a 16-byte header (type, receiver, counter) and the
	// 16-byte Poly1305 tag.
	WireGuardOverhead = 16 + 16
	// MinMTU is IPv4's least MTU that every host must take (RFC 791);
	// MaxMTU the largest IP packet.
	MinMTU = 576
	MaxMTU = 65535
)

// fits reports whether a datagram of n bytes fits the MTU of s.
func (s Settings) fits(n int) bool { return s.MTU == 0 || n+LinkHeaders <= s.MTU }

// String describes s as the lab prints it: "rate 20mbit, delay 10ms,
// queue 256p, loss 0, mtu unlimited", and any outage.
func (s Settings) String() string {
	out := fmt.Sprintf("rate %s, delay %s, queue %s, loss %g, mtu %s", s.Rate, s.Delay, s.Queue, s.Loss, FormatMTU(s.MTU))
	switch {
	case s.Down:
		out += ", down"
	case s.UplinkDown && s.DownlinkDown:
		out += ", uplink and downlink down"
	case s.UplinkDown:
		out += ", uplink down"
	case s.DownlinkDown:
		out += ", downlink down"
	}
	return out
}

// direction returns s as one direction sees it: uplink (client to server)
// or downlink, Down set where that direction is down.
func (s Settings) direction(uplink bool) Settings {
	s.Down = s.Down || (uplink && s.UplinkDown) || (!uplink && s.DownlinkDown)
	s.UplinkDown, s.DownlinkDown = false, false
	return s
}

// Validate reports the first invalid field, naming it.
func (s Settings) Validate() error {
	switch {
	case s.Rate < 0 || s.Rate > MaxRate:
		return fmt.Errorf("rate: %d out of range: %w", s.Rate, ErrSyntax)
	case s.Delay < 0 || s.Delay > MaxDelay:
		return fmt.Errorf("delay: %v out of range 0..%v: %w", s.Delay, MaxDelay, ErrSyntax)
	case !(s.Loss >= 0 && s.Loss <= 1): // also rejects NaN
		return fmt.Errorf("loss: %v out of range 0..1: %w", s.Loss, ErrSyntax)
	case s.MTU != 0 && (s.MTU < MinMTU || s.MTU > MaxMTU):
		return fmt.Errorf("mtu: %d bytes is neither 0 (no limit) nor in %d..%d: %w", s.MTU, MinMTU, MaxMTU, ErrSyntax)
	}
	return s.Queue.validate()
}

// Counters describe one direction of the link. Packets and bytes count what
// was delivered; the drop counters what was not.
type Counters struct {
	Bytes   uint64 `json:"bytes"`
	Packets uint64 `json:"packets"`
	// Drops counts tail drops: packets that found the queue full.
	Drops uint64 `json:"drops"`
	// Lost counts packets dropped at random (Settings.Loss).
	Lost uint64 `json:"lost"`
	// OutageDrops counts packets dropped while the link was down, including
	// those queued or in flight when it went down.
	OutageDrops uint64 `json:"outage_drops"`
	// MTUDrops counts packets dropped for being larger than the MTU
	// (Settings.MTU).
	MTUDrops uint64 `json:"mtu_drops"`
	// QueueBytes and QueuePackets are the current queue occupancy.
	QueueBytes   int `json:"queue_bytes"`
	QueuePackets int `json:"queue_packets"`
	// QueueHighBytes and QueueHighPackets are the high-water marks.
	QueueHighBytes   int `json:"queue_high_bytes"`
	QueueHighPackets int `json:"queue_high_packets"`
}

// packet is one UDP payload travelling through a shaper.
type packet struct {
	buf     []byte // data is buf[:n]; buf may come from a pool
	n       int
	arrive  time.Time // entered the queue
	deliver time.Time // leaves the far end of the wire
}

// shaper is one direction of the link as a pure state machine: it owns no
// goroutine and reads no clock, so tests drive it with any time they like.
// The caller serialises access.
//
// A packet waits in the FIFO until the link has serialised every packet
// before it, takes size*8/rate to serialise (computed from the virtual time
// busyUntil, not from when the caller happens to look, so late wake-ups
// cause bursts but never a rate above the configured one), then travels for
// Delay on the wire. Only packets not yet serialised count against the
// queue limit.
type shaper struct {
	set       Settings
	limit     QueueLimit
	rng       *rand.Rand
	queue     fifo
	qBytes    int
	busyUntil time.Time
	wire      fifo // serialised, waiting for their delivery time
	c         Counters
	free      func(*packet) // returns dropped packets' buffers; may be nil
}

func newShaper(s Settings, seed uint64, free func(*packet)) *shaper {
	return &shaper{
		set:   s,
		limit: s.Queue.orDefault(),
		rng:   rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		free:  free,
	}
}

func (q *shaper) drop(p *packet) {
	if q.free != nil {
		q.free(p)
	}
}

// settings changes the settings at now. Packets not yet serialised are
// serialised at the new rate; packets on the wire keep their delivery time.
// Going down discards everything queued or on the wire.
func (q *shaper) settings(now time.Time, s Settings) {
	q.advance(now)
	q.set = s
	q.limit = s.Queue.orDefault()
	if s.Down {
		q.flush()
	}
}

func (q *shaper) flush() {
	for p := q.queue.pop(); p != nil; p = q.queue.pop() {
		q.c.OutageDrops++
		q.drop(p)
	}
	for p := q.wire.pop(); p != nil; p = q.wire.pop() {
		q.c.OutageDrops++
		q.drop(p)
	}
	q.qBytes = 0
}

// enqueue offers p to the queue at now. It reports whether p was accepted;
// if not, p has been handed to free.
func (q *shaper) enqueue(now time.Time, p *packet) bool {
	q.advance(now)
	switch {
	case q.set.Down:
		q.c.OutageDrops++
	case !q.set.fits(p.n): // before the loss: the path never carries it
		q.c.MTUDrops++
	case q.set.Loss > 0 && q.rng.Float64() < q.set.Loss:
		q.c.Lost++
	case q.limit.Packets > 0 && q.queue.len()+1 > q.limit.Packets,
		q.limit.Bytes > 0 && q.qBytes+p.n > q.limit.Bytes:
		q.c.Drops++
	default:
		p.arrive = now
		q.queue.push(p)
		q.qBytes += p.n
		q.c.QueueHighBytes = max(q.c.QueueHighBytes, q.qBytes)
		q.c.QueueHighPackets = max(q.c.QueueHighPackets, q.queue.len())
		return true
	}
	q.drop(p)
	return false
}

// txTime is how long n bytes take to serialise.
func (q *shaper) txTime(n int) time.Duration {
	if q.set.Rate <= 0 {
		return 0
	}
	return time.Duration(int64(n) * 8 * int64(time.Second) / int64(q.set.Rate))
}

// advance moves every packet whose serialisation has finished by now from
// the queue to the wire.
func (q *shaper) advance(now time.Time) {
	for {
		h := q.queue.peek()
		if h == nil {
			return
		}
		start := h.arrive
		if q.busyUntil.After(start) {
			start = q.busyUntil
		}
		done := start.Add(q.txTime(h.n))
		if done.After(now) {
			return
		}
		q.queue.pop()
		q.qBytes -= h.n
		q.busyUntil = done
		h.deliver = done.Add(q.set.Delay)
		// Keep the wire FIFO even when the delay was just lowered.
		if t := q.wire.peekLast(); t != nil && t.deliver.After(h.deliver) {
			h.deliver = t.deliver
		}
		q.wire.push(h)
	}
}

// next returns the next packet due at now, or nil and how long until the
// next packet can be due (negative when the shaper is empty).
func (q *shaper) next(now time.Time) (*packet, time.Duration) {
	q.advance(now)
	if h := q.wire.peek(); h != nil && !h.deliver.After(now) {
		q.wire.pop()
		q.c.Bytes += uint64(h.n)
		q.c.Packets++
		return h, 0
	}
	wait := time.Duration(-1)
	if h := q.wire.peek(); h != nil {
		wait = h.deliver.Sub(now)
	}
	if h := q.queue.peek(); h != nil {
		start := h.arrive
		if q.busyUntil.After(start) {
			start = q.busyUntil
		}
		// The head cannot be delivered before it is serialised and delayed,
		// but waking at the end of its serialisation keeps the queue
		// occupancy (and so tail drops) exact.
		d := start.Add(q.txTime(h.n)).Sub(now)
		if wait < 0 || d < wait {
			wait = d
		}
	}
	return nil, wait
}

func (q *shaper) counters() Counters {
	c := q.c
	c.QueueBytes = q.qBytes
	c.QueuePackets = q.queue.len()
	return c
}

// fifo is a queue of packets on a slice that reuses its backing array.
type fifo struct {
	s    []*packet
	head int
}

func (f *fifo) len() int { return len(f.s) - f.head }

func (f *fifo) push(p *packet) {
	if f.head > 0 && f.head == len(f.s) {
		f.s, f.head = f.s[:0], 0
	} else if f.head > 1024 && f.head*2 > len(f.s) {
		n := copy(f.s, f.s[f.head:])
		clear(f.s[n:])
		f.s, f.head = f.s[:n], 0
	}
	f.s = append(f.s, p)
}

func (f *fifo) peek() *packet {
	if f.head == len(f.s) {
		return nil
	}
	return f.s[f.head]
}

func (f *fifo) peekLast() *packet {
	if f.head == len(f.s) {
		return nil
	}
	return f.s[len(f.s)-1]
}

func (f *fifo) pop() *packet {
	if f.head == len(f.s) {
		return nil
	}
	p := f.s[f.head]
	f.s[f.head] = nil
	f.head++
	return p
}
