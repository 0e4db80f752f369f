package matrix

import (
	"fmt"
	"slices"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/peakrss"
	"github.com/tunnelprobe/tunnelprobe/internal/percentile"
	"github.com/tunnelprobe/tunnelprobe/scenarios"
)

// Report is what a matrix (or a repeated suite) measured, as written
// to matrix.json.
type Report struct {
	Started     time.Time `json:"started"`
	WallSeconds float64   `json:"wall_seconds"`
	// Interrupted is set when the matrix was stopped early: the rates
	// cover the runs that completed.
	Interrupted bool `json:"interrupted"`
	// PeakRSSBytes is the process's peak resident memory.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// Conditions and Configs name the conditions and configurations in
	// order; Passes is how many passes over the conditions were asked for.
	Conditions []string `json:"conditions"`
	Configs    []string `json:"configs"`
	Passes     int      `json:"passes"`
	// Shard is "i/n" for one machine's share of the runs (Options.Shard);
	// empty for a whole matrix, merged shards included.
	Shard string `json:"shard,omitempty"`
	// Runs are the runs, in the order they ran.
	Runs []RunReport `json:"runs"`
	// Overall holds each configuration's rates over every completed run;
	// ByCondition the same per condition, then per configuration.
	Overall     map[string]Rates            `json:"overall"`
	ByCondition map[string]map[string]Rates `json:"by_condition"`
}

// Rates are one configuration's figures over a set of runs.
type Rates struct {
	// Runs counts the runs measured; FailedRuns those in which the
	// configuration failed (ConfigReport.Failed), left out of every
	// figure here.
	Runs       int `json:"runs"`
	FailedRuns int `json:"failed_runs"`
	// SaturatedRuns counts the runs whose machine was CPU-saturated.
	SaturatedRuns int `json:"saturated_runs"`
	// WorkingHours is the time the link worked, summed over the runs: what
	// the rates are per.
	WorkingHours  float64 `json:"working_hours"`
	FalseRestarts int     `json:"false_restarts"`
	FalseHeals    int     `json:"false_heals"`
	// FalseRestartRate and FalseHealRate are per hour of working link,
	// with exact Poisson 95% intervals.
	FalseRestartRate Rate `json:"false_restart_rate"`
	FalseHealRate    Rate `json:"false_heal_rate"`
	// Blips and BlipActions: the short outages the tunnel survives, and
	// the restarts and heals during them (or BlipGrace after).
	Blips       int `json:"blips"`
	BlipActions int `json:"blip_actions"`
	// LaterActions are the restarts and heals after an outage with the
	// link working again (ConfigReport.LaterActions), summed: outside the
	// rates, which count the loaded phase before the first outage.
	LaterActions int `json:"later_actions,omitempty"`
	// Outages and Detected count the outages (blips aside) and those met
	// by a restart or heal before they ended, DetectedShare with its
	// Clopper-Pearson 95% interval; TooShort those too short for the
	// configuration's schedule.
	Outages       int      `json:"outages"`
	Detected      int      `json:"detected"`
	TooShort      int      `json:"too_short"`
	DetectedShare Interval `json:"detected_interval"`
	// DetectionMedianSeconds and DetectionMaxSeconds over the detected
	// outages; null when none was.
	DetectionMedianSeconds *float64 `json:"detection_median_seconds"`
	DetectionMaxSeconds    *float64 `json:"detection_max_seconds"`
	// BrokenConnections were cut by restarts and heals while the link
	// worked; BrokenPerHour per hour of it.
	BrokenConnections int64   `json:"broken_connections"`
	BrokenPerHour     float64 `json:"broken_per_hour"`
	// Margin is the closest the configuration came to a false restart in
	// any of the runs: the most failed probes in a row, the slowest pass.
	Margin scenarios.Margin `json:"margin"`
}

func newReport(conditions []scenarios.Spec, passes int) *Report {
	rep := &Report{Started: time.Now(), Passes: passes}
	for _, c := range conditions {
		rep.Conditions = append(rep.Conditions, c.Name)
		for _, cfg := range c.Configs {
			if !slices.Contains(rep.Configs, cfg.Name) {
				rep.Configs = append(rep.Configs, cfg.Name)
			}
		}
	}
	return rep
}

func (rep *Report) add(run RunReport) { rep.Runs = append(rep.Runs, run) }

// CIRuns are the report's runs as CI reports name them: "run 3 (slow,
// seed 1)".
func (rep *Report) CIRuns() []scenarios.CIRun {
	runs := make([]scenarios.CIRun, len(rep.Runs))
	for i, r := range rep.Runs {
		runs[i] = scenarios.CIRun{Name: fmt.Sprintf("run %d (%s, seed %d)", i+1, r.Condition, r.Seed), Report: r.Report}
	}
	return runs
}

// finish records the time and memory the matrix took, and its rates.
func (rep *Report) finish() {
	rep.WallSeconds = time.Since(rep.Started).Seconds()
	rep.PeakRSSBytes = peakrss.Bytes()
	rep.rate()
}

// rate computes the rates over the completed runs, each configuration's
// over the runs in which it was measured.
func (rep *Report) rate() {
	rep.Overall = map[string]Rates{}
	rep.ByCondition = map[string]map[string]Rates{}
	for _, cond := range rep.Conditions {
		rep.ByCondition[cond] = map[string]Rates{}
	}
	for _, cfg := range rep.Configs {
		var all []RunReport
		for _, cond := range rep.Conditions {
			var runs []RunReport
			for _, r := range rep.Runs {
				if r.Condition == cond && !r.Report.Interrupted {
					runs = append(runs, r)
				}
			}
			all = append(all, runs...)
			rep.ByCondition[cond][cfg] = rates(cfg, runs)
		}
		rep.Overall[cfg] = rates(cfg, all)
	}
}

// rates sums configuration cfg's figures over runs.
func rates(cfg string, runs []RunReport) Rates {
	var r Rates
	var detections []float64
	for _, run := range runs {
		c, ok := run.Report.Configs[cfg]
		if !ok {
			continue
		}
		if c.Failed != "" {
			r.FailedRuns++
			continue
		}
		r.Runs++
		if run.Saturated {
			r.SaturatedRuns++
		}
		r.WorkingHours += c.WorkingSeconds / 3600
		r.Margin = scenarios.Margin{
			MostFailedInARow: max(r.Margin.MostFailedInARow, c.Margin.MostFailedInARow), FailureThreshold: c.Margin.FailureThreshold,
			SlowestPassMS: max(r.Margin.SlowestPassMS, c.Margin.SlowestPassMS), TimeoutMS: c.Margin.TimeoutMS,
			LongestWithoutProofMS: max(r.Margin.LongestWithoutProofMS, c.Margin.LongestWithoutProofMS), ToleranceMS: c.Margin.ToleranceMS,
		}
		r.FalseRestarts += c.FalseRestarts
		r.FalseHeals += c.FalseHeals
		r.BlipActions += c.BlipActions
		r.LaterActions += c.LaterActions
		r.BrokenConnections += c.BrokenConnections
		for _, w := range run.Report.Spec.Link.Outages {
			if w.Blip {
				r.Blips++
			}
		}
		for _, o := range c.Outages {
			r.Outages++
			switch {
			case o.Detected:
				r.Detected++
				detections = append(detections, *o.DetectionSeconds)
			case o.TooShort:
				r.TooShort++
			}
		}
	}
	if r.WorkingHours > 0 {
		r.FalseRestartRate = PoissonRate(r.FalseRestarts, r.WorkingHours)
		r.FalseHealRate = PoissonRate(r.FalseHeals, r.WorkingHours)
		r.BrokenPerHour = float64(r.BrokenConnections) / r.WorkingHours
	}
	if r.Outages > 0 {
		r.DetectedShare = ClopperPearson(r.Detected, r.Outages)
	}
	if len(detections) > 0 {
		median, worst := percentile.NearestRank(detections, 50), slices.Max(detections)
		r.DetectionMedianSeconds, r.DetectionMaxSeconds = &median, &worst
	}
	return r
}
