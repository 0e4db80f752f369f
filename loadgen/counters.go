package loadgen

import (
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// counters are a run's cumulative figures. Connections and the probe add
// to them as events happen; the sampler reads them once a second and
// turns differences into Seconds. Everything is safe for concurrent use.
type counters struct {
	bytesUp, bytesDown atomic.Int64
	// open counts established connections not yet closed: counting them
	// here is what lets a run avoid listing its sockets (gopsutil's listing
	// walks /proc and takes half a second at 18,000 sockets).
	open          atomic.Int64
	connects      atomic.Int64
	connectErrors atomic.Int64
	disruptions   atomic.Int64
	probes        atomic.Int64
	probeFailures atomic.Int64
	errs          []atomic.Int64 // indexed like ErrorKinds

	mu      sync.Mutex // guards the histograms, which are not concurrent, and untaken
	connect *hdrhistogram.Histogram
	probe   *hdrhistogram.Histogram
	// untaken is the probes recorded since the sampler last took them.
	// Their counts and their slowest latency are one value under mu, not
	// separate atomics, so that the sampler cannot take a probe's latency
	// into one second and leave its count for the next.
	untaken probeTally
}

// probeTally is what some probes add to a Second.
type probeTally struct {
	probes, failures int64
	maxUS            int64 // the slowest that passed, in microseconds
}

func newCounters() *counters {
	return &counters{
		errs:    make([]atomic.Int64, len(ErrorKinds)),
		connect: NewLatencyHistogram(),
		probe:   NewLatencyHistogram(),
	}
}

// connected records a successful dial that took d.
func (c *counters) connected(d time.Duration) {
	c.connects.Add(1)
	c.mu.Lock()
	RecordLatency(c.connect, d)
	c.mu.Unlock()
}

// dialFailed records a failed dial.
func (c *counters) dialFailed(err error) {
	c.connectErrors.Add(1)
	c.errs[kindIndex(Classify(err))].Add(1)
}

// broken records an established connection that broke with err.
func (c *counters) broken(err error) {
	c.disruptions.Add(1)
	c.errs[kindIndex(Classify(err))].Add(1)
}

// probed records a probe that took d and returned err.
func (c *counters) probed(d time.Duration, err error) {
	c.probes.Add(1)
	if err != nil {
		c.probeFailures.Add(1)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.untaken.probes++
	if err != nil {
		c.untaken.failures++
		return
	}
	c.untaken.maxUS = max(c.untaken.maxUS, d.Microseconds())
	RecordLatency(c.probe, d)
}

// takeProbes returns the probes recorded since it was last called.
func (c *counters) takeProbes() probeTally {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.untaken
	c.untaken = probeTally{}
	return t
}

// snapshot is a reading of the cumulative counters. Its probes and
// probeFailures are the run's totals; a Second's probes come from
// takeProbes instead.
type snapshot struct {
	bytesUp, bytesDown, open, connects, connectErrors, disruptions, probes, probeFailures int64
}

func (c *counters) snapshot() snapshot {
	return snapshot{
		bytesUp:       c.bytesUp.Load(),
		bytesDown:     c.bytesDown.Load(),
		open:          c.open.Load(),
		connects:      c.connects.Load(),
		connectErrors: c.connectErrors.Load(),
		disruptions:   c.disruptions.Load(),
		probes:        c.probes.Load(),
		probeFailures: c.probeFailures.Load(),
	}
}

// errors returns the non-zero error counts by kind.
func (c *counters) errors() map[string]int64 {
	m := map[string]int64{}
	for i, k := range ErrorKinds {
		if n := c.errs[i].Load(); n > 0 {
			m[k] = n
		}
	}
	return m
}
