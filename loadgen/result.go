package loadgen

import (
	"cmp"
	"fmt"
	"maps"
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
	T             int64   `json:"t"`
	BytesUp       int64   `json:"bytes_up"`
	BytesDown     int64   `json:"bytes_down"`
	Open          int64   `json:"open"`
	Connects      int64   `json:"connects"`
	ConnectErrors int64   `json:"connect_errors"`
	Disruptions   int64   `json:"disruptions"`
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

	BytesUp     int64 `json:"bytes_up"`
	BytesDown   int64 `json:"bytes_down"`
	Disruptions int64 `json:"disruptions"`
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
// Histograms must be set.
func Merge(results ...Result) (Result, error) {
	if len(results) == 0 {
		return Result{}, fmt.Errorf("merge: no results")
	}
	out := Result{
		Target: results[0].Target,
		Path:   results[0].Path,
		Errors: map[string]int64{},
	}
	connect, probe := NewLatencyHistogram(), NewLatencyHistogram()
	var end time.Time
	seconds := map[int64]*Second{}
	for i, r := range results {
		if r.Histograms.Connect == nil || r.Histograms.Probe == nil {
			return Result{}, fmt.Errorf("merge: result %d has no histograms", i)
		}
		if out.Start.IsZero() || r.Start.Before(out.Start) {
			out.Start = r.Start
		}
		if e := r.Start.Add(time.Duration(r.DurationSeconds * float64(time.Second))); e.After(end) {
			end = e
		}
		out.Processes += max(r.Processes, 1)
		out.Interrupted = out.Interrupted || r.Interrupted
		out.ConnsRequested += r.ConnsRequested
		out.BytesUp += r.BytesUp
		out.BytesDown += r.BytesDown
		out.Disruptions += r.Disruptions
		out.Probes += r.Probes
		out.ProbeFailures += r.ProbeFailures
		for k, v := range r.Errors {
			out.Errors[k] += v
		}
		if dropped := connect.Merge(hdrhistogram.Import(r.Histograms.Connect)); dropped > 0 {
			return Result{}, fmt.Errorf("merge: result %d: %d connect samples out of range", i, dropped)
		}
		if dropped := probe.Merge(hdrhistogram.Import(r.Histograms.Probe)); dropped > 0 {
			return Result{}, fmt.Errorf("merge: result %d: %d probe samples out of range", i, dropped)
		}
		for _, s := range r.Series {
			m := seconds[s.T]
			if m == nil {
				m = &Second{T: s.T}
				seconds[s.T] = m
			}
			m.Add(s)
		}
	}
	out.DurationSeconds = end.Sub(out.Start).Seconds()
	for _, t := range slices.Sorted(maps.Keys(seconds)) {
		s := *seconds[t]
		out.Series = append(out.Series, s)
		out.ConnsAchieved = max(out.ConnsAchieved, s.Open)
	}
	if len(out.Series) == 0 {
		// No series: the best bound is the sum of the peaks.
		for _, r := range results {
			out.ConnsAchieved += r.ConnsAchieved
		}
	}
	out.Histograms = Histograms{Connect: connect.Export(), Probe: probe.Export()}
	out.ConnectLatencyMS = Summarize(connect)
	out.ProbeLatencyMS = Summarize(probe)
	return out, nil
}

// Add folds s, the same second from another process, into m: counters
// and per-process readings add up, the slowest probe and the machine-wide
// TCP counters take the larger.
func (m *Second) Add(s Second) {
	m.BytesUp += s.BytesUp
	m.BytesDown += s.BytesDown
	m.Open += s.Open
	m.Connects += s.Connects
	m.ConnectErrors += s.ConnectErrors
	m.Disruptions += s.Disruptions
	m.Probes += s.Probes
	m.ProbeFailures += s.ProbeFailures
	m.ProbeMaxMS = max(m.ProbeMaxMS, s.ProbeMaxMS)
	m.CPUSeconds += s.CPUSeconds
	m.RSSBytes += s.RSSBytes
	m.FDs += s.FDs
	m.Threads += s.Threads
	m.TCPRetransmits = max(m.TCPRetransmits, s.TCPRetransmits)
	m.TCPResets = max(m.TCPResets, s.TCPResets)
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
