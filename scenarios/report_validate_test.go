package scenarios

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

// runReport is the report Run writes of spec, every configuration
// measured on one timeline: restarts and heals in and out of the outages,
// states before the start.
func runReport(t *testing.T, spec Spec) *Report {
	t.Helper()
	start := time.Unix(1_000_000, 0)
	tl := Timeline{
		Probes:   []ProbeMark{{At: 20, Latency: 3, Passed: true}, {At: 30, Latency: 10000}},
		Checks:   []CheckMark{{At: 11, Latency: 50, Passed: true}},
		Restarts: []Offset{35, Offset(spec.Duration.Seconds()) - 1},
		Heals:    []Offset{30, 58, 125},
		States:   []StateMark{{At: -2, To: "starting"}, {At: 30, To: "unhealthy"}},
	}
	load := loadgen.Result{ConnsAchieved: int64(spec.Load.Conns)}
	for s := range int64(spec.Duration.Seconds()) {
		load.Series = append(load.Series, loadgen.Second{T: start.Unix() + s, Disruptions: int64(spec.Load.Conns) * (s % 7 / 6)})
	}
	rep := &Report{Name: spec.Name, Seed: spec.Seed, Started: start, DurationSeconds: spec.Duration.Seconds() + 0.4, Spec: spec, Configs: map[string]ConfigReport{}}
	for _, c := range spec.Configs {
		rep.Configs[c.Name] = measure(spec, c, tl, load, start, window{to: 40 * time.Second, sinkBytes: 1e6, complete: true})
		rep.Order = append(rep.Order, c.Name)
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

// What Run writes, read back, passes: the built-in suites and conditions.
func TestValidateAcceptsWhatRunWrites(t *testing.T) {
	specs := append([]Spec{QuickSuite()}, MatrixConditions()...)
	for _, newSpec := range Suites {
		specs = append(specs, newSpec())
	}
	for _, spec := range specs {
		if err := runReport(t, spec).Validate(); err != nil {
			t.Errorf("%s: %v", spec.Name, err)
		}
	}
}

// An interrupted run's report passes with its outages cut where it stopped,
// as Run writes them now, or uncut, as it wrote them before (a kept shard
// of an older version still merges); not with some of each.
func TestValidateAcceptsInterruptedRunsOldAndNew(t *testing.T) {
	spec := QuickSuite() // an outage from 50 s to 90 s
	for _, tc := range []struct {
		name    string
		stopped float64
		outages []OutageReport
		ok      bool
	}{
		{"cut before the outage", 20, nil, true},
		{"uncut, before the outage", 20, []OutageReport{{Start: 50, End: 90, Direction: "both"}}, true},
		{"cut in the outage", 70, []OutageReport{{Start: 50, End: 70, Direction: "both", TooShort: true}}, true},
		{"uncut, in the outage", 70, []OutageReport{{Start: 50, End: 90, Direction: "both"}}, true},
		{"cut elsewhere", 70, []OutageReport{{Start: 50, End: 60, Direction: "both"}}, false},
	} {
		rep := runReport(t, spec.cutAt(time.Duration(tc.stopped*float64(time.Second))))
		rep.Spec, rep.Interrupted, rep.DurationSeconds = spec, true, tc.stopped
		for name, c := range rep.Configs {
			c.Outages, c.OutageDetected, c.DetectionSeconds = tc.outages, false, nil
			rep.Configs[name] = c
		}
		if err := rep.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want valid %v", tc.name, err, tc.ok)
		}
	}
}

// A container run's outages are when its faults were in place: at or after
// the spec's, before the next outage's start; not before the schedule.
func TestValidateInPlaceOutages(t *testing.T) {
	spec := QuickSuite() // an outage from 50 s to 90 s, the run's end
	for _, tc := range []struct {
		name       string
		start, end float64
		ok         bool
	}{
		{"as scheduled", 50, 90, true},
		{"put in place late, undone late", 52.5, 90.2, true},
		{"before its schedule", 49, 90, false},
		{"undone before put in place", 60, 55, false},
		{"after the run", spec.Duration.Seconds() + 1, spec.Duration.Seconds() + 2, false},
		{"undone after the run ended", 52.5, 1e12, false},
	} {
		rep := runReport(t, spec)
		for name, c := range rep.Configs {
			o := &c.Outages[0]
			o.Start, o.End, o.InPlace = tc.start, tc.end, true
			c.Outages[0].DetectionSeconds, c.OutageDetected, c.DetectionSeconds = nil, false, nil
			o.Detected = false
			rep.Configs[name] = c
		}
		if err := rep.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want valid %v", tc.name, err, tc.ok)
		}
	}
}

// A field that Run cannot have written is refused, named by its path.
func TestValidateNamesTheField(t *testing.T) {
	cfg := func(change func(c *ConfigReport)) func(r *Report) {
		return func(r *Report) {
			name := r.Order[0]
			c := r.Configs[name]
			change(&c)
			r.Configs[name] = c
		}
	}
	for _, tc := range []struct {
		change func(r *Report)
		want   string
	}{
		{func(r *Report) { *r = Report{} }, "spec: "},
		{func(r *Report) { r.Order = r.Order[1:] }, "order: 6 configurations, but the spec has 7"},
		{func(r *Report) { r.Order[0], r.Order[1] = r.Order[1], r.Order[0] }, `order[0]: "probe-only", but the spec's configuration 1 is "reference"`},
		{func(r *Report) { r.Seed++ }, "seed: 2, but the spec's is 1"},
		{cfg(func(c *ConfigReport) { c.Outages = nil }), "configs.reference.outages: 0 outage reports, but the run had 1 outages"},
		{cfg(func(c *ConfigReport) { c.Outages[0].DetectionSeconds = nil }), "configs.reference.outages[0].detection_seconds: null, but detected is true"},
		{cfg(func(c *ConfigReport) { d := 1e6; c.Outages[0].DetectionSeconds = &d }), "configs.reference.outages[0].detection_seconds: 1e+06 s, outside the outage's 40 s"},
		{cfg(func(c *ConfigReport) { c.DetectionSeconds = nil }), "configs.reference.detection_seconds: null, but outage_detected is true"},
		{cfg(func(c *ConfigReport) { c.FalseHeals = -1 }), "configs.reference.false_heals: -1, outside 0 to the 3 heals"},
		{cfg(func(c *ConfigReport) { c.WorkingSeconds = 1e9 }), "configs.reference.working_seconds: 1e+09s is outside 0 to 90s"},
		{cfg(func(c *ConfigReport) { c.BrokenConnections = 1 << 62 }), "configs.reference.broken_connections: 4611686018427387904, but 1000 connections break at most 1000 times a second"},
		{cfg(func(c *ConfigReport) { c.Timeline.Checks[0].Latency = 1e300 }), "configs.reference.timeline.checks[0].latency_ms: 1e+300 ms is outside 0 to"},
		{cfg(func(c *ConfigReport) { c.Timeline.Heals[2] = 1e12 }), "configs.reference.timeline.heals[2]: 1e+12 s is outside"},
		{cfg(func(c *ConfigReport) { c.Margin.FailureThreshold = 1 << 62 }), "configs.reference.margin: threshold 4611686018427387904, timeout 1000 ms, tolerance 0 ms, but the configuration's are 3"},
		{cfg(func(c *ConfigReport) { u := 1e308; c.Utilisation = &u }), "configs.reference.utilisation: 1e+308 is outside 0 to 1000"},
		{func(r *Report) { r.DurationSeconds = 1e308 }, "duration_seconds: 1e+308 s, outside 0 to the run's 90 s and an hour"},
		{func(r *Report) { r.PeakRSSBytes = -1 }, "peak_rss_bytes: -1, outside 0 to"},
		{func(r *Report) { r.StalledSeconds = r.DurationSeconds + 1 }, "stalled_seconds: "},
	} {
		r := runReport(t, QuickSuite())
		tc.change(r)
		if err := r.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate: %v\nwant an error with %q", err, tc.want)
		}
	}
}
