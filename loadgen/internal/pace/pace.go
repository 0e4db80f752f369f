// Package pace computes open-model send schedules: how many bytes a sender
// owes at a given moment when it must send at a fixed rate from a fixed
// start, however late it wakes and however long its writes block; and the
// waits of the load and the sink, which end early with their context.
package pace

import (
	"context"
	"io"
	"math"
	"time"
)

// Quantum bounds: a paced sender waits until at least MinQuantum bytes are
// owed (or what the rate yields in QuantumPeriod, when that is more) and
// sends at most MaxQuantum bytes per write. 20 ms quanta keep ten thousand
// slow connections to a few hundred thousand wake-ups a second at most,
// and a one-second window within a couple of percent of the rate.
const (
	MinQuantum    = 1 << 10
	MaxQuantum    = 32 << 10
	QuantumPeriod = 20 * time.Millisecond
)

// Schedule is the send schedule of one connection: byte k is due at
// start + k/rate. It is not safe for concurrent use.
//
// The schedule never slips: a sender that wakes late or whose write
// blocked owes everything that fell due meanwhile, and sends it as fast as
// the path accepts. A slow path therefore shows as a growing Behind, not
// as a silently lower offered load (no coordinated omission).
type Schedule struct {
	start   time.Time
	rate    float64 // bytes per second, > 0
	sent    int64
	quantum int64
}

// New returns the schedule of a sender that starts at start and sends
// bytesPerSecond (> 0).
func New(start time.Time, bytesPerSecond float64) *Schedule {
	q := int64(bytesPerSecond * QuantumPeriod.Seconds())
	return &Schedule{start: start, rate: bytesPerSecond, quantum: min(max(q, MinQuantum), MaxQuantum)}
}

// due returns how many bytes are due by now since start.
func (s *Schedule) due(now time.Time) int64 {
	d := now.Sub(s.start).Seconds() * s.rate
	if d <= 0 {
		return 0
	}
	return int64(math.Min(d, math.MaxInt64/2))
}

// Next returns how many bytes to send now, at most MaxQuantum, or, when
// less than a quantum is owed, 0 and how long to wait before asking again.
func (s *Schedule) Next(now time.Time) (n int64, wait time.Duration) {
	owed := s.due(now) - s.sent
	if owed >= s.quantum {
		return min(owed, MaxQuantum), 0
	}
	at := s.start.Add(time.Duration(float64(s.sent+s.quantum) / s.rate * float64(time.Second)))
	return 0, max(at.Sub(now), time.Millisecond)
}

// Sent records that n bytes were sent.
func (s *Schedule) Sent(n int64) { s.sent += n }

// Behind returns how many bytes the sender is behind its schedule at now
// (0 when on time).
func (s *Schedule) Behind(now time.Time) int64 {
	return max(s.due(now)-s.sent, 0)
}

// Sleep waits for d or until ctx ends; it reports whether ctx is still
// live, so that a loop can stop at once when it is not.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// zeros is the payload of every Send; it is only ever read.
var zeros [MaxQuantum]byte

// Send writes zeros to w until ctx ends or a write fails, passing the size
// of every write, the partial ones included, to sent. With bytesPerSecond
// above 0 it follows a Schedule that starts now, so a sender that wakes
// late or whose write blocked sends what fell due meanwhile at once;
// otherwise it writes MaxQuantum at a time, as fast as w takes them.
//
// It returns the write's error, or nil when ctx ended. A write blocked on
// a full window does not see ctx: the caller ends it with a deadline.
func Send(ctx context.Context, w io.Writer, bytesPerSecond float64, sent func(int64)) error {
	var sched *Schedule
	var timer *time.Timer
	if bytesPerSecond > 0 {
		sched = New(time.Now(), bytesPerSecond)
		timer = time.NewTimer(time.Hour)
		defer timer.Stop()
	}
	for ctx.Err() == nil {
		n := int64(MaxQuantum)
		if sched != nil {
			var wait time.Duration
			if n, wait = sched.Next(time.Now()); n == 0 {
				timer.Reset(wait)
				select {
				case <-ctx.Done():
					return nil
				case <-timer.C:
				}
				continue
			}
		}
		m, err := w.Write(zeros[:n])
		sent(int64(m))
		if sched != nil {
			sched.Sent(int64(m))
		}
		if err != nil {
			return err
		}
	}
	return nil
}
