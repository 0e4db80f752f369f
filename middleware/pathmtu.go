package middleware

import (
	"errors"
	"fmt"
	"time"
)

// ErrPathMTU is wrapped by the error of a check failed on a path MTU black
// hole (Evidence.FailOnMTU): small probes are answered, probes of the
// tunnel interface's MTU are not.
var ErrPathMTU = errors.New("path MTU black hole")

// DefaultMTUProbeEvery: every fourth light probe is one of the path MTU,
// one a second at the default Interval.
const DefaultMTUProbeEvery = 4

// mtuSearchFloor is where the search for the path MTU stops going down:
// IPv4's least MTU. mtuSearchStep is how close it gets before it stops.
const (
	mtuSearchFloor = 576
	mtuSearchStep  = 8
)

// pathMTU measures the path MTU with every MTUProbeEvery-th light probe
// (a big probe): at the tunnel interface's MTU first, and, while those are
// lost, halving the gap between the largest size answered and the
// smallest lost. A big probe counts as lost only when a small probe sent
// after it was answered: the tunnel works, so the size is what stopped it.
// An outage, in which nothing is answered, says nothing of the MTU. Called
// with the proofOfLife's mu held.
type pathMTU struct {
	every int
	count int // probes sent since the last big one
	mtu   int // the interface's MTU at the last big probe; 0 before
	// lo is the largest size answered since the search last started over,
	// hi the smallest lost (0: none).
	lo, hi int
	// tries counts the big probes since the search converged, to retry
	// the full MTU every few of them.
	tries int
	out   map[time.Time]int // big probes out: when sent, and their size
	// answers are the big probes answered in the last LossWindow.
	answers []sizeAt
	// holeSince is when a probe of the full MTU was first lost since one
	// was last answered; zero when none was. oldHole is the old tunnel's
	// holeSince after a forget, until the new one's first probe of the
	// full MTU ends: lost too, the hole goes on from then.
	holeSince, oldHole time.Time
}

type sizeAt struct {
	at   time.Time
	size int
}

// due reports whether the next probe is a big one.
func (s *pathMTU) due() bool {
	s.count++
	if s.count < s.every {
		return false
	}
	s.count = 0
	return true
}

// next returns the size of the next big probe, sent at sent, given the
// interface's MTU now, and records it as out.
func (s *pathMTU) next(sent time.Time, mtu int) int {
	if mtu != s.mtu {
		s.mtu, s.lo, s.hi, s.tries, s.holeSince = mtu, 0, 0, 0, time.Time{}
	}
	floor := min(max(s.lo, mtuSearchFloor), mtu)
	size := mtu
	switch {
	case s.hi == 0:
	case s.hi-floor > mtuSearchStep:
		size = (floor + s.hi) / 2
	default: // converged: confirm the largest size, and now and then retry the MTU
		s.tries++
		if s.tries%4 != 0 {
			size = max(s.lo, floor)
		}
	}
	if s.out == nil {
		s.out = map[time.Time]int{}
	}
	s.out[sent] = size
	return size
}

// answered records the answer, at now, of the big probe sent at sent.
func (s *pathMTU) answered(sent, now time.Time) {
	size, ok := s.out[sent]
	if !ok {
		return
	}
	delete(s.out, sent)
	s.answers = append(s.answers, sizeAt{at: now, size: size})
	if s.hi != 0 && size >= s.hi {
		s.hi = 0 // the path carries more than it did
	}
	s.lo = max(s.lo, size)
	if size >= s.mtu {
		s.holeSince, s.oldHole, s.hi, s.tries = time.Time{}, time.Time{}, 0, 0
	}
}

// laterAnswered records that a probe sent at sent was answered at now:
// every big probe sent before it and still out was lost for its size.
func (s *pathMTU) laterAnswered(sent, now time.Time) {
	for at, size := range s.out {
		if !at.Before(sent) {
			continue
		}
		delete(s.out, at)
		if size <= s.lo {
			s.lo = 0 // the path carries less than it did: search again
		}
		if s.hi == 0 || size < s.hi {
			s.hi = size
		}
		if size >= s.mtu && s.holeSince.IsZero() {
			s.holeSince = now
			if !s.oldHole.IsZero() {
				s.holeSince, s.oldHole = s.oldHole, time.Time{}
			}
		}
	}
}

// expire forgets the big probes sent before cutoff that are still out
// (timed out, in an outage most likely), and the answers older than
// lossFrom.
func (s *pathMTU) expire(cutoff, lossFrom time.Time) {
	for at := range s.out {
		if at.Before(cutoff) {
			delete(s.out, at)
		}
	}
	drop := 0
	for drop < len(s.answers) && s.answers[drop].at.Before(lossFrom) {
		drop++
	}
	s.answers = append(s.answers[:0], s.answers[drop:]...)
}

// forget starts the search over on a new tunnel: its next big probe is of
// the full MTU, and the old tunnel's black hole is seen again only if the
// new path loses that probe too (a heal rarely cures a black hole). The
// interface's MTU and the answers of the loss window stay, for the
// status.
func (s *pathMTU) forget() {
	*s = pathMTU{every: s.every, mtu: s.mtu, answers: s.answers, oldHole: s.holeSince}
}

// largest returns the largest size answered in the answers kept.
func (s *pathMTU) largest() int {
	n := 0
	for _, a := range s.answers {
		n = max(n, a.size)
	}
	return n
}

// blackHole returns the error of a path MTU black hole at now, when probes
// of the full MTU have been lost for a whole window while small ones were
// answered, or nil.
func (s *pathMTU) blackHole(now time.Time, window time.Duration) error {
	if s.holeSince.IsZero() || now.Sub(s.holeSince) < window {
		return nil
	}
	answered := max(s.largest(), s.lo)
	if answered == 0 {
		return fmt.Errorf("%w: no probe above the small ones answered, %d bytes (the interface's MTU) not, for %v",
			ErrPathMTU, s.mtu, roundSeconds(now.Sub(s.holeSince)))
	}
	return fmt.Errorf("%w: %d bytes answered, %d not (the interface's MTU is %d), for %v",
		ErrPathMTU, answered, max(s.hi, answered+1), s.mtu, roundSeconds(now.Sub(s.holeSince)))
}
