package loadgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tunnelprobe/tunnelprobe/internal/units"
)

// Report is what `tunnelprobe load --json` writes. For a single run, the
// Result's fields sit at the top level; for a sweep, Result is nil and
// Levels holds one Result per level, in the order they ran.
type Report struct {
	*Result
	Levels []Result `json:"levels,omitempty"`
}

// WriteJSON writes rep to w as indented JSON. Maps and lists the schema
// documents are written as {} and [] rather than null when empty.
//
// The raw histograms take one line each, without their trailing empty
// buckets: indented, a single histogram would take some 20,000 lines, and
// hdrhistogram.Import reads a shortened snapshot back exactly.
func WriteJSON(w io.Writer, rep Report) error {
	var out reportJSON
	var hists []Histograms
	placeholder := func(r Result) *resultJSON {
		// The histograms are marshalled apart and spliced in for a
		// placeholder: json.MarshalIndent would indent them too.
		hists = append(hists, r.Histograms)
		r = normalize(r)
		return &resultJSON{Result: &r, Histograms: fmt.Sprintf("%shistograms-%d", histMark, len(hists)-1)}
	}
	if rep.Result != nil {
		out.resultJSON = placeholder(*rep.Result)
	}
	for _, l := range rep.Levels {
		out.Levels = append(out.Levels, *placeholder(l))
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return fmt.Errorf("json report: %w", err)
	}
	for i, h := range hists {
		compact, err := json.Marshal(Histograms{Connect: trimSnapshot(h.Connect), Probe: trimSnapshot(h.Probe)})
		if err != nil {
			return fmt.Errorf("json report: %w", err)
		}
		mark, _ := json.Marshal(fmt.Sprintf("%shistograms-%d", histMark, i))
		b = bytes.Replace(b, mark, compact, 1)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// histMark starts the placeholders of WriteJSON. No string of a Result
// holds a NUL, so a placeholder cannot be mistaken for data.
const histMark = "\x00"

// reportJSON and resultJSON are Report and Result as WriteJSON writes them:
// the Histograms field of resultJSON, being shallower, hides Result's.
type reportJSON struct {
	*resultJSON
	Levels []resultJSON `json:"levels,omitempty"`
}

type resultJSON struct {
	*Result
	Histograms string `json:"histograms"`
}

// trimSnapshot returns a copy of s without its trailing empty buckets.
func trimSnapshot(s *hdrhistogram.Snapshot) *hdrhistogram.Snapshot {
	if s == nil {
		return nil
	}
	t := *s
	n := len(t.Counts)
	for n > 0 && t.Counts[n-1] == 0 {
		n--
	}
	t.Counts = t.Counts[:n]
	return &t
}

// normalize returns r with nil maps and slices made empty, so that a reader
// can rely on every documented field being an object or an array.
func normalize(r Result) Result {
	if r.Errors == nil {
		r.Errors = map[string]int64{}
	}
	if r.Series == nil {
		r.Series = []Second{}
	}
	return r
}

// upBytes is what went up: delivered where known, else written.
func (r Result) upBytes() int64 {
	if r.DeliveredUp != nil {
		return *r.DeliveredUp
	}
	return r.BytesUp
}

// mbits returns the average rate of bytes over seconds in Mbit/s.
func mbits(bytes int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(bytes) * 8 / seconds / 1e6
}

// failureRate returns the share of failed probes in percent.
func failureRate(r Result) float64 {
	if r.Probes == 0 {
		return 0
	}
	return 100 * float64(r.ProbeFailures) / float64(r.Probes)
}

func latencyLine(p Percentiles) string {
	return fmt.Sprintf("p50 %.2f  p90 %.2f  p99 %.2f  max %.2f", p.P50, p.P90, p.P99, p.Max)
}

// WriteSummary writes the human summary of one run (or of one level).
// Throughput is averaged over the whole run, ramp included.
func WriteSummary(w io.Writer, r Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(label, format string, args ...any) {
		fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{label}, args...)...)
	}
	path := r.Path
	if path == "" {
		path = "direct"
	}
	line("target", "%s (%s)", r.Target, path)
	line("processes", "%d", max(r.Processes, 1))
	if r.Interrupted {
		line("duration", "%.1f s, interrupted: the figures cover what was measured until the stop", r.DurationSeconds)
	} else {
		line("duration", "%.1f s", r.DurationSeconds)
	}
	achieved := 0.0
	if r.ConnsRequested > 0 {
		achieved = 100 * float64(r.ConnsAchieved) / float64(r.ConnsRequested)
	}
	line("connections", "%d requested, %d achieved (%.1f%%)", r.ConnsRequested, r.ConnsAchieved, achieved)
	if rs := r.RampSeconds; rs != nil && *rs > 0 {
		line("ramp", "every first dial ended within %.3f s (%.0f a second)", *rs, float64(r.ConnsRequested) / *rs)
	}
	if d := r.DeliveredUp; d != nil {
		line("throughput", "up %.2f Mbit/s delivered (%.2f written into the sockets), down %.2f Mbit/s (%s delivered up, %s down)",
			mbits(*d, r.DurationSeconds), mbits(r.BytesUp, r.DurationSeconds), mbits(r.BytesDown, r.DurationSeconds),
			units.Bytes(uint64(max(*d, 0))), units.Bytes(uint64(max(r.BytesDown, 0))))
	} else {
		line("throughput", "up %.2f Mbit/s, down %.2f Mbit/s (%s up, %s down)",
			mbits(r.BytesUp, r.DurationSeconds), mbits(r.BytesDown, r.DurationSeconds), units.Bytes(uint64(max(r.BytesUp, 0))), units.Bytes(uint64(max(r.BytesDown, 0))))
	}
	line("disruptions", "%d", r.Disruptions)
	if kinds := sortedErrors(r.Errors); len(kinds) > 0 {
		parts := make([]string, len(kinds))
		for i, k := range kinds {
			parts[i] = fmt.Sprintf("%s %d", k, r.Errors[k])
		}
		line("errors", "%s", strings.Join(parts, ", "))
	} else {
		line("errors", "none")
	}
	line("connect ms", "%s (%d dials)", latencyLine(r.ConnectLatencyMS), r.ConnectLatencyMS.Count)
	if r.Probes == 0 {
		line("probe ms", "no probes")
	} else {
		line("probe ms", "%s (%d passed)", latencyLine(r.ProbeLatencyMS), r.ProbeLatencyMS.Count)
		line("probe failures", "%d of %d (%.1f%%)", r.ProbeFailures, r.Probes, failureRate(r))
	}
	return tw.Flush()
}

// WriteSweepTable writes one row per level of a sweep: connections
// requested and achieved, average throughput (up: delivered where known),
// the probe's latency with the count of timed (passing) probes it rests
// on, and its failure rate.
func WriteSweepTable(w io.Writer, levels []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "conns\tachieved\tup Mbit/s\tdown Mbit/s\tprobes timed\tprobe p50 ms\tprobe p99 ms\tprobe max ms\tprobe failures\tinterrupted\t\n")
	for _, r := range levels {
		interrupted := "no"
		if r.Interrupted {
			interrupted = "yes"
		}
		fmt.Fprintf(tw, "%d\t%d\t%.2f\t%.2f\t%d\t%.2f\t%.2f\t%.2f\t%.1f%% (%d/%d)\t%s\t\n",
			r.ConnsRequested, r.ConnsAchieved,
			mbits(r.upBytes(), r.DurationSeconds), mbits(r.BytesDown, r.DurationSeconds),
			r.ProbeLatencyMS.Count, r.ProbeLatencyMS.P50, r.ProbeLatencyMS.P99, r.ProbeLatencyMS.Max,
			failureRate(r), r.ProbeFailures, r.Probes, interrupted)
	}
	return tw.Flush()
}
