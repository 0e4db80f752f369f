package loadgen

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds from 1 µs to 1 hour with three
// significant digits: fine enough for loopback dials, wide enough for a
// handshake stuck behind a full queue.
const (
	histLowest  = 1
	histHighest = int64(time.Hour / time.Microsecond)
	histDigits  = 3
)

// NewLatencyHistogram returns an empty histogram with the geometry every
// Result uses, so that histograms from any process merge exactly.
func NewLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, histDigits)
}

// RecordLatency records d in h, clamped to the histogram's range.
func RecordLatency(h *hdrhistogram.Histogram, d time.Duration) {
	_ = h.RecordValue(min(max(d.Microseconds(), histLowest), histHighest))
}

// Percentiles summarises a latency histogram in milliseconds.
type Percentiles struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// Summarize returns the percentiles of h.
func Summarize(h *hdrhistogram.Histogram) Percentiles {
	if h == nil || h.TotalCount() == 0 {
		return Percentiles{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Percentiles{
		Count: h.TotalCount(),
		P50:   ms(h.ValueAtQuantile(50)),
		P90:   ms(h.ValueAtQuantile(90)),
		P99:   ms(h.ValueAtQuantile(99)),
		Max:   ms(h.Max()),
	}
}

// Second is what happened during one second of a run. Counters count events
// within that second; Open, RSS, FDs and Threads are readings at its end.
type Second struct {
	// T is the second, as Unix time: series from several processes align
	// on it.
	T             int64 `json:"t"`
	BytesUp       int64 `json:"bytes_up"`
	BytesDown     int64 `json:"bytes_down"`
	Open          int64 `json:"open"`
	Connects      int64 `json:"connects"`
	ConnectErrors int64 `json:"connect_errors"`
	Disruptions   int64 `json:"disruptions"`
	// Probes, ProbeFailures and ProbeMaxMS (the slowest that passed) are
	// those of the probes that ended in the second, counted and timed
	// together: a probe's count and latency are always in the same
	// Second. A probe ending as the sampler closes a second may go to
	// that second or the next; when the sampler wakes up late and closes
	// several seconds at once, the probes of all of them go to the first.
	Probes        int64   `json:"probes"`
	ProbeFailures int64   `json:"probe_failures"`
	ProbeMaxMS    float64 `json:"probe_max_ms"`
	// The load generator's own processes, summed across them.
	CPUSeconds float64 `json:"cpu_seconds"`
	RSSBytes   int64   `json:"rss_bytes"`
	FDs        int64   `json:"fds"`
	Threads    int64   `json:"threads"`
	// The whole machine's TCP counters: processes on one machine read the
	// same ones, so merging keeps the largest rather than adding.
	TCPRetransmits int64 `json:"tcp_retransmits"`
	TCPResets      int64 `json:"tcp_resets"`
}

// Histograms holds a result's raw latency histograms, so that results merge
// exactly rather than by averaging percentiles.
type Histograms struct {
	Connect *hdrhistogram.Snapshot `json:"connect"`
	Probe   *hdrhistogram.Snapshot `json:"probe"`
}

// Result is the outcome of one load run (one level of a sweep), as written
// by --json. Counters cover the whole run, ramp included.
type Result struct {
	Target          string    `json:"target"`
	Path            string    `json:"path"`
	Start           time.Time `json:"start"`
	DurationSeconds float64   `json:"duration_seconds"`
	Processes       int       `json:"processes"`
	// Interrupted is set when the run was stopped (Ctrl-C, SIGTERM) before
	// its end: the figures cover what was measured until then.
	Interrupted bool `json:"interrupted"`

	ConnsRequested int `json:"conns_requested"`
	// ConnsAchieved is the most connections open at the end of any second.
	ConnsAchieved int64 `json:"conns_achieved"`
	// RampSeconds is how long the ramp took: from the start until every
	// connection's first dial had ended (opened or failed). The series,
	// a reading a second, cannot time a ramp of a second or two. Nil when
	// the ramp did not end that way: interrupted before every dial had
	// started, or dials still pending when it ran out of time.
	RampSeconds *float64 `json:"ramp_seconds,omitempty"`

	// BytesUp counts what was written into the sockets, BytesDown what
	// was read from them.
	BytesUp   int64 `json:"bytes_up"`
	BytesDown int64 `json:"bytes_down"`
	// DeliveredUp, where the path can count it (through the lab: its
	// sink), is what the target received: what crossed the link. BytesUp
	// is more by what the send buffers of every connection still held, a
	// lot with a thousand connections on a slow link. Nil where unknown.
	DeliveredUp *int64 `json:"delivered_up,omitempty"`
	Disruptions int64  `json:"disruptions"`
	// Errors counts failed dials and broken connections by kind: refused,
	// timeout, reset, too_many_open_files, address_not_available, other.
	Errors map[string]int64 `json:"errors"`

	ConnectLatencyMS Percentiles `json:"connect_latency_ms"`
	ProbeLatencyMS   Percentiles `json:"probe_latency_ms"`
	Probes           int64       `json:"probes"`
	ProbeFailures    int64       `json:"probe_failures"`

	Series     []Second   `json:"series"`
	Histograms Histograms `json:"histograms"`
}

// Merge combines results of processes that ran side by side into one:
// counters added, histograms merged (so percentiles are those of all the
// samples together), series aligned on their second. Each result's
// Histograms must be set. A sum that would overflow is an error, not a
// wrapped figure.
func Merge(results ...Result) (Result, error) {
	return merge(results, func(i int) string { return fmt.Sprintf("result %d", i) })
}

// merge is Merge with name(i) naming results[i] in the errors: MergeReports
// names the files the results came from.
func merge(results []Result, name func(int) string) (Result, error) {
	if len(results) == 0 {
		return Result{}, fmt.Errorf("merge: no results")
	}
	out := Result{
		Target: results[0].Target,
		Path:   results[0].Path,
		Errors: map[string]int64{},
	}
	connect, probe := NewLatencyHistogram(), NewLatencyHistogram()
	var end, rampEnd time.Time
	rampKnown := true
	seconds := map[int64]*Second{}
	for i, r := range results {
		if r.Histograms.Connect == nil || r.Histograms.Probe == nil {
			return Result{}, fmt.Errorf("merge: %s has no histograms", name(i))
		}
		if out.Start.IsZero() || r.Start.Before(out.Start) {
			out.Start = r.Start
		}
		if e := r.Start.Add(secondsDuration(r.DurationSeconds)); e.After(end) {
			end = e
		}
		out.Interrupted = out.Interrupted || r.Interrupted
		if r.RampSeconds == nil {
			rampKnown = false
		} else if e := r.Start.Add(secondsDuration(*r.RampSeconds)); e.After(rampEnd) {
			rampEnd = e
		}
		if err := out.addCounters(r, name(i)); err != nil {
			return Result{}, err
		}
		if err := mergeHistograms(connect, probe, r.Histograms, name(i)); err != nil {
			return Result{}, err
		}
		for _, sec := range r.Series {
			m := seconds[sec.T]
			if m == nil {
				m = &Second{T: sec.T}
				seconds[sec.T] = m
			}
			if field := m.add(sec); field != "" {
				return Result{}, fmt.Errorf("merge: %s: series second %d: %s: the sum overflows", name(i), sec.T, field)
			}
		}
	}
	out.DurationSeconds = end.Sub(out.Start).Seconds()
	if rampKnown {
		// Side by side, the ramp ended when the last process's did.
		ramp := rampEnd.Sub(out.Start).Seconds()
		out.RampSeconds = &ramp
	}
	for _, t := range slices.Sorted(maps.Keys(seconds)) {
		s := *seconds[t]
		out.Series = append(out.Series, s)
		out.ConnsAchieved = max(out.ConnsAchieved, s.Open)
	}
	if len(out.Series) == 0 {
		// No series: the best bound is the sum of the peaks.
		for i, r := range results {
			s := sums{from: name(i)}
			if sumInto(&s, &out.ConnsAchieved, r.ConnsAchieved, "conns_achieved"); s.err != nil {
				return Result{}, s.err
			}
		}
	}
	delivered, err := sumDelivered(results, name)
	if err != nil {
		return Result{}, err
	}
	out.DeliveredUp = delivered
	out.Histograms = Histograms{Connect: connect.Export(), Probe: probe.Export()}
	out.ConnectLatencyMS = Summarize(connect)
	out.ProbeLatencyMS = Summarize(probe)
	return out, nil
}

// sumDelivered returns the sum of the results' DeliveredUp, or nil unless
// every result knows its own.
func sumDelivered(results []Result, name func(int) string) (*int64, error) {
	if len(results) == 0 {
		return nil, nil
	}
	var total int64
	for i, r := range results {
		if r.DeliveredUp == nil {
			return nil, nil
		}
		s := sums{from: name(i)}
		if sumInto(&s, &total, *r.DeliveredUp, "delivered_up"); s.err != nil {
			return nil, s.err
		}
	}
	return &total, nil
}

// addCounters adds r's counters into out; from names r in the error of a
// sum that would overflow.
func (out *Result) addCounters(r Result, from string) error {
	s := sums{from: from}
	sumInto(&s, &out.Processes, max(r.Processes, 1), "processes")
	sumInto(&s, &out.ConnsRequested, r.ConnsRequested, "conns_requested")
	sumInto(&s, &out.BytesUp, r.BytesUp, "bytes_up")
	sumInto(&s, &out.BytesDown, r.BytesDown, "bytes_down")
	sumInto(&s, &out.Disruptions, r.Disruptions, "disruptions")
	sumInto(&s, &out.Probes, r.Probes, "probes")
	sumInto(&s, &out.ProbeFailures, r.ProbeFailures, "probe_failures")
	for _, k := range sortedErrors(r.Errors) {
		n := out.Errors[k]
		sumInto(&s, &n, r.Errors[k], "errors."+k)
		out.Errors[k] = n
	}
	return s.err
}

// mergeHistograms merges h's histograms into connect and probe; from names
// them in the errors.
func mergeHistograms(connect, probe *hdrhistogram.Histogram, h Histograms, from string) error {
	for _, m := range []struct {
		name string
		into *hdrhistogram.Histogram
		snap *hdrhistogram.Snapshot
	}{{"connect", connect, h.Connect}, {"probe", probe, h.Probe}} {
		add := hdrhistogram.Import(m.snap)
		if _, ok := addInt(m.into.TotalCount(), add.TotalCount()); !ok {
			return fmt.Errorf("merge: %s: histograms.%s: its %d samples and the %d before it overflow int64",
				from, m.name, add.TotalCount(), m.into.TotalCount())
		}
		if dropped := m.into.Merge(add); dropped > 0 {
			return fmt.Errorf("merge: %s: %d %s samples out of range", from, dropped, m.name)
		}
	}
	return nil
}

// secondsDuration converts seconds to a Duration, clamped to its range: a
// float out of an integer's range converts to an unspecified value.
func secondsDuration(s float64) time.Duration {
	switch ns := s * float64(time.Second); {
	case ns >= math.MaxInt64:
		return math.MaxInt64
	case ns <= math.MinInt64:
		return math.MinInt64
	case math.IsNaN(ns):
		return 0
	default:
		return time.Duration(ns)
	}
}

// sums adds the counters of the result named from to a merge, keeping the
// first sum that overflows as err: a wrapped sum would print as a figure
// (a negative byte count, say) rather than as the mistake it is.
type sums struct {
	from string
	err  error
}

// sumInto adds v to *sum for s, unless an earlier sum of s overflowed;
// field is the JSON name of the counter.
func sumInto[T int | int64](s *sums, sum *T, v T, field string) {
	if s.err != nil {
		return
	}
	n, ok := addInt(*sum, v)
	if !ok {
		s.err = fmt.Errorf("merge: %s: %s: its %d and the %d of the results before it overflow the sum", s.from, field, v, *sum)
		return
	}
	*sum = n
}

// addInt returns a+b and whether it did not overflow.
func addInt[T int | int64](a, b T) (T, bool) {
	sum := a + b
	return sum, (b >= 0) == (sum >= a)
}

// Add folds s, the same second from another process, into m: counters
// and per-process readings add up, the slowest probe and the machine-wide
// TCP counters take the larger.
func (m *Second) Add(s Second) { m.add(s) }

// add is Add that also returns the JSON name of the first field whose sum
// overflowed (and wrapped), or "".
func (m *Second) add(s Second) (overflow string) {
	sum := func(dst *int64, v int64, field string) {
		var ok bool
		if *dst, ok = addInt(*dst, v); !ok && overflow == "" {
			overflow = field
		}
	}
	sum(&m.BytesUp, s.BytesUp, "bytes_up")
	sum(&m.BytesDown, s.BytesDown, "bytes_down")
	sum(&m.Open, s.Open, "open")
	sum(&m.Connects, s.Connects, "connects")
	sum(&m.ConnectErrors, s.ConnectErrors, "connect_errors")
	sum(&m.Disruptions, s.Disruptions, "disruptions")
	sum(&m.Probes, s.Probes, "probes")
	sum(&m.ProbeFailures, s.ProbeFailures, "probe_failures")
	m.ProbeMaxMS = max(m.ProbeMaxMS, s.ProbeMaxMS)
	m.CPUSeconds += s.CPUSeconds
	sum(&m.RSSBytes, s.RSSBytes, "rss_bytes")
	sum(&m.FDs, s.FDs, "fds")
	sum(&m.Threads, s.Threads, "threads")
	m.TCPRetransmits = max(m.TCPRetransmits, s.TCPRetransmits)
	m.TCPResets = max(m.TCPResets, s.TCPResets)
	return overflow
}

// ErrorKinds lists the error kinds of Result.Errors in report order.
var ErrorKinds = []string{"refused", "timeout", "reset", "too_many_open_files", "address_not_available", "other"}

// sortedErrors returns the error kinds present in errs, known kinds first.
func sortedErrors(errs map[string]int64) []string {
	keys := slices.Collect(maps.Keys(errs))
	rank := func(k string) int {
		if i := slices.Index(ErrorKinds, k); i >= 0 {
			return i
		}
		return len(ErrorKinds)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b))
	})
	return keys
}
