package middleware

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// Delivery is one reading of the TCP connections of the tunnel's users: for
// each connection, keyed by what identifies it for as long as it lives (a
// kernel socket's cookie), how much of what it sent the far end has
// acknowledged (tcpi_delivered, tcpi_bytes_acked, or the highest
// acknowledgement number seen), in any unit that only grows while the
// connection lives.
type Delivery map[uint64]uint64

// A DeliverySource reads the tunnel's users' TCP connections (see
// [Delivery]); package middleware/sockdiag reads the kernel's through its
// socket table, the lab's client its netstack's. A reading that fails
// decides nothing.
type DeliverySource interface {
	ReadDelivery() (Delivery, error)
}

// DeliverySourceFunc adapts a function to a DeliverySource.
type DeliverySourceFunc func() (Delivery, error)

// ReadDelivery calls f.
func (f DeliverySourceFunc) ReadDelivery() (Delivery, error) { return f() }

// deliveryInterval is how often the delivery is read: once a second, or
// once an Interval when that is longer. A reading of the socket table
// costs in proportion to the sockets there, and a second is a third of
// the default Window.
const deliveryInterval = time.Second

// deliveryProof reads the delivery once a second and proves the tunnel
// alive while some connection's acknowledged amount grew between two
// readings of it within the Window: the far end received that data and
// its acknowledgement came back, which no tunnel dead in either direction
// produces (a far side that cannot hear us retransmits what it sent, and
// acknowledges nothing new). It only passes: idle, app-limited and
// zero-window connections show no progress, so none proves nothing.
type deliveryProof struct {
	cfg   Evidence
	clock clockwork.Clock

	mu sync.Mutex
	// last is the previous reading, made at lastAt; nil before the first
	// and after a heal.
	last   Delivery
	lastAt time.Time
	// tunnel counts forget's calls: a reading begun before one is of the
	// old tunnel.
	tunnel uint64
	// progressAt is the reading at which connections last made progress,
	// and flows how many did; zero: none since the start or the heal.
	progressAt time.Time
	flows      int
	err        error
}

func newDeliveryProof(cfg Evidence, clock clockwork.Clock) *deliveryProof {
	return &deliveryProof{cfg: cfg, clock: clock}
}

// run reads the delivery once a second (see deliveryInterval) until ctx
// ends.
func (d *deliveryProof) run(ctx context.Context) {
	every := max(deliveryInterval, d.cfg.Interval)
	for {
		d.sample()
		select {
		case <-ctx.Done():
			return
		case <-d.clock.After(every):
		}
	}
}

// sample reads the delivery now and compares it with the last reading.
// Growth read after failed readings, or over two reading periods after the
// last good one (a stalled reading), may have come just after that one,
// and is stamped then; a reading begun before a forget is of the old
// tunnel and kept by nothing.
func (d *deliveryProof) sample() {
	d.mu.Lock()
	tunnel := d.tunnel
	d.mu.Unlock()
	cur, err := d.cfg.Delivery.ReadDelivery()
	now := d.clock.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tunnel != tunnel {
		return
	}
	failedBefore := d.err != nil
	d.err = err
	if err != nil {
		return // the next reading compares with the last good one
	}
	progressed := 0
	for key, acked := range cur {
		if before, ok := d.last[key]; ok && acked > before {
			progressed++
		}
	}
	if progressed > 0 {
		d.progressAt, d.flows = now, progressed
		if failedBefore || now.Sub(d.lastAt) > 2*max(deliveryInterval, d.cfg.Interval) {
			d.progressAt = d.lastAt
		}
	}
	d.last, d.lastAt = cur, now
}

// forget forgets the tunnel before a heal: only connections through the
// new one, read twice, prove it.
func (d *deliveryProof) forget() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.last, d.lastAt, d.progressAt, d.flows = nil, time.Time{}, time.Time{}, 0
	d.tunnel++
}

// decide passes while connections made progress within the Window, and
// decides nothing otherwise.
func (d *deliveryProof) decide(now time.Time) verdict {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.progressAt.IsZero() || now.Sub(d.progressAt) >= d.cfg.Window {
		return verdict{}
	}
	return verdict{ok: true, proof: ProofDelivery, text: fmt.Sprintf("delivery: %d TCP connection(s) through the tunnel had data acknowledged by the far end %v ago",
		d.flows, roundSeconds(now.Sub(d.progressAt)))}
}
