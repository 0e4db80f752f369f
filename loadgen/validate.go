package loadgen

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Bounds on what a run of load can count. They are far above anything a
// run reaches, so that they never refuse a real report, and far below
// int64's range, so that a report within them cannot make the figures
// derived from it overflow.
const (
	// maxPerProcessSecond bounds what one load process counts in a second:
	// bytes of payload, dials, errors, probes. 2^40 (1.1 TB) is some 200
	// times the 41 Gbit/s (5 GB/s) of the fastest loopback run measured
	// (docs/load.md); no process dials or probes anywhere near as often.
	maxPerProcessSecond = 1 << 40
	// tailSeconds is added to a run's duration when bounding its counters:
	// the end-of-run handshake (up to stopGrace) still adds bytes to the
	// last second, and seconds are whole.
	tailSeconds = 10
	// Readings of one process: the largest user address space of 64-bit
	// Linux (5-level paging, 128 PiB), descriptors as C ints, Linux's
	// PID_MAX_LIMIT (4,194,304) for threads, and CPU time for 65,536 CPUs,
	// eight times Linux's largest NR_CPUS.
	maxRSSPerProcess     = 1 << 57
	maxFDsPerProcess     = 1 << 31
	maxThreadsPerProcess = 1 << 22
	maxCPUsPerProcess    = 1 << 16
)

// minStart and maxEnd bound when a run can have started and ended: the
// range of Unix nanoseconds (1970 to 2262), in which the plot places a
// run's seconds and in which any two runs are less than a Duration apart,
// so that merging them never saturates the merged duration.
var (
	minStart = time.Unix(0, 0)
	maxEnd   = time.Unix(0, math.MaxInt64)
)

// latencyGeometry describes the histogram of NewLatencyHistogram as it
// exports: how many counts it has, the indices that RecordLatency can
// reach (it clamps to [histLowest, histHighest]), and the largest
// percentile Summarize can give, in milliseconds.
var latencyGeometry = func() (g struct {
	counts, low, high int
	maxMS             float64
}) {
	index := func(v int64) (int, float64) {
		h := NewLatencyHistogram()
		_ = h.RecordValue(v)
		return slices.Index(h.Export().Counts, 1), Summarize(h).Max
	}
	g.counts = len(NewLatencyHistogram().Export().Counts)
	g.low, _ = index(histLowest)
	g.high, g.maxMS = index(histHighest)
	return g
}()

// Validate reports the first field of rep that load --json cannot have
// written, naming it by its JSON path (levels[2].series[7].open): see
// Result.Validate.
func (rep Report) Validate() error {
	if rep.Result != nil {
		return rep.Result.Validate()
	}
	for i, l := range rep.Levels {
		if err := l.Validate(); err != nil {
			return fmt.Errorf("levels[%d].%w", i, err)
		}
	}
	return nil
}

// Validate reports the first field of r that a run of load (or a merge of
// such runs) cannot have produced, named by its JSON path
// (histograms.connect.Counts[17]). It is what stands between a report
// read from a file and Merge: a field out of its range would otherwise
// show as a wrong figure (a percentile from counts out of the histogram's
// range, a wrapped sum) rather than as an error. The first field only:
// one broken field usually breaks many, and the first says where.
//
// Every count is non-negative, and no larger than maxPerProcessSecond a
// second for each of r.Processes over the run; the histograms have the
// geometry of NewLatencyHistogram, their counts within the range
// RecordLatency clamps to, adding up to the percentiles' count; the
// series has at most one entry a second, within the run.
func (r Result) Validate() error {
	v := validator{r: r}
	// Without its histograms a result is no report of load at all (nor
	// can it merge), whatever else it holds.
	if r.Histograms.Connect == nil || r.Histograms.Probe == nil {
		v.fail("histograms", "missing: no histograms to merge")
		return v.err
	}
	v.run()
	v.histograms()
	v.series()
	return v.err
}

// validator checks a Result, keeping the first error.
type validator struct {
	r   Result
	err error
}

func (v *validator) fail(field, format string, args ...any) {
	if v.err == nil {
		v.err = fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...))
	}
}

// limit is the most any counter of r can reach in seconds of its run.
func (v *validator) limit(seconds float64) float64 {
	return maxPerProcessSecond * float64(max(v.r.Processes, 1)) * (seconds + tailSeconds)
}

// count checks a counter of r that covers seconds of its run.
func (v *validator) count(field string, n int64, seconds float64) {
	switch {
	case n < 0:
		v.fail(field, "negative count %d", n)
	case float64(n) > v.limit(seconds):
		v.fail(field, "%d is more than %d processes count in %v s (at most %d a second each)",
			n, max(v.r.Processes, 1), seconds, int64(maxPerProcessSecond))
	}
}

// reading checks a reading of r's processes against max for each.
func (v *validator) reading(field string, n int64, perProcess int64) {
	switch {
	case n < 0:
		v.fail(field, "negative reading %d", n)
	case float64(n) > float64(perProcess)*float64(max(v.r.Processes, 1)):
		v.fail(field, "%d is more than %d processes can have (%d each)", n, max(v.r.Processes, 1), perProcess)
	}
}

// run checks r's own fields: when and how long it ran, in how many
// processes, and its totals.
func (v *validator) run() {
	r := v.r
	switch {
	case r.Start.IsZero():
		v.fail("start", "missing")
	case r.Start.Before(minStart) || r.Start.After(maxEnd):
		v.fail("start", "%s is outside %s to %s, where Unix nanoseconds place a run",
			r.Start.Format(time.RFC3339), minStart.UTC().Format(time.DateOnly), maxEnd.UTC().Format(time.DateOnly))
	}
	d := r.DurationSeconds
	switch {
	case math.IsNaN(d) || d < 0:
		v.fail("duration_seconds", "negative duration %v", d)
	case v.err == nil && d > maxEnd.Sub(r.Start).Seconds():
		v.fail("duration_seconds", "%v s from the start ends after %s", d, maxEnd.UTC().Format(time.DateOnly))
	}
	if rs := r.RampSeconds; rs != nil && v.err == nil && !(*rs >= 0 && *rs <= d) {
		v.fail("ramp_seconds", "%v, but a ramp lasts from 0 to the run's %v s", *rs, d)
	}
	if v.err != nil {
		return // the bounds below rest on the duration
	}
	// Run asks for at least one connection; Fleet runs at most one process
	// a connection; a merge adds both up.
	switch {
	case r.ConnsRequested < 1:
		v.fail("conns_requested", "%d, but a run asks for at least one connection", r.ConnsRequested)
	case r.Processes < 1:
		v.fail("processes", "%d, but a run has at least one", r.Processes)
	case r.Processes > r.ConnsRequested:
		v.fail("processes", "%d for %d connections requested, but load runs at most one process a connection",
			r.Processes, r.ConnsRequested)
	case r.ConnsAchieved < 0:
		v.fail("conns_achieved", "negative count %d", r.ConnsAchieved)
	case r.ConnsAchieved > int64(r.ConnsRequested):
		v.fail("conns_achieved", "%d of %d requested, but load opens at most the connections requested",
			r.ConnsAchieved, r.ConnsRequested)
	}
	v.count("bytes_up", r.BytesUp, d)
	if r.DeliveredUp != nil {
		v.count("delivered_up", *r.DeliveredUp, d)
	}
	v.count("bytes_down", r.BytesDown, d)
	v.count("disruptions", r.Disruptions, d)
	v.count("probes", r.Probes, d)
	v.count("probe_failures", r.ProbeFailures, d)
	if v.err == nil && r.ProbeFailures > r.Probes {
		v.fail("probe_failures", "%d of %d probes", r.ProbeFailures, r.Probes)
	}
	for _, k := range sortedErrors(r.Errors) {
		if !slices.Contains(ErrorKinds, k) {
			v.fail("errors."+k, "not a kind load counts (%s)", strings.Join(ErrorKinds, ", "))
		}
		v.count("errors."+k, r.Errors[k], d)
	}
}

// histograms checks r's raw histograms and the percentiles summarising
// them.
func (v *validator) histograms() {
	r := v.r
	connect := v.histogram("histograms.connect", r.Histograms.Connect)
	probe := v.histogram("histograms.probe", r.Histograms.Probe)
	if v.err != nil {
		return
	}
	v.count("histograms.connect", connect, r.DurationSeconds)
	v.percentiles("connect_latency_ms", r.ConnectLatencyMS, connect)
	v.percentiles("probe_latency_ms", r.ProbeLatencyMS, probe)
	// Every probe that ran either failed or was timed: the probe histogram
	// holds the passing ones.
	if passed := r.Probes - r.ProbeFailures; v.err == nil && probe != passed {
		v.fail("probe_latency_ms.count", "%d, but %d probes ran and %d failed", probe, r.Probes, r.ProbeFailures)
	}
}

// histogram checks the snapshot s at field and returns its total count.
func (v *validator) histogram(field string, s *hdrhistogram.Snapshot) int64 {
	// Counts are indexed by the geometry: another one would put every
	// sample at another latency when merged.
	for _, g := range []struct {
		name      string
		got, want int64
	}{
		{"LowestTrackableValue", s.LowestTrackableValue, histLowest},
		{"HighestTrackableValue", s.HighestTrackableValue, histHighest},
		{"SignificantFigures", s.SignificantFigures, histDigits},
	} {
		if g.got != g.want {
			v.fail(field+"."+g.name, "%d, but every latency histogram has %d", g.got, g.want)
		}
	}
	// 0 means 1: counts are whole microseconds.
	if s.IntegerToDoubleConversionRatio != 0 && s.IntegerToDoubleConversionRatio != 1 {
		v.fail(field+".IntegerToDoubleConversionRatio", "%v, but latencies are recorded in whole microseconds", s.IntegerToDoubleConversionRatio)
	}
	if len(s.Counts) > latencyGeometry.counts {
		v.fail(field+".Counts", "%d counts, but the latency histogram has %d", len(s.Counts), latencyGeometry.counts)
	}
	if v.err != nil {
		return 0
	}
	var total int64
	for i, c := range s.Counts {
		at := fmt.Sprintf("%s.Counts[%d]", field, i)
		switch {
		case c < 0:
			v.fail(at, "negative count %d", c)
		case c > 0 && (i < latencyGeometry.low || i > latencyGeometry.high):
			v.fail(at, "%d samples outside %d to %d µs, the range latencies are recorded in", c, int64(histLowest), histHighest)
		}
		var ok bool
		if total, ok = addInt(total, c); !ok {
			v.fail(at, "the counts add up to more than int64 holds")
		}
		if v.err != nil {
			return 0
		}
	}
	return total
}

// percentiles checks p, the summary of a histogram of total samples: what
// Summarize returns, in the histogram's range.
func (v *validator) percentiles(field string, p Percentiles, total int64) {
	if p.Count != total {
		v.fail(field+".count", "%d, but the histogram holds %d samples", p.Count, total)
		return
	}
	prev := 0.0
	for _, q := range []struct {
		name string
		ms   float64
	}{{"p50", p.P50}, {"p90", p.P90}, {"p99", p.P99}, {"max", p.Max}} {
		switch {
		case total == 0 && q.ms != 0:
			v.fail(field+"."+q.name, "%v ms without a sample", q.ms)
		case math.IsNaN(q.ms) || q.ms < prev || q.ms > latencyGeometry.maxMS:
			v.fail(field+"."+q.name, "%v ms is not between the percentile below it (%v ms) and the histogram's top (%v ms)",
				q.ms, prev, latencyGeometry.maxMS)
		}
		prev = q.ms
	}
}

// series checks r's series: one entry a second of the run at most, in
// order, each within what that second can hold.
func (v *validator) series() {
	r := v.r
	if v.err != nil || len(r.Series) == 0 {
		return
	}
	// The sampler numbers seconds from the start's, and the last one (of
	// the end-of-run reading) may be the one after the end's; a merge's
	// duration runs from the first start to the last end. One more second
	// covers the rounding of durations in floating point.
	first := r.Start.Unix()
	last := int64(math.Ceil(float64(r.Start.UnixNano())/1e9+r.DurationSeconds)) + 2
	if n := int64(len(r.Series)); n > last-first+1 {
		v.fail("series", "%d seconds, but a run of %v s has at most %d", n, r.DurationSeconds, last-first+1)
		return
	}
	procs := max(r.Processes, 1)
	for i, s := range r.Series {
		at := fmt.Sprintf("series[%d]", i)
		switch {
		case s.T < first || s.T > last:
			v.fail(at+".t", "second %d is outside the run, seconds %d to %d", s.T, first, last)
		case i > 0 && s.T <= r.Series[i-1].T:
			v.fail(at+".t", "second %d follows second %d: one entry a second, in order", s.T, r.Series[i-1].T)
		}
		v.count(at+".bytes_up", s.BytesUp, 1)
		v.count(at+".bytes_down", s.BytesDown, 1)
		v.count(at+".connects", s.Connects, 1)
		v.count(at+".connect_errors", s.ConnectErrors, 1)
		v.count(at+".disruptions", s.Disruptions, 1)
		v.count(at+".probes", s.Probes, 1)
		v.count(at+".probe_failures", s.ProbeFailures, 1)
		v.count(at+".tcp_retransmits", s.TCPRetransmits, 1)
		v.count(at+".tcp_resets", s.TCPResets, 1)
		// conns_achieved is the most open at the end of any second.
		switch {
		case s.Open < 0:
			v.fail(at+".open", "negative reading %d", s.Open)
		case s.Open > r.ConnsAchieved:
			v.fail(at+".open", "%d, more than conns_achieved (%d), the most open at the end of any second", s.Open, r.ConnsAchieved)
		}
		v.reading(at+".rss_bytes", s.RSSBytes, maxRSSPerProcess)
		v.reading(at+".fds", s.FDs, maxFDsPerProcess)
		v.reading(at+".threads", s.Threads, maxThreadsPerProcess)
		switch maxCPU := float64(maxCPUsPerProcess) * float64(procs) * (1 + tailSeconds); {
		case math.IsNaN(s.CPUSeconds) || s.CPUSeconds < 0 || s.CPUSeconds > maxCPU:
			v.fail(at+".cpu_seconds", "%v s, but %d processes use 0 to %v s of CPU time in a second", s.CPUSeconds, procs, maxCPU)
		case math.IsNaN(s.ProbeMaxMS) || math.IsInf(s.ProbeMaxMS, 0) || s.ProbeMaxMS < 0:
			v.fail(at+".probe_max_ms", "%v ms, not a latency", s.ProbeMaxMS)
		}
		if v.err != nil {
			return
		}
	}
}
