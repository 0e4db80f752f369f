package middleware

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/internal/units"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// Defaults for the zero fields of [Evidence], chosen from the rules below
// and the facts of a loaded link, before any comparison ran. On the lab's
// link at 2 and 3 Mbit/s (256 packets of queue) under 1,000 greedy
// connections, 37-46% of ICMP probes sent every 0.25 s were lost, in
// bursts, and the longest gap between two answers in 170 s was 2.0 s:
//
//   - Interval 0.25 s: a Window holds twelve probes, so that a working
//     tunnel fails a check only when its answers stop for longer than the
//     bursts of loss a full tail-drop queue causes; four small packets a
//     second each way cost about 3 kbit/s with WireGuard's overhead, a
//     thousandth of a 2 Mbit/s link;
//   - Window 3 s: how long the tunnel may go without an answer. Answers
//     arrive an Interval apart however long the queue they wait in, so the
//     Window bounds the gaps between them, not the round trip: it is half
//     again the longest gap seen on those links, and keeps a dead tunnel's
//     detection at Window + Interval plus the orchestrator's own period;
//   - ProbeTimeout 10 s: an answer counts up to then, so a queue of 4,096
//     packets (2.5 s at 20 Mbit/s) or worse delays answers but loses none;
//   - LossWindow 60 s: the loss and round trip reported describe the last
//     minute (240 probes), long enough for a loss ratio to mean something;
//   - MinSentBytes 4 KiB: more than a WireGuard keepalive or a lone lost
//     packet, so that sending into silence is a tunnel that carries traffic.
const (
	DefaultEvidenceWindow   = 3 * time.Second
	DefaultEvidenceInterval = 250 * time.Millisecond
	DefaultProbeTimeout     = 10 * time.Second
	DefaultLossWindow       = time.Minute
	DefaultMinSentBytes     = 4096
	// DefaultFullCheckPeriod: the active check runs once a minute while
	// the probes pass, five times as often as the upstream VPN client runs
	// its TLS check: a fault that spares the probes is caught within two
	// minutes, at the cost of one check a minute.
	DefaultFullCheckPeriod = time.Minute
)

// MinEvidenceDuration is the least Window, Interval, ProbeTimeout and
// LossWindow may be: a probe every nanosecond is a socket and a goroutine
// each, enough to starve the host, and no answer comes back through a
// tunnel that fast.
const MinEvidenceDuration = 10 * time.Millisecond

// MinLossSample is how many probes must have ended in LossWindow before
// their loss may fail a check (MaxLoss): fewer say too little.
const MinLossSample = 10

// Evidence is Config.Evidence: before a check dials, what the tunnel showed
// meanwhile decides it when it can.
//
// The proof of life is an answer to the monitor's own light probe (Probe),
// sent through the tunnel every Interval, loaded or idle:
//   - an answer arrived in the last Window: the tunnel carries packets both
//     ways, and the check passes at once, under any load;
//   - a probe sent after the last answer arrived has gone unanswered for a
//     whole Window: the check fails at once, whichever way the tunnel died;
//   - probes unanswered for less than a Window: the check waits for them to
//     decide, a Window at most, rather than dial into a tunnel that is
//     about to fail.
//
// The tunnel's traffic counters (Source) cannot prove it alive: what the
// far side sends on its own arrives whether or not it hears us (TCP
// retransmissions of unacknowledged data for minutes, one-way streams,
// WireGuard keepalives), and so does a router's ICMP unreachable for a
// packet it could not deliver. So a receive counter never passes a check;
// the counters only fail it fast when MinSentBytes or more went out and
// nothing at all came back for a whole Window ("sending into silence"),
// and feed the metrics. A gap in their samples (the interface went away)
// starts them over, so old traffic never counts as recent.
//
// With neither a fresh verdict of the probes nor of the counters (no probe
// out, a probe never answered since Run started, a source that fails,
// sampling stopped), the active check runs as without evidence: evidence
// never keeps a state alive on old data, and a target that never answers
// never fails a working tunnel for good. Each
// result says how it was decided (Result.Evidence, DecidedBy).
//
// With MaxLoss set, a check also fails while more than that share of the
// probes that ended in the last LossWindow went unanswered: for users who
// would rather restart a lossy tunnel than keep it.
type Evidence struct {
	// Probes are the light probes (see [LightProbe], [ChooseLightProbe]),
	// each to a target of its own and each sent every Interval: an answer
	// from any of them is proof, and a window of silence fails a check only
	// when none of them answers. A target silent while another answers is
	// reported, and its silence fails nothing. None: the counters and the
	// delivery decide.
	Probes []LightProbe
	// Source reads the tunnel's counters; nil: none.
	Source CounterSource
	// Delivery reads the TCP connections of the tunnel's users (see
	// [Delivery]); nil: none. Data of theirs that the far end acknowledged
	// between two readings of the same connection, within the Window,
	// passes a check at once, before the probes are looked at: it proves
	// both directions, and a full tail-drop queue that loses the probes
	// still delivers it. No progress never fails a check. Probe, Source or
	// Delivery is required.
	Delivery DeliverySource
	// Window is how long the tunnel may go without proof of life (or, for
	// the counters, send into silence) before a check fails: the
	// tolerance, whatever the orchestrator's period. Zero means
	// DefaultEvidenceWindow.
	Window time.Duration
	// Interval is the probes' cadence and the counters' sampling period.
	// Zero means DefaultEvidenceInterval.
	Interval time.Duration
	// ProbeTimeout is how long a probe's answer is awaited. Zero means
	// DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// MaxLoss, when positive, fails checks while the probes' loss over
	// LossWindow is above it (0.2: 20%), once at least MinLossSample
	// probes ended in it. Zero: loss is reported, never acted on. The first answer, a
	// silence of a Window (an outage, which fails checks already) and a
	// heal start the count over: a tunnel that came up, or back, is judged
	// on its own probes.
	MaxLoss float64
	// LossWindow is how far back the probes' loss and round trip are
	// measured; with MaxLoss, at least MinLossSample Intervals. Zero means
	// DefaultLossWindow.
	LossWindow time.Duration
	// MinSentBytes is how much must go out unanswered for the counters'
	// silence rule to fail a check. Zero means DefaultMinSentBytes.
	MinSentBytes uint64
	// Incarnation, when set, says which incarnation of the tunnel is up:
	// its interface's index (serve reads it), a count of restarts. When it
	// changes, as when the kubelet restarts a VPN container beside a
	// sidecar that lives on, what the old tunnel showed is forgotten, as
	// after a heal. A reading that fails changes nothing.
	Incarnation func() (uint64, error)
	// MTUProbeEvery makes every MTUProbeEvery-th light probe one of the
	// path MTU, when the probe can size one (LightProbe.Sized and MTU):
	// at the tunnel interface's MTU, and smaller while those are lost
	// although small ones are answered, to find the largest size the path
	// carries (LightProbeStats.PathMTU). Such probes' answers are answers;
	// their silence is no loss. Zero means DefaultMTUProbeEvery;
	// negative, never.
	MTUProbeEvery int
	// FailOnMTU fails checks while probes of the full MTU have been lost
	// for a Window although small ones were answered: a path MTU black
	// hole, in which pings pass and the users' bulk traffic stalls
	// (ErrPathMTU). Off, the answers only warn of it: a restart rarely
	// cures a path's MTU.
	FailOnMTU bool
	// FullCheckPeriod is how often the monitor's active check still runs
	// while the light probes pass checks without it, bounded by the check
	// timeout (Config.Timeouts[0]) and never beside another active check:
	// when FullCheckFailures of them in a row fail while the probes are
	// answered, checks fail (ErrFullCheckFails) until one passes. Zero
	// means DefaultFullCheckPeriod; negative, never (the probes alone
	// decide while they pass). Without a Probe there is none.
	FullCheckPeriod time.Duration
}

func (e Evidence) withDefaults() (Evidence, error) {
	var errs []error
	if e.Source == nil && len(e.Probes) == 0 && e.Delivery == nil {
		errs = append(errs, errors.New("evidence: no Probes, Source or Delivery"))
	}
	for i, p := range e.Probes {
		if p.Check == nil {
			errs = append(errs, fmt.Errorf("evidence: Probes[%d].Check is nil", i))
		}
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"Window", &e.Window, DefaultEvidenceWindow},
		{"Interval", &e.Interval, DefaultEvidenceInterval},
		{"ProbeTimeout", &e.ProbeTimeout, DefaultProbeTimeout},
		{"LossWindow", &e.LossWindow, DefaultLossWindow},
	} {
		switch {
		case *d.v < 0:
			errs = append(errs, fmt.Errorf("evidence: %s %v is negative", d.name, *d.v))
		case *d.v == 0:
			*d.v = d.def
		case *d.v < MinEvidenceDuration:
			errs = append(errs, fmt.Errorf("evidence: %s %v is shorter than %v", d.name, *d.v, MinEvidenceDuration))
		}
	}
	if e.Interval > e.Window {
		errs = append(errs, fmt.Errorf("evidence: Interval %v is longer than the Window %v", e.Interval, e.Window))
	}
	if !(e.MaxLoss >= 0 && e.MaxLoss < 1) { // NaN too
		errs = append(errs, fmt.Errorf("evidence: MaxLoss %v is not in [0, 1)", e.MaxLoss))
	}
	if e.MaxLoss > 0 && e.LossWindow < MinLossSample*e.Interval {
		errs = append(errs, fmt.Errorf("evidence: LossWindow %v holds fewer than the %d probes MaxLoss needs, one every %v",
			e.LossWindow, MinLossSample, e.Interval))
	}
	if e.MinSentBytes == 0 {
		e.MinSentBytes = DefaultMinSentBytes
	}
	switch {
	case e.MTUProbeEvery == 0:
		e.MTUProbeEvery = DefaultMTUProbeEvery
	case e.MTUProbeEvery == 1:
		errs = append(errs, errors.New("evidence: MTUProbeEvery 1 would make every probe one of the path MTU: at least 2, so that small ones tell a lost size from a dead tunnel"))
	}
	switch {
	case e.FullCheckPeriod == 0:
		e.FullCheckPeriod = DefaultFullCheckPeriod
	case e.FullCheckPeriod > 0 && e.FullCheckPeriod < e.Window:
		errs = append(errs, fmt.Errorf("evidence: FullCheckPeriod %v is shorter than the Window %v: the probes would no longer spare the active check", e.FullCheckPeriod, e.Window))
	}
	return e, errors.Join(errs...)
}

// A proofSource is one kind of evidence the monitor gathers while it runs
// (run, until ctx ends) and what it shows at a moment (decide): the light
// probes' answers, the counters' silence, the full check's failures. Each
// decides alone; evidence.decide weighs them, in the one order written
// there.
type proofSource interface {
	run(ctx context.Context)
	decide(now time.Time) verdict
}

var (
	_ proofSource = (*proofOfLife)(nil)
	_ proofSource = (*counterSilence)(nil)
	_ proofSource = (*fullCheck)(nil)
	_ proofSource = (*deliveryProof)(nil)
)

// evidence is what a monitor gathers for its checks: the light probes'
// answers, the counters' samples and the full check's results.
type evidence struct {
	cfg      Evidence
	clock    clockwork.Clock
	proofs   []*proofOfLife  // one a probe
	counters *counterSilence // nil without a Source
	full     *fullCheck      // nil without Probes, or with a negative FullCheckPeriod
	delivery *deliveryProof  // nil without a Delivery
	// sources are those of the above that there are.
	sources []proofSource
	// changed is told of every probe's send and end.
	changed *changes
}

// newEvidence returns the evidence cfg asks for in the monitor's mon;
// checker is the active check its full check runs.
func newEvidence(cfg Evidence, checker check.Checker, mon Config, observer Observer) *evidence {
	clock := mon.Clock
	e := &evidence{cfg: cfg, clock: clock}
	changed := newChanges()
	e.changed = changed
	for _, p := range cfg.Probes {
		proof := newProofOfLife(cfg, p, clock, observer, changed)
		e.proofs = append(e.proofs, proof)
		e.sources = append(e.sources, proof)
	}
	if len(cfg.Probes) > 0 {
		if cfg.FullCheckPeriod > 0 {
			e.full = newFullCheck(cfg, checker, mon, observer, e.probesPass)
			e.sources = append(e.sources, e.full)
		}
	}
	if cfg.Source != nil {
		e.counters = newCounterSilence(cfg, clock, e.probesSent)
		e.sources = append(e.sources, e.counters)
	}
	if cfg.Delivery != nil {
		e.delivery = newDeliveryProof(cfg, clock)
		e.sources = append(e.sources, e.delivery)
	}
	return e
}

// probesSent returns the most the light probes have sent through the
// tunnel so far (see ownBytes).
func (e *evidence) probesSent() uint64 {
	var n uint64
	for _, p := range e.proofs {
		n += p.sentBytes.Load()
	}
	return n
}

// run runs every source until ctx ends, and with Incarnation, watches for
// a new tunnel.
func (e *evidence) run(ctx context.Context) {
	var running sync.WaitGroup
	defer running.Wait()
	for _, s := range e.sources {
		running.Go(func() { s.run(ctx) })
	}
	if e.cfg.Incarnation != nil {
		running.Go(func() { e.watchIncarnation(ctx) })
	}
}

// newTunnel makes every source forget the tunnel as it was before one
// that began at since: a heal's start, or when a new incarnation was seen.
// What the old tunnel showed says nothing of the new one.
func (e *evidence) newTunnel(since time.Time) {
	for _, p := range e.proofs {
		p.forgetTunnel(since)
	}
	if e.full != nil {
		e.full.forget()
	}
	if e.delivery != nil {
		e.delivery.forget()
	}
	if e.counters != nil {
		e.counters.forget()
	}
}

// watchIncarnation reads Incarnation every Interval until ctx ends, and
// starts a new tunnel (newTunnel) when it changes: a VPN that a
// restart's new interface replaced, as a sidecar sees the kubelet's
// restart of its VPN container. A reading that fails changes nothing.
func (e *evidence) watchIncarnation(ctx context.Context) {
	var last uint64
	read := false
	for {
		if n, err := e.cfg.Incarnation(); err == nil {
			if read && n != last {
				e.newTunnel(e.clock.Now())
			}
			last, read = n, true
		}
		select {
		case <-ctx.Done():
			return
		case <-e.clock.After(e.cfg.Interval):
		}
	}
}

// probesPass reports whether the light probes alone pass a check now.
func (e *evidence) probesPass() bool {
	v := e.probes(e.clock.Now())
	return v.ok && v.err == nil
}

// probes returns what the light probes prove together at now: a pass when
// any target's answer passes; else the first target's failure, and only
// when every target that decides fails (one that never answered decides
// nothing); else pending, until the earliest any target decides.
func (e *evidence) probes(now time.Time) verdict {
	var fail, pending, none verdict
	for _, p := range e.proofs {
		switch v := p.decide(now); {
		case v.ok && v.err == nil:
			return v
		case v.ok && !fail.ok:
			fail = v
		case v.pending:
			if !pending.pending || v.until.Before(pending.until) {
				pending = v
			}
		}
	}
	switch {
	case pending.pending:
		// A target that may still answer: its answer would pass.
		return pending
	case fail.ok:
		return fail
	}
	return none
}

// A verdict is what the evidence decided: err is nil for a pass; text
// says what was seen. ok is false when it decided nothing; pending then
// says that it will decide by until, so that a check may wait for it.
type verdict struct {
	ok      bool
	pending bool
	until   time.Time
	err     error
	text    string
	// proof names the source that decided (Result.Proof).
	proof string
}

// decide returns the verdict of the evidence now, in this order: data of
// the tunnel's users acknowledged by the far end passes (nothing overrides
// what the tunnel delivers); an answer to a probe passes, unless the full
// check keeps failing; then the counters' silence, the probes' silence and
// their loss fail.
func (e *evidence) decide() verdict {
	now := e.clock.Now()
	if e.delivery != nil {
		if v := e.delivery.decide(now); v.ok {
			return v
		}
	}
	var probes, counters verdict
	if len(e.proofs) > 0 {
		if probes = e.probes(now); probes.ok && probes.err == nil {
			if e.full != nil {
				if full := e.full.decide(now); full.ok {
					return full // the active check fails what the probes pass
				}
			}
			return probes
		}
	}
	if e.counters != nil {
		if counters = e.counters.decide(now); counters.ok {
			return counters
		}
	}
	switch {
	case probes.ok:
		return probes
	case probes.pending && counters.pending:
		probes.until = minTime(probes.until, counters.until)
		return probes
	case counters.pending:
		return counters
	}
	return probes
}

// await returns the evidence's verdict, waiting while it is pending (a
// Window and an Interval at most) unless ctx ends first; then it returns
// what the evidence says.
func (e *evidence) await(ctx context.Context) verdict {
	deadline := e.clock.Now().Add(e.cfg.Window + e.cfg.Interval)
	for {
		changed := e.changed.next()
		v := e.decide()
		now := e.clock.Now()
		if !v.pending || !now.Before(deadline) {
			return v
		}
		// Wake when the probes change, at the time the verdict names, or
		// an Interval on, whichever comes first: the counters change
		// only at their samples.
		wait := e.cfg.Interval
		if v.until.After(now) {
			wait = min(wait, v.until.Sub(now))
		}
		select {
		case <-ctx.Done():
			return v
		case <-changed:
		case <-e.clock.After(wait):
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

func minTime(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// amount writes bytes, and packets when counted: "1,204 packets (1.61 MB)".
func amount(bytes, packets uint64) string {
	if packets == 0 {
		return units.Bytes(bytes)
	}
	return fmt.Sprintf("%s packets (%s)", units.Count(packets), units.Bytes(bytes))
}

func roundSeconds(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
