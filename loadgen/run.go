package loadgen

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen/internal/pace"
	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
)

// run is the state of one Run shared by its goroutines.
type run struct {
	cfg     Config
	c       *counters
	dialers *dialers
	// header opens every connection: the sink mode and, for Down and
	// Both, the rate the sink sends at.
	header []byte
	// grace bounds the end-of-run handshake of every connection; it is
	// set before the load is stopped.
	grace atomic.Int64
	// gate parks greedy flows while the ramp is behind its schedule.
	gate rampGate
}

// Run opens cfg.Conns connections to cfg.Target, ramping up as cfg says,
// carries traffic on them for cfg.Duration after the ramp, probes the path
// if cfg.Probe is set, and returns what it measured. See the package
// documentation for the phases of a run and what Run owns.
//
// When ctx ends before the run does, Run stops within about a second (two
// at most) and returns what it measured until then, with Interrupted set
// and a nil error. Run returns an error only for an invalid cfg.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	cfg = cfg.withDefaults()
	r := &run{cfg: cfg, c: newCounters(), dialers: newDialers(cfg)}
	var err error
	if r.header, err = cfg.header(); err != nil {
		return Result{}, err
	}

	start := time.Now()
	if cfg.OnWindowStart != nil {
		cfg.OnWindowStart()
	}
	smp := newSampler(r.c, start, cfg.OnSecond)
	samplerStop := make(chan struct{})
	var samplerWG sync.WaitGroup
	samplerWG.Go(func() { smp.loop(samplerStop) })

	// The load has a context of its own, not ctx's child: when ctx ends,
	// the final reading must be taken before the connections start to
	// close, so Run ends the load itself, in order.
	loadCtx, stopLoad := context.WithCancel(context.WithoutCancel(ctx))
	defer stopLoad()
	var wg sync.WaitGroup // every goroutine of the load: dialers, slots and probe
	r.dialers.run(loadCtx, min(cfg.Conns, MaxDialsInFlight), &wg)
	if cfg.Probe != nil {
		wg.Go(func() { r.probeLoop(loadCtx) })
	}

	var rampSeconds *float64
	if took, ended := r.rampAndHold(ctx, loadCtx, &wg, start); ended {
		s := took.Seconds()
		rampSeconds = &s
	}
	if cfg.OnWindowEnd != nil {
		cfg.OnWindowEnd()
	}
	interrupted := ctx.Err() != nil
	end := time.Now()

	// Stop: the sampler first, and the last readings of Open, RSS, FDs
	// and Threads taken here, so that they are those of the load, not of
	// its teardown; then every connection, which ends with the handshake
	// that makes byte counts agree with the sink's (bounded by stopGrace,
	// or interruptGrace). Nothing waits for the sampler before the
	// connections are told to stop: on a machine saturated by thousands of
	// greedy writers, every goroutine hand-off costs a scheduling round.
	close(samplerStop)
	atEnd := smp.read()
	grace := stopGrace
	if interrupted {
		grace = interruptGrace
	}
	r.grace.Store(int64(grace))
	stopLoad()
	samplerWG.Wait()
	smp.closeUntil(atEnd, false)
	wg.Wait()
	// The last, partial second also gets the bytes and the CPU time of
	// the teardown, so that the series adds up to the totals; its gauges
	// are those of the load.
	final := smp.read()
	final.snap.open = atEnd.snap.open
	final.proc.rss, final.proc.fds, final.proc.threads = atEnd.proc.rss, atEnd.proc.fds, atEnd.proc.threads
	smp.close(final, r.c.takeProbes())
	smp.release()

	res := r.result(start, end, interrupted, final.snap, smp.series)
	res.RampSeconds = rampSeconds
	return res, nil
}

// rampAndHold starts the connections' slots on loadCtx, in wg, and
// returns once the ramp and the hold are over, or ctx has ended: with how
// long the ramp took from start, and whether it ended with every first
// dial ended (not interrupted or out of time).
//
// The ramp: slot i starts at start + i*interval, a schedule that a slow
// dial does not delay (a dialer waits for the dial; the ramp waits only
// when every dialer is busy). A slot starts only with one of
// MaxDialsInFlight permits, which it keeps until its first connection
// opens (or it gives up). Its first dial runs on a dialer, and the slot's
// goroutine starts with the connection (see firstDialEnded): goroutines
// follow connections opened, not requested, however large Conns is. The ramp ends when every slot's first dial has
// ended, or DialTimeout after its schedule, whatever became of the slots
// not started by then; the hold follows. While the ramp is behind its
// schedule, greedy flows yield to it (see rampGate).
func (r *run) rampAndHold(ctx, loadCtx context.Context, wg *sync.WaitGroup, start time.Time) (time.Duration, bool) {
	cfg := &r.cfg
	rampDone := make(chan struct{})
	var pending atomic.Int64
	pending.Store(int64(cfg.Conns))
	var took time.Duration // read only once rampDone is closed
	attempted := func() {
		if pending.Add(-1) == 0 {
			took = time.Since(start)
			close(rampDone)
		}
	}
	interval := cfg.dialInterval()
	rampCtx, endRamp := context.WithDeadline(ctx, start.Add(time.Duration(cfg.Conns-1)*interval+cfg.DialTimeout))
	defer endRamp()
	behind := func(bool) {}
	if cfg.Rate == 0 {
		behind = r.gate.set
	}
	// As fast as possible, every dial is due now: the ramp is behind
	// until the last has ended.
	behind(interval == 0)
	permits := make(chan struct{}, MaxDialsInFlight)
	release := func() { <-permits }
	for i := range cfg.Conns {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			behind(false)
			if !pace.Sleep(rampCtx, d) {
				break
			}
		} else if -d > rampLag {
			behind(true)
		}
		select {
		case permits <- struct{}{}:
		default:
			// MaxDialsInFlight first dials have not ended: the ramp
			// waits for them, and is behind.
			behind(true)
			select {
			case permits <- struct{}{}:
			case <-rampCtx.Done():
			}
		}
		if rampCtx.Err() != nil {
			break
		}
		// The first dial needs no goroutine of the slot's own: the slot
		// starts with its connection (see firstDialEnded). When every
		// dialer is busy (redials hold no permit), the ramp waits for
		// one; if that makes it late, the next slot finds it behind.
		// Marking it behind at every such wait, however short, cost 4%
		// of the rate at 11,000/s (three runs each).
		if !r.dialers.start(rampCtx, loadCtx, func(d dialed) { r.firstDialEnded(loadCtx, wg, d, attempted, release) }) {
			release()
			break
		}
	}
	waitLastDials(rampCtx, rampDone, &pending, behind)
	select {
	case <-rampDone:
	case <-rampCtx.Done():
		// The ramp ran out of time: hold what opened, unless ctx ended.
	}
	ended := false
	select {
	case <-rampDone: // also when it closed as ctx ended
		ended = true
	default:
	}
	behind(false) // the ramp is over
	pace.Sleep(ctx, cfg.Duration)
	if !ended {
		return 0, false
	}
	return took, true
}

// tailQuiet is how long the last first dials of a ramp may go without one
// of them ending before the ones left count as held by the path, not by
// the machine: longer than TCP's first retransmission of a lost SYN (1 s).
// Greedy flows released at once burst into loopback's backlog, which then
// drops packets, the dials' SYNs among them: reopening the gate after
// 100 ms of quiet, two ramps of six stalled for a second or more.
const tailQuiet = 1500 * time.Millisecond

// waitLastDials returns once every slot's first dial has ended (done), ctx
// has ended, or tailQuiet has passed without one of the pending ones
// ending; until then the ramp is behind. Every slot has started: the
// completions of the dials still in flight wait behind the greedy flows
// of the connections already open (at 12,000 of them the last 250 dials
// once took over two seconds), and end fast once those flows park (as
// fast as possible, their goroutines have not started yet). A dial
// that the path holds (a lost SYN, a black hole) does not end sooner for
// it, and the flows go on.
func waitLastDials(ctx context.Context, done <-chan struct{}, pending *atomic.Int64, behind func(bool)) {
	behind(true)
	tick := time.NewTicker(rampLag)
	defer tick.Stop()
	last, since := pending.Load(), time.Now()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case now := <-tick.C:
			if p := pending.Load(); p != last {
				last, since = p, now
			} else if now.Sub(since) >= tailQuiet {
				behind(false)
				return
			}
		}
	}
}

// result is the Result of a run from start to end whose final counters are
// final and whose series is series.
func (r *run) result(start, end time.Time, interrupted bool, final snapshot, series []Second) Result {
	res := Result{
		Target:          r.cfg.Target,
		Path:            r.cfg.PathName,
		Start:           start,
		DurationSeconds: end.Sub(start).Seconds(),
		Processes:       1,
		Interrupted:     interrupted,
		ConnsRequested:  r.cfg.Conns,
		BytesUp:         final.bytesUp,
		BytesDown:       final.bytesDown,
		Disruptions:     final.disruptions,
		Errors:          r.c.errors(),
		Probes:          final.probes,
		ProbeFailures:   final.probeFailures,
		Series:          series,
	}
	for _, s := range res.Series {
		res.ConnsAchieved = max(res.ConnsAchieved, s.Open)
	}
	r.c.mu.Lock()
	res.ConnectLatencyMS = Summarize(r.c.connect)
	res.ProbeLatencyMS = Summarize(r.c.probe)
	res.Histograms = Histograms{Connect: r.c.connect.Export(), Probe: r.c.probe.Export()}
	r.c.mu.Unlock()
	return res
}

// header returns the sink header that opens every connection of c.
func (c Config) header() ([]byte, error) {
	mode := sink.ModeUpload
	var rate uint64
	switch c.Direction {
	case Down:
		mode = sink.ModeDownload
	case Both:
		mode = sink.ModeBoth
	}
	if c.Direction != Up && c.Rate > 0 {
		// At least 1 B/s: 0 would ask the sink to be greedy.
		rate = max(uint64(c.connBytesPerSecond()), 1)
	}
	return sink.Header{Mode: mode, BytesPerSecond: rate}.AppendBinary(nil)
}
