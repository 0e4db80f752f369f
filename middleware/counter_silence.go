package middleware

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// ErrSilentTunnel is wrapped by the error of a check that the counters
// failed: the tunnel kept sending and nothing came back.
var ErrSilentTunnel = errors.New("traffic evidence: sending into silence")

// A sample is the counters read at one moment, and the most the light
// probes had sent by then (own).
type sample struct {
	at  time.Time
	c   Counters
	own uint64
}

// counterSilence samples a tunnel's counters every Interval and fails a
// check when the tunnel has been sending into silence for a Window. What
// it receives only ends a silence: it never passes a check (see
// [Evidence]).
type counterSilence struct {
	cfg   Evidence
	clock clockwork.Clock
	// own returns the most the light probes have sent through the tunnel
	// so far: the silence rule leaves it out, since a quiet probe target
	// (see [Evidence]) decides nothing, and on an idle tunnel the probes'
	// own packets into its silence are all that is sent.
	own func() uint64

	mu sync.Mutex
	// last is the latest sample, zero before the first and after a gap.
	last sample
	// quiet is the sample at which the silence began: the last one with
	// something received (or the first). silentSince is when the first
	// send after it was seen (zero: none).
	quiet       sample
	silentSince time.Time
	// read says whether a sample was taken, err what its reading failed
	// with (nil: it did not).
	read bool
	err  error
	// tunnel counts forget's calls: a sample begun before one is of the
	// old tunnel.
	tunnel uint64
}

func newCounterSilence(cfg Evidence, clock clockwork.Clock, own func() uint64) *counterSilence {
	return &counterSilence{cfg: cfg, clock: clock, own: own}
}

// run samples every Interval until ctx ends.
func (s *counterSilence) run(ctx context.Context) {
	for {
		s.sample()
		select {
		case <-ctx.Done():
			return
		case <-s.clock.After(s.cfg.Interval):
		}
	}
}

// sample reads the counters once and folds them in; one begun before a
// forget is dropped.
func (s *counterSilence) sample() {
	s.mu.Lock()
	tunnel := s.tunnel
	s.mu.Unlock()
	own := s.own() // before the counters: they may count more, never less
	c, err := s.cfg.Source.ReadCounters()
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tunnel != tunnel {
		return
	}
	cur := sample{at: now, c: c, own: own}
	s.read, s.err = true, err
	switch {
	case err != nil:
		// A gap: whatever comes after it is compared with nothing before.
		s.last, s.quiet, s.silentSince = sample{}, sample{}, time.Time{}
		return
	case s.last.at.IsZero() || c.RxBytes < s.last.c.RxBytes || c.TxBytes < s.last.c.TxBytes:
		// The first sample, after a gap, or of a device made anew.
		s.quiet, s.silentSince = cur, time.Time{}
	case c.RxBytes > s.last.c.RxBytes:
		s.quiet, s.silentSince = cur, time.Time{}
	case c.TxBytes > s.last.c.TxBytes && s.silentSince.IsZero():
		// The send happened after the last sample; counting from now
		// keeps the silence on the short side.
		s.silentSince = now
	}
	s.last = cur
}

// forget forgets the old tunnel's silence: a heal keeps the interface
// and its counters where the VPN does (OpenVPN's persist-tun), and what
// the old tunnel sent into silence says nothing of the new one, which is
// compared with its own samples only.
func (s *counterSilence) forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last.at, s.quiet, s.silentSince = time.Time{}, sample{}, time.Time{} // last.c stays, for the status
	s.tunnel++
}

// latest returns the latest reading, whether there was one, and its error.
func (s *counterSilence) latest() (Counters, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last.c, s.read, s.err
}

// decide returns the counters' verdict now: a failure when the tunnel has
// sent MinSentBytes or more into silence for a Window, besides the light
// probes, pending while that silence is younger, nothing otherwise (or
// when the samples are not fresh).
func (s *counterSilence) decide(now time.Time) verdict {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last.at.IsZero() || now.Sub(s.last.at) > 2*s.cfg.Interval || s.silentSince.IsZero() {
		return verdict{}
	}
	sent := s.last.c.TxBytes - s.quiet.c.TxBytes
	sent -= min(sent, s.last.own-s.quiet.own)
	if sent < s.cfg.MinSentBytes {
		return verdict{}
	}
	// The silence counts up to the last sample: what came in after it is
	// not known yet.
	if silent := s.last.at.Sub(s.silentSince); silent < s.cfg.Window {
		return verdict{pending: true, until: s.silentSince.Add(s.cfg.Window)}
	}
	return verdict{ok: true, proof: ProofCounters, err: fmt.Errorf("%w: sent %s in %v, received nothing", ErrSilentTunnel,
		amount(sent, s.last.c.TxPackets-s.quiet.c.TxPackets), roundSeconds(s.last.at.Sub(s.silentSince)))}
}
