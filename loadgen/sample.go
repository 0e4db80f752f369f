package loadgen

import "time"

// sampler turns the run's cumulative counters into one Second per
// wall-clock second, adding readings of the process and of the machine's
// TCP counters. Only one goroutine uses it at a time: the sampling
// goroutine during the run, Run after it.
//
// Process readings are cheap (see readProc). Sockets are never listed
// (gopsutil's net.Connections took half a second at 18,000 of them): open
// connections come from the run's own counter.
type sampler struct {
	c        *counters
	onSecond func(Second)

	nextT   int64    // the second being measured
	last    snapshot // counters at the start of nextT
	lastCPU float64  // process CPU seconds at the start of nextT
	lastTCP tcpCounters
	series  []Second
}

// tcpCounters are the machine's TCP counters that a Second reports.
type tcpCounters struct {
	ok                 bool
	retrans, estResets int64
}

func newSampler(c *counters, start time.Time, onSecond func(Second)) *sampler {
	return &sampler{
		c:        c,
		onSecond: onSecond,
		nextT:    start.Unix(),
		last:     c.snapshot(),
		lastCPU:  readProc().cpu,
		lastTCP:  readTCP(),
	}
}

// loop closes a Second at every wall-clock second boundary until stop is
// closed, passing each to onSecond.
//
// Seconds are numbered, not read off the clock: a boundary handled late
// (an overloaded machine) still closes the next second in turn, so the
// series has no gaps and no duplicates.
func (s *sampler) loop(stop <-chan struct{}) {
	t := time.NewTimer(time.Until(time.Unix(s.nextT+1, 0)))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		sec := s.close(s.c.snapshot(), s.c.probeMaxUS.Swap(0), readProc())
		if s.onSecond != nil {
			s.onSecond(sec)
		}
		t.Reset(time.Until(time.Unix(s.nextT+1, 0)))
	}
}

// close ends the second being measured with the counters in now and the
// process reading proc, appends it to the series and returns it. Open is
// now's reading.
func (s *sampler) close(now snapshot, probeMaxUS int64, proc procReading) Second {
	tcp := readTCP()
	sec := Second{
		T:             s.nextT,
		BytesUp:       now.bytesUp - s.last.bytesUp,
		BytesDown:     now.bytesDown - s.last.bytesDown,
		Open:          now.open,
		Connects:      now.connects - s.last.connects,
		ConnectErrors: now.connectErrors - s.last.connectErrors,
		Disruptions:   now.disruptions - s.last.disruptions,
		Probes:        now.probes - s.last.probes,
		ProbeFailures: now.probeFailures - s.last.probeFailures,
		ProbeMaxMS:    float64(probeMaxUS) / 1000,
		CPUSeconds:    max(proc.cpu-s.lastCPU, 0),
		RSSBytes:      proc.rss,
		FDs:           proc.fds,
		Threads:       proc.threads,
	}
	if tcp.ok && s.lastTCP.ok {
		sec.TCPRetransmits = max(tcp.retrans-s.lastTCP.retrans, 0)
		sec.TCPResets = max(tcp.estResets-s.lastTCP.estResets, 0)
	}
	s.series = append(s.series, sec)
	s.nextT++
	s.last, s.lastCPU, s.lastTCP = now, proc.cpu, tcp
	return sec
}

// procReading is a reading of the process: CPU seconds used so far,
// resident memory, open descriptors and threads.
type procReading struct {
	cpu               float64
	rss, fds, threads int64
}
