package scenarios

import (
	"fmt"
	"slices"
)

// maxBreaksPerConnSecond bounds how often one load connection breaks: a
// broken connection waits at least 25 ms (half loadgen's first back-off of
// 50 ms) before it redials, so 40 times a second at most; 1,000 leaves room
// and keeps any sum of a matrix's runs (a week of them) far from int64's
// range.
const maxBreaksPerConnSecond = 1_000

// Validate reports the first field of r that a run cannot have written,
// named by its JSON path (configs.k8s.outages[0].detection_seconds). It is
// what stands between a report read back from a file (a matrix's shards,
// merged) and the figures, tables and plots made of it, which rely on what
// Run guarantees: the spec is a valid one, the configurations are the
// spec's, in its order, and each holds one outage report per outage of the
// spec (blips aside; an interrupted run's cut where it stopped, or uncut as
// earlier versions wrote them); every count is non-negative and no more than its
// timeline holds (false restarts no more than the restarts, those as many
// as the timeline's), every time within the run, every latency and share
// in its range, and a detection set exactly when its outage was detected.
func (r *Report) Validate() error {
	v := reportValidator{r: r}
	v.run()
	for i, name := range r.Order {
		if v.err != nil {
			break
		}
		v.config("configs."+name, r.Spec.Configs[i], r.Configs[name]) // run checked the order is the spec's
	}
	return v.err
}

// reportValidator checks a Report, keeping the first error.
type reportValidator struct {
	r   *Report
	err error
}

func (v *reportValidator) fail(field, format string, args ...any) {
	if v.err == nil {
		v.err = fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...))
	}
}

// run checks the report's own fields: its spec, and its configurations
// against the spec's.
func (v *reportValidator) run() {
	r := v.r
	if err := r.Spec.Validate(); err != nil {
		if errs, ok := err.(interface{ Unwrap() []error }); ok && len(errs.Unwrap()) > 0 {
			err = errs.Unwrap()[0] // the first, as for every other field
		}
		v.err = err // "spec: link.outages[0]: ..."
		return
	}
	switch {
	case r.Name != r.Spec.Name:
		v.fail("name", "%q, but the spec is %q", r.Name, r.Spec.Name)
	case r.Seed != r.Spec.Seed:
		v.fail("seed", "%d, but the spec's is %d", r.Seed, r.Spec.Seed)
	case r.DurationSeconds < 0 || r.DurationSeconds > r.Spec.Duration.Seconds()+3600:
		v.fail("duration_seconds", "%v s, outside 0 to the run's %v s and an hour for its labs to stop", r.DurationSeconds, r.Spec.Duration.Seconds())
	case r.StalledSeconds < 0 || r.StalledSeconds > r.DurationSeconds:
		v.fail("stalled_seconds", "%v s, outside 0 to the run's duration_seconds (%v s)", r.StalledSeconds, r.DurationSeconds)
	case r.PeakRSSBytes < 0 || r.PeakRSSBytes > maxRSSBytes:
		v.fail("peak_rss_bytes", "%d, outside 0 to %d, a 64-bit address space", r.PeakRSSBytes, int64(maxRSSBytes))
	case len(r.Order) != len(r.Spec.Configs):
		v.fail("order", "%d configurations, but the spec has %d", len(r.Order), len(r.Spec.Configs))
	case len(r.Configs) != len(r.Order):
		v.fail("configs", "%d configurations, but order names %d", len(r.Configs), len(r.Order))
	}
	for i, name := range r.Order {
		if _, ok := r.Configs[name]; v.err == nil && (name != r.Spec.Configs[i].Name || !ok) {
			v.fail(fmt.Sprintf("order[%d]", i), "%q, but the spec's configuration %d is %q, with figures in configs", name, i+1, r.Spec.Configs[i].Name)
		}
	}
}

// config checks the figures c of configuration cfg, at path.
func (v *reportValidator) config(path string, cfg ConfigSpec, c ConfigReport) {
	run := v.r.Spec.Duration.Seconds()
	tl := c.Timeline
	for _, n := range []struct {
		field string
		got   int
		want  int
	}{{"restarts", c.Restarts, len(tl.Restarts)}, {"heals", c.Heals, len(tl.Heals)}} {
		if n.got != n.want {
			v.fail(path+"."+n.field, "%d, but timeline.%s holds %d", n.got, n.field, n.want)
		}
	}
	for _, n := range []struct {
		field     string
		got, most int
		of        string
	}{
		{"false_restarts", c.FalseRestarts, c.Restarts, "restarts"},
		{"false_heals", c.FalseHeals, c.Heals, "heals"},
		{"blip_actions", c.BlipActions, c.Restarts + c.Heals, "restarts and heals"},
		{"later_actions", c.LaterActions, c.Restarts + c.Heals, "restarts and heals"},
		{"flaps", c.Flaps, len(tl.States), "state changes"},
		{"probes", c.Probes, len(tl.Probes), "probes of the timeline"},
		{"margin.most_failed_in_a_row", c.Margin.MostFailedInARow, len(tl.Probes), "probes of the timeline"},
	} {
		if n.got < 0 || n.got > n.most {
			v.fail(path+"."+n.field, "%d, outside 0 to the %d %s", n.got, n.most, n.of)
		}
	}
	v.within(path+".working_seconds", c.WorkingSeconds, 0, run, "s")
	v.within(path+".schedule_seconds", c.ScheduleSeconds, 0, MaxDuration.Seconds(), "s")
	v.within(path+".probe_success_ratio", c.ProbeSuccessRatio, 0, 1, "")
	for field, u := range map[string]*float64{"utilisation": c.Utilisation, "link_utilisation": c.LinkUtilisation} {
		if u != nil {
			v.within(path+"."+field, *u, 0, maxUtilisation, "")
		}
	}
	conns := int64(v.r.Spec.Load.Conns)
	switch {
	case c.ConnsAchieved < 0 || c.ConnsAchieved > conns:
		v.fail(path+".conns_achieved", "%d, but the load asks for %d connections", c.ConnsAchieved, conns)
	case c.BrokenConnections < 0 || float64(c.BrokenConnections) > float64(conns)*maxBreaksPerConnSecond*(run+10):
		v.fail(path+".broken_connections", "%d, but %d connections break at most %d times a second each in a run of %v s",
			c.BrokenConnections, conns, maxBreaksPerConnSecond, run)
	}
	v.latencies(path, c)
	if want := marginLimits(cfg); c.Margin.FailureThreshold != want.FailureThreshold ||
		c.Margin.TimeoutMS != want.TimeoutMS || c.Margin.ToleranceMS != want.ToleranceMS {
		v.fail(path+".margin", "threshold %d, timeout %v ms, tolerance %v ms, but the configuration's are %d, %v ms, %v ms",
			c.Margin.FailureThreshold, c.Margin.TimeoutMS, c.Margin.ToleranceMS, want.FailureThreshold, want.TimeoutMS, want.ToleranceMS)
	}
	v.outages(path, c)
	v.timeline(path+".timeline", tl)
}

// maxUtilisation bounds what a link carries over its rate: no more than
// the rate, with what the shaper's queue lets through in a burst and both
// directions counted; a thousand times leaves room for any bookkeeping.
const maxUtilisation = 1_000

// maxRSSBytes bounds a process's peak memory: the largest user address
// space of 64-bit Linux (5-level paging, 128 PiB).
const maxRSSBytes = 1 << 57

// maxLatencyMS bounds every latency and margin: nothing in a run takes
// longer than the longest run.
var maxLatencyMS = float64(MaxDuration.Milliseconds())

// within checks that x, at field, lies in [lo, hi].
func (v *reportValidator) within(field string, x, lo, hi float64, unit string) {
	if x < lo || x > hi {
		v.fail(field, "%v%s is outside %v to %v%s", x, unit, lo, hi, unit)
	}
}

// latencies checks c's latencies and margins, in milliseconds.
func (v *reportValidator) latencies(path string, c ConfigReport) {
	m := c.Margin
	for _, l := range []struct {
		field string
		ms    float64
	}{
		{"check_latency_ms.p50", c.CheckLatencyMS.P50}, {"check_latency_ms.p99", c.CheckLatencyMS.P99},
		{"margin.slowest_pass_ms", m.SlowestPassMS}, {"margin.timeout_ms", m.TimeoutMS},
		{"margin.longest_without_proof_ms", m.LongestWithoutProofMS}, {"margin.tolerance_ms", m.ToleranceMS},
	} {
		v.within(path+"."+l.field, l.ms, 0, maxLatencyMS, " ms")
	}
	if m.FailureThreshold < 0 {
		v.fail(path+".margin.failure_threshold", "negative: %d", m.FailureThreshold)
	}
}

// outages checks c's outage reports against the spec's outages as the run
// ran them (blips aside, cut at an interruption), and its detection against
// them. An interrupted run's reports may also hold the spec's outages
// uncut, as tunnelprobe wrote them before it cut them.
func (v *reportValidator) outages(path string, c ConfigReport) {
	windows := v.r.ran().outagesToDetect()
	if uncut := v.r.Spec.outagesToDetect(); v.r.Interrupted && !sameOutages(c.Outages, windows) && sameOutages(c.Outages, uncut) {
		windows = uncut
	}
	if len(c.Outages) != len(windows) {
		v.fail(path+".outages", "%d outage reports, but the run had %d outages (blips aside)", len(c.Outages), len(windows))
		return
	}
	// until is when the outage after windows[i] starts, or the run ends:
	// a fault in place later belongs to no window.
	until := func(i int) float64 {
		if i+1 < len(windows) {
			return windows[i+1].Start.Seconds()
		}
		return v.r.Spec.Duration.Seconds()
	}
	// undoneBy is when c's outage i must have been undone: before the next
	// was put in place, or the run ended.
	undoneBy := func(i int) float64 {
		if i+1 < len(c.Outages) {
			return c.Outages[i+1].Start
		}
		return v.r.DurationSeconds
	}
	all, slowest := len(windows) > 0, 0.0
	for i, o := range c.Outages {
		at := fmt.Sprintf("%s.outages[%d]", path, i)
		w := windows[i]
		switch {
		case !o.InPlace && (o.Start != w.Start.Seconds() || o.End != w.End().Seconds()):
			v.fail(at, "from %v s to %v s, but the spec's outage is from %v s to %v s", o.Start, o.End, w.Start.Seconds(), w.End().Seconds())
		case o.InPlace && (o.Start < w.Start.Seconds() || o.Start >= until(i) || o.End < o.Start || o.End > undoneBy(i)):
			v.fail(at, "in place from %v s to %v s, but the spec's outage starts at %v s, the next at %v s, and it must be undone by %v s",
				o.Start, o.End, w.Start.Seconds(), until(i), undoneBy(i))
		case o.Detected != (o.DetectionSeconds != nil):
			v.fail(at+".detection_seconds", "%s, but detected is %v", fmtDetection(o.DetectionSeconds), o.Detected)
		case o.Detected && (*o.DetectionSeconds < 0 || *o.DetectionSeconds > o.End-o.Start):
			v.fail(at+".detection_seconds", "%v s, outside the outage's %v s", *o.DetectionSeconds, o.End-o.Start)
		case o.Detected && o.TooShort:
			v.fail(at+".too_short", "true, but the outage was detected")
		}
		if v.err != nil {
			return
		}
		all = all && o.Detected
		if o.Detected {
			slowest = max(slowest, *o.DetectionSeconds)
		}
	}
	switch {
	case c.OutageDetected != all:
		v.fail(path+".outage_detected", "%v, but the outages say %v", c.OutageDetected, all)
	case all != (c.DetectionSeconds != nil):
		v.fail(path+".detection_seconds", "%s, but outage_detected is %v", fmtDetection(c.DetectionSeconds), all)
	case all && *c.DetectionSeconds != slowest:
		v.fail(path+".detection_seconds", "%v s, but the slowest detection of the outages is %v s", *c.DetectionSeconds, slowest)
	}
}

func fmtDetection(d *float64) string {
	if d == nil {
		return "null"
	}
	return fmt.Sprint(*d)
}

// timeline checks that every event of tl is no further from the run's
// start than the longest run, and every latency in its range.
func (v *reportValidator) timeline(path string, tl Timeline) {
	week := MaxDuration.Seconds()
	at := func(field string, i int, o Offset) {
		v.within(fmt.Sprintf("%s.%s[%d]", path, field, i), float64(o), -week, week, " s")
	}
	for i, p := range tl.Probes {
		at("probes", i, p.At)
		v.within(fmt.Sprintf("%s.probes[%d].latency_ms", path, i), p.Latency, 0, maxLatencyMS, " ms")
	}
	for i, c := range tl.Checks {
		at("checks", i, c.At)
		v.within(fmt.Sprintf("%s.checks[%d].latency_ms", path, i), c.Latency, 0, maxLatencyMS, " ms")
	}
	for i, o := range tl.Restarts {
		at("restarts", i, o)
	}
	for i, o := range tl.Heals {
		at("heals", i, o)
	}
	for i, s := range tl.States {
		at("states", i, s.At)
	}
	for i, n := range tl.Notes {
		at("notes", i, n.At)
	}
	for i, g := range tl.ProofGaps {
		at("proof_gaps", i, g[0])
		at("proof_gaps", i, g[1])
	}
}

// sameOutages reports whether reports are of windows, at their times.
func sameOutages(reports []OutageReport, windows []Window) bool {
	return slices.EqualFunc(reports, windows, func(o OutageReport, w Window) bool {
		return o.Start == w.Start.Seconds() && o.End == w.End().Seconds()
	})
}
