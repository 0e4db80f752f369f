package middleware

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/internal/units"
)

// Defaults for the zero fields of [Evidence].
const (
	DefaultEvidenceWindow   = 5 * time.Second
	DefaultEvidenceInterval = time.Second
	DefaultMinSentBytes     = 4096
)

// ErrSilentTunnel is wrapped by the error of a check that traffic evidence
// failed: the tunnel kept sending and nothing came back.
var ErrSilentTunnel = errors.New("traffic evidence: sending into silence")

// Evidence is Config.Evidence: a check first reads the tunnel's own traffic
// counters, sampled every Interval, and decides from them when they say
// enough, without dialing:
//   - something received in the last Window: the tunnel delivers, the
//     check passes at once;
//   - MinSentBytes or more sent, and nothing received, for a whole Window
//     since the first unanswered send: the check fails at once;
//   - MinSentBytes or more sent into silence, but not yet for a whole
//     Window: the check waits for the counters to decide, a Window at most,
//     rather than dial into a tunnel that is about to fail;
//   - anything else (an idle tunnel, a lone packet, a start): the active
//     check runs as without evidence.
//
// So a saturated tunnel proves itself for free, and a dead one fails a
// Window after it fell silent. The rules cannot fail a working tunnel on
// traffic that has a way back (TCP, DNS, QUIC: acknowledgements count), on
// one lost packet or a WireGuard keepalive (less than MinSentBytes), nor on
// queueing delay shorter than Window (the silence is timed from the first
// unanswered send, not from the start of the window). A stream that only
// sends, such as one-way UDP, gets no reply to count: over WireGuard the
// peer's keepalive comes 10 s after data, so give such tunnels a Window
// over 10 s.
//
// Counters that are not fresh (the source fails, or sampling stops) decide
// nothing, so the active check runs: evidence never keeps a state alive on
// old samples.
type Evidence struct {
	// Source reads the counters. Required.
	Source CounterSource
	// Window is how far back evidence looks. Zero means
	// DefaultEvidenceWindow.
	Window time.Duration
	// Interval is the sampling period. Zero means DefaultEvidenceInterval.
	Interval time.Duration
	// MinSentBytes is how much must go unanswered for the silence rule to
	// fail a check. Zero means DefaultMinSentBytes.
	MinSentBytes uint64
	// MinReceivedBytes is how much must come in within Window to pass a
	// check. Zero means 1: anything.
	MinReceivedBytes uint64
}

func (e Evidence) withDefaults() (Evidence, error) {
	if e.Source == nil {
		return e, errors.New("Evidence.Source: nil")
	}
	if e.Window < 0 || e.Interval < 0 {
		return e, fmt.Errorf("Evidence: negative Window %v or Interval %v", e.Window, e.Interval)
	}
	if e.Window == 0 {
		e.Window = DefaultEvidenceWindow
	}
	if e.Interval == 0 {
		e.Interval = DefaultEvidenceInterval
	}
	if e.Interval > e.Window {
		return e, fmt.Errorf("Evidence.Interval: %v is longer than the Window %v", e.Interval, e.Window)
	}
	if e.MinSentBytes == 0 {
		e.MinSentBytes = DefaultMinSentBytes
	}
	e.MinReceivedBytes = max(e.MinReceivedBytes, 1)
	return e, nil
}

// A sample is the counters read at one moment.
type sample struct {
	at time.Time
	c  Counters
}

// evidence keeps the samples of one monitor and decides from them.
type evidence struct {
	cfg   Evidence
	clock clockwork.Clock

	mu sync.Mutex
	// recent holds the samples of the last Window and the one before,
	// oldest first.
	recent []sample
	// lastRx is the sample at which something was last received;
	// silentSince is when the first send after it was seen (zero: none).
	lastRx      sample
	silentSince time.Time
	// readErr is why the last read failed; nil when it worked.
	readErr error
}

func newEvidence(cfg Evidence, clock clockwork.Clock) *evidence {
	return &evidence{cfg: cfg, clock: clock}
}

// run samples every Interval until ctx ends.
func (e *evidence) run(ctx context.Context) {
	for {
		e.sample()
		select {
		case <-ctx.Done():
			return
		case <-e.clock.After(e.cfg.Interval):
		}
	}
}

// sample reads the counters once and folds them in.
func (e *evidence) sample() {
	c, err := e.cfg.Source.ReadCounters()
	now := e.clock.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.readErr = err
	if err != nil {
		return
	}
	cur := sample{at: now, c: c}
	if len(e.recent) == 0 || c.RxBytes < e.last().c.RxBytes || c.TxBytes < e.last().c.TxBytes {
		// The first sample, or a device made anew: start over.
		e.recent, e.lastRx, e.silentSince = e.recent[:0], cur, time.Time{}
	} else {
		prev := e.last()
		switch {
		case c.RxBytes > prev.c.RxBytes:
			e.lastRx, e.silentSince = cur, time.Time{}
		case c.TxBytes > prev.c.TxBytes && e.silentSince.IsZero():
			// The send happened after prev; counting from now keeps the
			// silence on the short side.
			e.silentSince = now
		}
	}
	e.recent = append(e.recent, cur)
	// Keep one sample at or before the window's start.
	start := now.Add(-e.cfg.Window)
	drop := 0
	for drop+1 < len(e.recent) && !e.recent[drop+1].at.After(start) {
		drop++
	}
	e.recent = append(e.recent[:0], e.recent[drop:]...)
}

func (e *evidence) last() sample { return e.recent[len(e.recent)-1] }

// A verdict is what the counters decided: err is nil for a pass; text
// says what was seen. ok is false when they decided nothing; pending then
// says the tunnel is sending into silence but not yet for a whole Window,
// so that the counters will decide within Window.
type verdict struct {
	ok      bool
	pending bool
	err     error
	text    string
}

// decide returns the verdict of the counters now.
func (e *evidence) decide() verdict {
	now := e.clock.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.readErr != nil || len(e.recent) == 0 || now.Sub(e.last().at) > 2*e.cfg.Interval {
		return verdict{} // no fresh counters
	}
	cur, base := e.last(), e.recent[0]
	if got := cur.c.RxBytes - base.c.RxBytes; got >= e.cfg.MinReceivedBytes {
		return verdict{ok: true, text: fmt.Sprintf("traffic evidence: received %s in the last %v",
			amount(got, cur.c.RxPackets-base.c.RxPackets), roundSeconds(cur.at.Sub(base.at)))}
	}
	sent := cur.c.TxBytes - e.lastRx.c.TxBytes
	if e.silentSince.IsZero() || sent < e.cfg.MinSentBytes {
		return verdict{}
	}
	// The silence counts up to the last sample: what came in after it is
	// not known yet.
	if silent := cur.at.Sub(e.silentSince); silent < e.cfg.Window {
		return verdict{pending: true}
	}
	return verdict{ok: true, err: fmt.Errorf("%w: sent %s in %v, received nothing", ErrSilentTunnel,
		amount(sent, cur.c.TxPackets-e.lastRx.c.TxPackets), roundSeconds(cur.at.Sub(e.silentSince)))}
}

// await returns the counters' verdict, waiting while it is pending (a
// Window at most) unless ctx ends first; then it returns what they say.
func (e *evidence) await(ctx context.Context) verdict {
	deadline := e.clock.Now().Add(e.cfg.Window + e.cfg.Interval)
	for {
		v := e.decide()
		if !v.pending || !e.clock.Now().Before(deadline) {
			return v
		}
		select {
		case <-ctx.Done():
			return v
		case <-e.clock.After(e.cfg.Interval):
		}
	}
}

// amount writes bytes, and packets when counted: "1,204 packets (1.61 MB)".
func amount(bytes, packets uint64) string {
	if packets == 0 {
		return units.Bytes(bytes)
	}
	return fmt.Sprintf("%s packets (%s)", units.Count(packets), units.Bytes(bytes))
}

func roundSeconds(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
