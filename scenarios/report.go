package scenarios

import (
	"math"
	"slices"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

// Report is what a scenario run measured, as written to report.json.
type Report struct {
	Name            string    `json:"name"`
	Seed            uint64    `json:"seed"`
	Started         time.Time `json:"started"`
	DurationSeconds float64   `json:"duration_seconds"`
	// Interrupted is set when the run was stopped before its end; the
	// figures cover what was measured until then.
	Interrupted bool `json:"interrupted"`
	// PeakRSSBytes is the process's peak resident memory.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	Spec         Spec  `json:"spec"`
	// Configs holds each configuration's figures under its name; Order
	// lists the names in the spec's order.
	Configs map[string]ConfigReport `json:"configs"`
	Order   []string                `json:"order"`
}

// ConfigReport is one configuration's figures. "While the link worked"
// means before the first outage.
type ConfigReport struct {
	Mode   string `json:"mode"`
	Prober string `json:"prober"`
	// FalseRestarts and FalseHeals are the prober's restarts and the loop's
	// heals while the link worked.
	FalseRestarts int `json:"false_restarts"`
	FalseHeals    int `json:"false_heals"`
	// OutageDetected says whether every outage was met by a restart or a
	// heal before it ended; DetectionSeconds is the slowest detection, from
	// an outage's start to the first restart or heal (null if one was
	// missed).
	OutageDetected   bool           `json:"outage_detected"`
	DetectionSeconds *float64       `json:"detection_seconds"`
	Outages          []OutageReport `json:"outages"`
	// ScheduleSeconds is, for a configuration whose own fixed schedule
	// must run its course before it acts (the upstream preset), the
	// longest that takes on a dead tunnel; 0 for the others.
	ScheduleSeconds float64 `json:"schedule_seconds,omitempty"`
	// Flaps counts the health state turning unhealthy while the link
	// worked.
	Flaps int `json:"flaps"`
	// ProbeSuccessRatio is the share of the prober's probes that passed
	// while the link worked.
	ProbeSuccessRatio float64 `json:"probe_success_ratio"`
	Probes            int     `json:"probes"`
	// CheckLatencyMS summarises the health server's checks while the link
	// worked.
	CheckLatencyMS LatencyMS `json:"check_latency_ms"`
	// Utilisation is the goodput the sink received over the link's rate,
	// from the end of the ramp until the first outage; LinkUtilisation is
	// what the link itself carried (WireGuard packets, retransmissions
	// included) over the same rate. Both directions count when the load
	// runs both ways, against twice the rate.
	Utilisation     float64 `json:"utilisation"`
	LinkUtilisation float64 `json:"link_utilisation"`
	// BrokenConnections counts load connections that broke while the link
	// worked: each restart or heal breaks every flow through the tunnel.
	BrokenConnections int64    `json:"broken_connections"`
	ConnsAchieved     int64    `json:"conns_achieved"`
	Restarts          int      `json:"restarts"`
	Heals             int      `json:"heals"`
	LoadError         string   `json:"load_error,omitempty"`
	Timeline          Timeline `json:"timeline"`
}

// OutageReport is one outage's detection.
type OutageReport struct {
	Start            float64  `json:"start"`
	End              float64  `json:"end"`
	Detected         bool     `json:"detected"`
	DetectionSeconds *float64 `json:"detection_seconds"`
	// TooShort is set when the outage ended before the configuration's
	// schedule (ScheduleSeconds) could have acted on it.
	TooShort bool `json:"too_short,omitempty"`
}

// LatencyMS holds latency percentiles in milliseconds.
type LatencyMS struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

// measure computes a configuration's figures from its timeline and load.
func measure(spec Spec, cfg ConfigSpec, tl Timeline, load loadgen.Result, start time.Time, w window) ConfigReport {
	worked := spec.workingEnd().Seconds()
	before := func(o Offset) bool { return float64(o) < worked }
	rep := ConfigReport{
		Mode:            cfg.Health.Mode,
		Prober:          cfg.Prober.describe(),
		ScheduleSeconds: cfg.Health.scheduleNeeds().Seconds(),
		Restarts:        len(tl.Restarts),
		Heals:           len(tl.Heals),
		Timeline:        tl,
		ConnsAchieved:   load.ConnsAchieved,
	}
	rep.FalseRestarts = countIf(tl.Restarts, before)
	rep.FalseHeals = countIf(tl.Heals, before)
	for _, s := range tl.States {
		if s.To == "unhealthy" && before(s.At) {
			rep.Flaps++
		}
	}
	passed := 0
	for _, p := range tl.Probes {
		if before(p.At) {
			rep.Probes++
			if p.Passed {
				passed++
			}
		}
	}
	if rep.Probes > 0 {
		rep.ProbeSuccessRatio = float64(passed) / float64(rep.Probes)
	}
	var lat []float64
	for _, c := range tl.Checks {
		if before(c.At) {
			lat = append(lat, c.Latency)
		}
	}
	rep.CheckLatencyMS = LatencyMS{P50: percentile(lat, 50), P99: percentile(lat, 99)}

	actions := slices.Concat(tl.Restarts, tl.Heals)
	slices.Sort(actions)
	rep.OutageDetected = len(spec.Link.Outages) > 0
	var slowest float64
	for _, w := range spec.Link.Outages {
		o := OutageReport{Start: w.Start.Seconds(), End: w.End().Seconds()}
		for _, a := range actions {
			if float64(a) >= o.Start && float64(a) < o.End {
				d := float64(a) - o.Start
				o.Detected, o.DetectionSeconds = true, &d
				slowest = max(slowest, d)
				break
			}
		}
		o.TooShort = !o.Detected && rep.ScheduleSeconds > 0 && o.End-o.Start < rep.ScheduleSeconds
		rep.OutageDetected = rep.OutageDetected && o.Detected
		rep.Outages = append(rep.Outages, o)
	}
	if rep.OutageDetected {
		rep.DetectionSeconds = &slowest
	}

	for _, s := range load.Series {
		if float64(s.T-start.Unix()) < worked {
			rep.BrokenConnections += s.Disruptions
		}
	}
	set, _ := spec.Link.settings()
	if secs := (w.to - w.from).Seconds(); w.complete && secs > 0 && set.Rate > 0 {
		capacity := float64(set.Rate) / 8 * secs
		if spec.Load.Direction == "both" {
			capacity *= 2
		}
		rep.Utilisation = float64(w.sinkBytes) / capacity
		rep.LinkUtilisation = float64(w.linkBytes) / capacity
	}
	return rep
}

func countIf(xs []Offset, f func(Offset) bool) int {
	n := 0
	for _, x := range xs {
		if f(x) {
			n++
		}
	}
	return n
}

// percentile returns the p-th percentile of xs (nearest rank), 0 when empty.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}
