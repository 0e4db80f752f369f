package middleware

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/internal/safely"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"

	"github.com/tunnelprobe/tunnelprobe/internal/ctxend"
)

// ErrNoProofOfLife is wrapped by the error of a check that the light
// probes failed: nothing the monitor sent through the tunnel was answered
// for a whole Evidence.Window.
var ErrNoProofOfLife = errors.New("no proof of life")

// ErrProbeLoss is wrapped by the error of a check failed on the light
// probes' loss (Evidence.MaxLoss).
var ErrProbeLoss = errors.New("light probe loss")

// LightProbeResult is one light probe's outcome, for a [LightProbeObserver].
type LightProbeResult struct {
	Kind, Target string
	// Sent is when the probe was sent; RTT how long its answer took.
	Sent time.Time
	RTT  time.Duration
	// Err is nil for an answer.
	Err error
	// Size is a probe of the path MTU's size, its IP packet's, and PathMTU
	// what those probes showed after it; zero for a small probe.
	Size    int
	PathMTU PathMTUStats
}

// A LightProbeObserver is told of every light probe's outcome. It is
// optional, as [CoalesceObserver] is: when the Observer in Config also
// implements it, the monitor calls LightProbeFinished, synchronously from
// the probe's goroutine, so it must be quick and safe for concurrent use.
type LightProbeObserver interface {
	LightProbeFinished(LightProbeResult)
}

// LightProbeStats is what the light probes showed over Evidence.LossWindow:
// the quality of a tunnel that works.
type LightProbeStats struct {
	Kind, Target string
	// Sent counts the probes that ended in the window, Answered those of
	// them that were answered.
	Sent, Answered int
	// Loss is the share of Sent that went unanswered; 0 when none ended.
	Loss float64
	// RTT is the median round trip of the answered ones; 0 when none.
	RTT time.Duration
	// LastAnswer is when the latest answer arrived; zero before the first.
	LastAnswer time.Time
	// ProvesNothing, when not nil, is why the latest probes, sent since
	// the last answer, could prove nothing (ErrProvesNothing): their target
	// is answered by this host itself, or not routed through the tunnel, or
	// answers with a DNS rcode any resolver gives (SERVFAIL). They decide
	// nothing, and are neither answers nor losses.
	ProvesNothing error
	// PathMTU is what the probes of the path MTU showed; its zero value
	// when there are none.
	PathMTU PathMTUStats
	// Silent reports that no answer came in the last Window (or none
	// since the tunnel's last restart): while another target answers, or
	// the tunnel is proven alive another way (delivery, an active check),
	// a target that went quiet and fails nothing.
	Silent bool
}

// PathMTUStats is what the probes of the path MTU (Evidence.MTUProbeEvery)
// showed over LossWindow.
type PathMTUStats struct {
	// MTU is the tunnel interface's MTU, the size the search starts at;
	// 0 before the first probe of the path MTU.
	MTU int
	// Largest is the largest size answered (the IP packet, headers
	// included); 0 when none was.
	Largest int
	// BlackHole, when not nil, says that probes of the full MTU have been
	// lost for a Window while smaller ones were answered, with the sizes:
	// wrapped ErrPathMTU.
	BlackHole error
}

// outcome is one ended probe, kept for the stats.
type outcome struct {
	sent     time.Time
	rtt      time.Duration
	answered bool
}

// proofOfLife sends the light probe every Interval, each waiting up to
// ProbeTimeout for its answer, and keeps what the answers prove.
type proofOfLife struct {
	cfg        Evidence
	lightProbe LightProbe
	clock      clockwork.Clock
	observer   LightProbeObserver // nil: none
	// sentBytes bounds what the probes sent added to the tunnel's sent
	// counters (see ownBytes), for the counters' silence rule to leave out.
	sentBytes atomic.Uint64

	mu sync.Mutex
	// lastAnswer is when the latest answer arrived. firstUnanswered is
	// when the first probe sent after it was sent (zero: none yet), and
	// unanswered counts the probes sent since it arrived.
	lastAnswer      time.Time
	firstUnanswered time.Time
	// answersFrom is when the tunnel was last healed: the answers to
	// probes sent before it are the old tunnel's, and prove nothing of the
	// new one. answered is set by the first answer ever, heal or no heal.
	answersFrom time.Time
	answered    bool
	unanswered  int
	lastSent    time.Time
	// ended holds the probes that ended in the last LossWindow, by end,
	// of those sent from lossFrom on: the loss and round trip of the
	// tunnel as it is since it last came back.
	ended    []outcome
	lossFrom time.Time
	// provesNothing is why the latest probe proved nothing, and
	// provesNothingAt when it ended; nil when the latest did not.
	provesNothing   error
	provesNothingAt time.Time
	// mtu measures the path MTU with every MTUProbeEvery-th probe; nil
	// when the probe cannot (no Sized or MTU) or MTUProbeEvery is negative.
	mtu *pathMTU
	// changed is told of every send and every end; the evidence's probes
	// share one, so that a check waiting for them wakes at any's change.
	changed *changes
}

// changes tells waiters that something changed: the channel it gives is
// closed at the next change.
type changes struct {
	mu sync.Mutex
	ch chan struct{}
}

func newChanges() *changes { return &changes{ch: make(chan struct{})} }

// next returns a channel closed at the next change.
func (c *changes) next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ch
}

// notify closes the channel of the change now, and makes the next one.
func (c *changes) notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.ch)
	c.ch = make(chan struct{})
}

// newProofOfLife returns the proof of life of probe, one of cfg.Probes,
// telling changed of every send and end.
func newProofOfLife(cfg Evidence, probe LightProbe, clock clockwork.Clock, observer Observer, changed *changes) *proofOfLife {
	p := &proofOfLife{cfg: cfg, lightProbe: probe, clock: clock, changed: changed}
	p.observer, _ = observer.(LightProbeObserver)
	if probe.Sized != nil && probe.MTU != nil && cfg.MTUProbeEvery > 0 {
		p.mtu = &pathMTU{every: cfg.MTUProbeEvery}
	}
	return p
}

// maxInFlight bounds the probes out at once: those a ProbeTimeout holds at
// one per Interval, and one to spare. A Check that ignores its context
// would otherwise pile up a goroutine and a socket per Interval; at the
// bound the sender skips its turn, and a sender that skips turns decides
// nothing (see decide).
func (p *proofOfLife) maxInFlight() int {
	return int(p.cfg.ProbeTimeout/p.cfg.Interval) + 2
}

// run sends a probe every Interval until ctx ends, and waits for the
// probes in flight.
func (p *proofOfLife) run(ctx context.Context) {
	var inFlight sync.WaitGroup
	defer inFlight.Wait()
	slots := make(chan struct{}, p.maxInFlight())
	for {
		// The timer is set before the probe goes: the cadence does not
		// depend on how soon the probe's goroutine runs.
		next := p.clock.After(p.cfg.Interval)
		select {
		case slots <- struct{}{}:
			if sent, size, big := p.sentBig(); big {
				inFlight.Go(func() {
					defer func() { <-slots }()
					p.probeBig(ctx, sent, size)
				})
				break
			}
			sent := p.sent()
			inFlight.Go(func() {
				defer func() { <-slots }()
				p.probe(ctx, sent)
			})
		default: // every slot held by a probe that outlived its timeout
		}
		select {
		case <-ctx.Done():
			return
		case <-next:
		}
	}
}

// Bounds of what one light probe adds to the tunnel's sent counters: a
// small probe's packet (an echo, a query for a fresh name, a SYN) is under
// smallProbeBytes, a probe of the path MTU is its size; a tunnel adds at
// most tunnelOverhead to each (WireGuard's header, tag and padding:
// 63 bytes; OpenVPN's less); a TCP probe's SYN may go three times before
// its timeout.
const (
	smallProbeBytes = 128
	tunnelOverhead  = 80
)

// ownBytes returns the most that one probe of kind, of size bytes (0: a
// small one), adds to the tunnel's sent counters.
func ownBytes(kind string, size int) uint64 {
	n := uint64(max(size, smallProbeBytes) + tunnelOverhead)
	if kind == "tcp" {
		n *= 3
	}
	return n
}

// probe runs one probe sent at sent and records its end.
func (p *proofOfLife) probe(ctx context.Context, sent time.Time) {
	probeCtx, cancel := clockwork.WithTimeout(ctx, p.clock, p.cfg.ProbeTimeout)
	err := safely.Check(probeCtx, p.lightProbe.Check, check.ErrPanicked)
	if err == nil && ctxend.Ended(probeCtx) {
		// Returned only after its timeout: whatever it saw came too late.
		err = fmt.Errorf("no answer within %v", p.cfg.ProbeTimeout)
	}
	cancel()
	if ctxend.Ended(ctx) {
		return // shutting down: no outcome
	}
	var end time.Time
	if errors.Is(err, ErrProvesNothing) {
		end = p.void(err)
	} else {
		end = p.end(sent, err)
	}
	if p.observer != nil {
		p.observer.LightProbeFinished(LightProbeResult{Kind: p.lightProbe.Kind, Target: p.lightProbe.Target, Sent: sent, RTT: end.Sub(sent), Err: err})
	}
}

// sentBig records a probe of the path MTU sent now, and returns when and
// its size, when one is due; big is false when the next probe is a small
// one (or the interface's MTU cannot be read).
func (p *proofOfLife) sentBig() (at time.Time, size int, big bool) {
	if p.mtu == nil {
		return time.Time{}, 0, false
	}
	p.mu.Lock()
	due := p.mtu.due()
	p.mu.Unlock()
	if !due {
		return time.Time{}, 0, false
	}
	mtu, err := p.lightProbe.MTU()
	if err != nil || mtu <= 0 {
		return time.Time{}, 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	at = p.clock.Now()
	p.lastSent = at // the sender is alive; the probe's silence counts for nothing
	size = p.mtu.next(at, mtu)
	p.sentBytes.Add(ownBytes(p.lightProbe.Kind, size))
	return at, size, true
}

// probeBig runs one probe of the path MTU of size bytes, sent at sent, and
// records its end: its answer is an answer like any other, its silence
// no loss (see pathMTU).
func (p *proofOfLife) probeBig(ctx context.Context, sent time.Time, size int) {
	probeCtx, cancel := clockwork.WithTimeout(ctx, p.clock, p.cfg.ProbeTimeout)
	err := safely.Call(probeCtx, func(ctx context.Context) error { return p.lightProbe.Sized(ctx, size) }, check.ErrPanicked)
	if err == nil && ctxend.Ended(probeCtx) {
		err = fmt.Errorf("no answer within %v", p.cfg.ProbeTimeout)
	}
	cancel()
	if ctxend.Ended(ctx) {
		return
	}
	p.mu.Lock()
	end := p.clock.Now()
	if err == nil && (p.answersFrom.IsZero() || sent.After(p.answersFrom)) {
		p.mtu.answered(sent, end)
		p.answerLocked(sent, end)
	}
	mtu := p.mtuStatsLocked(end)
	p.notify()
	p.mu.Unlock()
	if p.observer != nil {
		p.observer.LightProbeFinished(LightProbeResult{Kind: p.lightProbe.Kind, Target: p.lightProbe.Target, Sent: sent, RTT: end.Sub(sent), Err: err,
			Size: size, PathMTU: mtu})
	}
}

// sent records a probe sent now, and returns when.
func (p *proofOfLife) sent() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	at := p.clock.Now()
	if p.firstUnanswered.IsZero() {
		p.firstUnanswered = at
	}
	p.unanswered++
	p.lastSent = at
	p.sentBytes.Add(ownBytes(p.lightProbe.Kind, 0))
	p.notify()
	return at
}

// end records the end, now, of the probe sent at sent: an answer when err
// is nil. It returns when. The time is read under the lock, so that no
// send is recorded after it but before it.
func (p *proofOfLife) end(sent time.Time, err error) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	end := p.clock.Now()
	if !p.answersFrom.IsZero() && !sent.After(p.answersFrom) {
		// A probe of the tunnel before the last heal: its answer, or its
		// loss, says nothing of the tunnel now.
		p.notify()
		return end
	}
	if err == nil {
		p.answerLocked(sent, end)
	}
	if !sent.Before(p.lossFrom) {
		p.ended = append(p.ended, outcome{sent: sent, rtt: end.Sub(sent), answered: err == nil})
	}
	p.prune(end)
	p.notify()
	return end
}

// answerLocked records an answer, at end, to the probe sent at sent.
// Called with mu held.
func (p *proofOfLife) answerLocked(sent, end time.Time) {
	if p.mtu != nil {
		p.mtu.laterAnswered(sent, end)
	}
	if !end.After(p.lastAnswer) {
		return
	}
	// The probes sent before this answer arrived, still out, no longer
	// count as unanswered, though the answer proves the way out only up
	// to when its own probe left: behind a queue their answers come an
	// Interval apart, and a rule that waited for each would call a working
	// tunnel with a queue longer than the Window dead. The price: a tunnel
	// that dies one way is detected a queue's delay later, when the
	// answers already on their way have arrived.
	if p.lastAnswer.IsZero() || end.Sub(p.lastAnswer) >= p.cfg.Window {
		// The first answer ever, or after a silence that failed checks:
		// the tunnel is up, or came back, restarted by whoever it was,
		// and the loss while it was not says nothing of its quality now.
		p.forgetLossLocked(sent)
	}
	p.lastAnswer, p.firstUnanswered, p.unanswered = end, time.Time{}, 0
	p.answered, p.provesNothing = true, nil
}

// void records the end, now, of a probe that could prove nothing (err
// wraps ErrProvesNothing), and returns when. It is no loss: the probes out
// are no longer counted as unanswered, so that a window of them never
// fails a check, and the next answer counts as the first after a silence.
func (p *proofOfLife) void(err error) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	end := p.clock.Now()
	p.provesNothing, p.provesNothingAt = err, end
	p.firstUnanswered, p.unanswered = time.Time{}, 0
	p.notify()
	return end
}

// mtuStatsLocked returns the path MTU's stats at now. Called with mu held.
func (p *proofOfLife) mtuStatsLocked(now time.Time) PathMTUStats {
	if p.mtu == nil {
		return PathMTUStats{}
	}
	return PathMTUStats{MTU: p.mtu.mtu, Largest: p.mtu.largest(), BlackHole: p.mtu.blackHole(now, p.cfg.Window)}
}

// forgetTunnel forgets the tunnel as it was before a new one, which began
// at since (a heal's start, a new incarnation) and is up now: the answers
// it gave, which must not pass the new tunnel's checks (a heal that
// returns before its restart takes effect would pass checks on them), and
// its loss and round trip, since the loss of the restart itself must not
// fail the new tunnel's checks (end forgets a longer silence itself), and
// its path MTU: the new tunnel's path is measured anew.
// Probes sent before now count neither as answers nor as unanswered.
//
// Whether the probes' silence fails the new tunnel depends on the target:
// one that answered until the restart (within a Window of since) fails it
// after a Window of silence, as before; one that had gone quiet before it
// decides nothing until it answers the new tunnel. A quiet target (a new
// server that filters ICMP, a provider that blocks the resolver) would
// otherwise fail every incarnation of a working tunnel a Window after it
// came up, and restart it again and again.
func (p *proofOfLife) forgetTunnel(since time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	p.forgetLossLocked(now)
	if p.mtu != nil {
		p.mtu.forget()
	}
	p.answered = p.answered && !p.lastAnswer.Before(since.Add(-p.cfg.Window))
	p.answersFrom = now
	p.firstUnanswered, p.unanswered = time.Time{}, 0
	p.notify()
}

// forgetLossLocked drops the outcomes so far, and those to come of the
// probes sent before from. Called with mu held.
func (p *proofOfLife) forgetLossLocked(from time.Time) {
	p.ended = p.ended[:0]
	p.lossFrom = from
}

// prune drops the outcomes older than LossWindow, and the probes of the
// path MTU out for longer than ProbeTimeout. Called with mu held.
func (p *proofOfLife) prune(now time.Time) {
	start := now.Add(-p.cfg.LossWindow)
	if p.mtu != nil {
		p.mtu.expire(now.Add(-p.cfg.ProbeTimeout), start)
	}
	drop := 0
	for drop < len(p.ended) && p.ended[drop].sent.Add(p.ended[drop].rtt).Before(start) {
		drop++
	}
	p.ended = append(p.ended[:0], p.ended[drop:]...)
}

func (p *proofOfLife) notify() { p.changed.notify() }

// decide returns what the probes prove at now. A verdict that is pending
// says until when, at the latest, the probes will have decided.
func (p *proofOfLife) decide(now time.Time) verdict {
	p.mu.Lock()
	defer p.mu.Unlock()
	probe := p.lightProbe
	if p.provesNothing != nil {
		// Its target is answered by this host, or not routed through the
		// tunnel: whatever came back proves nothing, an answer of before
		// included.
		return verdict{}
	}
	if !p.answered {
		// Never answered since the monitor started: a target that does
		// not answer this kind (a gateway that drops pings, a host that
		// serves no DNS) looks like a dead tunnel, and must not fail a
		// working one for good. The active check decides until the first
		// answer; the stats and the status show none came.
		return verdict{}
	}
	if p.lastAnswer.After(p.answersFrom) && now.Sub(p.lastAnswer) < p.cfg.Window {
		if err := p.lossError(now); err != nil {
			return verdict{ok: true, proof: ProofLightProbe, err: err}
		}
		if p.mtu != nil && p.cfg.FailOnMTU {
			if err := p.mtu.blackHole(now, p.cfg.Window); err != nil {
				return verdict{ok: true, proof: ProofLightProbe, err: err}
			}
		}
		return verdict{ok: true, proof: ProofLightProbe, text: fmt.Sprintf("proof of life: %s %s answered %v ago",
			probe.Kind, probe.Target, roundSeconds(now.Sub(p.lastAnswer)))}
	}
	if p.firstUnanswered.IsZero() || now.Sub(p.lastSent) > 2*p.cfg.Interval {
		// No probe out, or the sender stalled (the process was paused,
		// starved, or every probe outlived its timeout): what is out may
		// have been answered unseen, and nothing says the tunnel is dead.
		return verdict{}
	}
	silent := now.Sub(p.firstUnanswered)
	if silent < p.cfg.Window {
		return verdict{pending: true, until: p.firstUnanswered.Add(p.cfg.Window),
			text: fmt.Sprintf("no answer from %s %s %s yet", probe.Kind, probe.Target, p.quietSince(now))}
	}
	err := fmt.Errorf("%w: %d %s probe(s) to %s sent over the last %v, none answered",
		ErrNoProofOfLife, p.unanswered, probe.Kind, probe.Target, roundSeconds(silent))
	if !p.lastAnswer.After(p.answersFrom) {
		err = fmt.Errorf("%w since the heal", err)
	}
	return verdict{ok: true, proof: ProofLightProbe, err: err}
}

// quietSince says how long no answer came: "for 1.2s", or "since the heal
// 0.8s ago" when none came since. Called with mu held.
func (p *proofOfLife) quietSince(now time.Time) string {
	if !p.answersFrom.IsZero() && !p.lastAnswer.After(p.answersFrom) {
		return fmt.Sprintf("since the heal %v ago", roundSeconds(now.Sub(p.answersFrom)))
	}
	return fmt.Sprintf("for %v", roundSeconds(now.Sub(p.lastAnswer)))
}

// lossError is the error of a loss above MaxLoss over LossWindow, or nil.
// Called with mu held.
func (p *proofOfLife) lossError(now time.Time) error {
	p.prune(now)
	s := p.statsLocked()
	if !s.lossTooHigh(p.cfg.MaxLoss) {
		return nil
	}
	return fmt.Errorf("%w: %.0f%% of %d %s probe(s) to %s unanswered over the last %v, above the %.0f%% allowed",
		ErrProbeLoss, 100*s.Loss, s.Sent, s.Kind, s.Target, p.cfg.LossWindow, 100*p.cfg.MaxLoss)
}

// lossTooHigh reports whether s's loss is above maxLoss (0: no limit),
// over enough probes to mean something.
func (s LightProbeStats) lossTooHigh(maxLoss float64) bool {
	return maxLoss > 0 && s.Sent >= MinLossSample && s.Loss > maxLoss
}

// stats returns the probes' stats over LossWindow up to now.
func (p *proofOfLife) stats() LightProbeStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prune(p.clock.Now())
	return p.statsLocked()
}

func (p *proofOfLife) statsLocked() LightProbeStats {
	now := p.clock.Now()
	s := LightProbeStats{Kind: p.lightProbe.Kind, Target: p.lightProbe.Target, Sent: len(p.ended), LastAnswer: p.lastAnswer, ProvesNothing: p.provesNothing,
		PathMTU: p.mtuStatsLocked(now), Silent: !p.lastAnswer.After(p.answersFrom) || now.Sub(p.lastAnswer) >= p.cfg.Window}
	var rtts []time.Duration
	for _, o := range p.ended {
		if o.answered {
			rtts = append(rtts, o.rtt)
		}
	}
	s.Answered = len(rtts)
	if s.Sent > 0 {
		s.Loss = float64(s.Sent-s.Answered) / float64(s.Sent)
	}
	if len(rtts) > 0 {
		slices.Sort(rtts)
		s.RTT = rtts[len(rtts)/2]
	}
	return s
}
