package loadgen

import (
	"sync"
	"time"
)

// sampler turns the run's cumulative counters into one Second per
// wall-clock second, adding readings of the process and of the machine's
// TCP counters (see procFiles). Only one goroutine closes seconds at a
// time: the sampling goroutine during the run, Run after it; read may be
// called by both.
type sampler struct {
	c        *counters
	readMu   sync.Mutex // guards proc, whose buffers are reused
	proc     *procFiles
	onSecond func(Second)

	nextT  int64   // the second being measured
	last   reading // at the start of nextT
	series []Second
}

// reading is what the sampler reads at one instant: the run's counters,
// the process and the machine's TCP counters.
type reading struct {
	at   time.Time
	snap snapshot
	proc procReading
	tcp  tcpCounters
}

// procReading is a reading of the process: CPU seconds used so far,
// resident memory, open descriptors and threads.
type procReading struct {
	cpu               float64
	rss, fds, threads int64
}

// tcpCounters are the machine's TCP counters that a Second reports.
type tcpCounters struct {
	ok                 bool
	retrans, estResets int64
}

// newSampler opens the /proc files it reads; release closes them.
func newSampler(c *counters, start time.Time, onSecond func(Second)) *sampler {
	s := &sampler{c: c, proc: openProcFiles(), onSecond: onSecond, nextT: start.Unix()}
	s.last = s.read()
	return s
}

func (s *sampler) read() reading {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	return reading{at: time.Now(), snap: s.c.snapshot(), proc: s.proc.read(), tcp: s.proc.tcp()}
}

func (s *sampler) release() { s.proc.close() }

// loop closes the Seconds at every wall-clock second boundary until stop is
// closed, passing each to onSecond.
//
// Seconds are numbered, not read off the clock, so the series has no gaps
// and no duplicates. A wake-up that comes late (an overloaded machine)
// closes every second whose end has passed, sharing what was counted
// since the last reading out over them by time: a late sampler must not
// put three seconds of bytes into one second and none into the next two.
// Probes are not shared out: see closeUntil.
func (s *sampler) loop(stop <-chan struct{}) {
	t := time.NewTimer(time.Until(time.Unix(s.nextT+1, 0)))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		// The timer fired at a second's end (or, by the wall clock, a
		// hair before it): that second closes in any case.
		s.closeUntil(s.read(), true)
		t.Reset(time.Until(time.Unix(s.nextT+1, 0)))
	}
}

// closeUntil closes every second that ended before now was read, and
// tells onSecond of each; with atLeastOne, the second being measured
// closes on now even if it has not quite ended.
func (s *sampler) closeUntil(now reading, atLeastOne bool) {
	if now.at.Before(s.last.at) {
		return // the sampler closed a second after now was read
	}
	for first := true; ; first = false {
		end := time.Unix(s.nextT+1, 0)
		if !end.Before(now.at) && !(atLeastOne && first) {
			return
		}
		at := now
		if end.Before(now.at) {
			at = interpolate(s.last, now, end)
		}
		// The probes recorded since the last close go to the first second
		// closed now, whole: a latency cannot be shared out by time like
		// bytes, and a probe's count must stay in the second of its
		// latency. They are taken here rather than with now's reading, so
		// that a probe recorded in between is not left out of both.
		var probes probeTally
		if first {
			probes = s.c.takeProbes()
		}
		sec := s.close(at, probes)
		if s.onSecond != nil {
			s.onSecond(sec)
		}
	}
}

// close ends the second being measured with the reading now and the
// probes recorded in it, appends it to the series and returns it. Open and
// the process gauges are now's.
func (s *sampler) close(now reading, probes probeTally) Second {
	a, b := s.last.snap, now.snap
	sec := Second{
		T:             s.nextT,
		BytesUp:       b.bytesUp - a.bytesUp,
		BytesDown:     b.bytesDown - a.bytesDown,
		Open:          b.open,
		Connects:      b.connects - a.connects,
		ConnectErrors: b.connectErrors - a.connectErrors,
		Disruptions:   b.disruptions - a.disruptions,
		Probes:        probes.probes,
		ProbeFailures: probes.failures,
		ProbeMaxMS:    float64(probes.maxUS) / 1000,
		CPUSeconds:    max(now.proc.cpu-s.last.proc.cpu, 0),
		RSSBytes:      now.proc.rss,
		FDs:           now.proc.fds,
		Threads:       now.proc.threads,
	}
	if now.tcp.ok && s.last.tcp.ok {
		sec.TCPRetransmits = max(now.tcp.retrans-s.last.tcp.retrans, 0)
		sec.TCPResets = max(now.tcp.estResets-s.last.tcp.estResets, 0)
	}
	s.series = append(s.series, sec)
	s.nextT++
	s.last = now
	return sec
}

// interpolate estimates the reading at t, between a and b, assuming the
// cumulative counters grew evenly from a to b; gauges are b's.
func interpolate(a, b reading, t time.Time) reading {
	span := b.at.Sub(a.at)
	if span <= 0 {
		return b
	}
	f := float64(t.Sub(a.at)) / float64(span)
	lerp := func(x, y int64) int64 { return x + int64(f*float64(y-x)+0.5) }
	r := b
	r.at = t
	r.snap = snapshot{
		bytesUp:       lerp(a.snap.bytesUp, b.snap.bytesUp),
		bytesDown:     lerp(a.snap.bytesDown, b.snap.bytesDown),
		open:          b.snap.open,
		connects:      lerp(a.snap.connects, b.snap.connects),
		connectErrors: lerp(a.snap.connectErrors, b.snap.connectErrors),
		disruptions:   lerp(a.snap.disruptions, b.snap.disruptions),
		// probes: a Second takes them from counters.takeProbes, whole
	}
	r.proc.cpu = a.proc.cpu + f*(b.proc.cpu-a.proc.cpu)
	if a.tcp.ok && b.tcp.ok {
		r.tcp.retrans = lerp(a.tcp.retrans, b.tcp.retrans)
		r.tcp.estResets = lerp(a.tcp.estResets, b.tcp.estResets)
	}
	return r
}
