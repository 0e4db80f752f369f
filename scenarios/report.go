package scenarios

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen"

	"github.com/tunnelprobe/tunnelprobe/internal/percentile"
	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
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
	// StalledSeconds is the longest the process could not run during the
	// run (its timers fired that late): from stallWorthSaying on, its
	// timings may be the machine's, not the tunnel's.
	StalledSeconds float64 `json:"stalled_seconds,omitempty"`
	Spec           Spec    `json:"spec"`
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
	// heals while the link worked; WorkingSeconds is how long it did: from
	// the start to the first outage, blips and BlipGrace after them left
	// out.
	FalseRestarts  int     `json:"false_restarts"`
	FalseHeals     int     `json:"false_heals"`
	WorkingSeconds float64 `json:"working_seconds"`
	// BlipActions are the restarts and heals during a blip, a short outage
	// the tunnel survives by itself, or BlipGrace after it.
	BlipActions int `json:"blip_actions"`
	// LaterActions are the restarts and heals after the first outage
	// while the link worked again: from BlipGrace after an outage (blips
	// aside) ended to the next one or the run's end, blips left out. The
	// false-action figures cover only the loaded phase before the first
	// outage; these are counted apart, and are not called false: a tunnel
	// may not have come back from the outage (the timeline tells). What
	// happens within BlipGrace of an outage's end is in the timeline only.
	LaterActions int `json:"later_actions,omitempty"`
	// OutageDetected says whether every outage (blips aside) was met by a
	// restart or a heal before it ended; DetectionSeconds is the slowest
	// detection, from an outage's start to the first restart or heal (null
	// if one was missed).
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
	// runs both ways, against twice the rate. Null when they were not
	// measured (a link whose counters could not be read, an unlimited
	// link): never a 0 that was not measured.
	Utilisation     *float64 `json:"utilisation"`
	LinkUtilisation *float64 `json:"link_utilisation"`
	// BrokenConnections counts load connections that broke while the link
	// worked: each restart or heal breaks every flow through the tunnel.
	BrokenConnections int64  `json:"broken_connections"`
	ConnsAchieved     int64  `json:"conns_achieved"`
	Restarts          int    `json:"restarts"`
	Heals             int    `json:"heals"`
	LoadError         string `json:"load_error,omitempty"`
	// Failed, when set, says why the configuration was not measured: its
	// prober never probed, or the spec asked for load and none of it ever
	// connected (its lab never carried it). Its figures are then no
	// measurement: the report says it failed rather than what it missed,
	// and a matrix leaves it out of the rates.
	Failed   string   `json:"failed,omitempty"`
	Timeline Timeline `json:"timeline"`
	// Margin says how close the prober came to a false restart while the
	// link worked.
	Margin Margin `json:"margin"`
	// Breaches are the bounds of the configuration's expect that this
	// run broke; any makes the run a failed one.
	Breaches []Breach `json:"breaches,omitempty"`
}

// OutageReport is one outage's detection.
type OutageReport struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	// InPlace is set where Start and End are when the fault was in place
	// (a container run: from Docker's call that applied it returning to
	// the one that undid it), at or after the spec's schedule; unset, they
	// are the spec's.
	InPlace   bool   `json:"in_place,omitempty"`
	Direction string `json:"direction"` // both, up or down
	// MTU is an MTU black hole's (Window.MTU); 0 for an outage that drops
	// everything.
	MTU              int      `json:"mtu,omitempty"`
	Detected         bool     `json:"detected"`
	DetectionSeconds *float64 `json:"detection_seconds"`
	// TooShort is set when the outage ended before the configuration's
	// schedule (ScheduleSeconds) could have acted on it, or the run was
	// stopped during it before the configuration acted: not judged.
	TooShort bool `json:"too_short,omitempty"`
	// Utilisation is the goodput the sink received from the outage's
	// start to its end over the link's rate, as ConfigReport's: near 0
	// for an outage that starved the load, an MTU black hole's included.
	// Null where it was not measured (a run cut short, a container
	// scenario, an unlimited link).
	Utilisation *float64 `json:"utilisation,omitempty"`
}

// LatencyMS holds latency percentiles in milliseconds.
type LatencyMS struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

// measure computes a configuration's figures from its timeline and load.
func measure(spec Spec, cfg ConfigSpec, tl Timeline, load loadgen.Result, start time.Time, w window) ConfigReport {
	working := spec.workingTime()
	rep := ConfigReport{
		Mode:            cfg.Health.Mode.String(),
		Prober:          cfg.Prober.describe(),
		ScheduleSeconds: cfg.Health.scheduleNeeds().Seconds(),
		Restarts:        len(tl.Restarts),
		Heals:           len(tl.Heals),
		Timeline:        tl,
		ConnsAchieved:   load.ConnsAchieved,
		WorkingSeconds:  working.seconds(),
	}
	rep.Margin = margin(cfg, tl, working)
	rep.FalseRestarts = countIf(tl.Restarts, working.holds)
	rep.FalseHeals = countIf(tl.Heals, working.holds)
	rep.BlipActions = countIf(slices.Concat(tl.Restarts, tl.Heals), working.inBlip)
	rep.LaterActions = countIf(slices.Concat(tl.Restarts, tl.Heals), spec.laterWorking(working))
	for _, s := range tl.States {
		if s.To == "unhealthy" && working.holds(s.At) {
			rep.Flaps++
		}
	}
	passed := 0
	for _, p := range tl.Probes {
		if working.holds(p.At) {
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
		if working.holds(c.At) {
			lat = append(lat, c.Latency)
		}
	}
	rep.CheckLatencyMS = LatencyMS{P50: percentile.NearestRank(lat, 50), P99: percentile.NearestRank(lat, 99)}
	rep.detect(spec, tl)
	rep.outageUtilisation(spec, w.delivered)
	for _, s := range load.Series {
		if working.holds(Offset(s.T - start.Unix())) {
			rep.BrokenConnections += s.Disruptions
		}
	}
	if capacity := spec.capacity(w.to - w.from); w.complete && capacity > 0 {
		sink, link := float64(w.sinkBytes)/capacity, float64(w.linkBytes)/capacity
		rep.Utilisation, rep.LinkUtilisation = &sink, &link
	}
	return rep
}

// capacity is how many bytes the load could move in d at the link's
// initial rate (both directions when it runs both ways); 0 on an
// unlimited link.
func (s Spec) capacity(d time.Duration) float64 {
	set, _ := s.Link.settings()
	if d <= 0 || set.Rate <= 0 {
		return 0
	}
	c := float64(set.Rate) / 8 * d.Seconds()
	if s.Load.Direction == loadgen.Both {
		c *= 2
	}
	return c
}

// outageUtilisation fills in each outage's Utilisation from the sink's
// bytes as the link's steps were applied (delivered), where both its
// start and its end were.
func (rep *ConfigReport) outageUtilisation(spec Spec, delivered []sinkMark) {
	at := func(d time.Duration) (int64, bool) {
		var bytes int64
		found := false
		for _, m := range delivered { // the last step at d was applied last
			if m.at == d {
				bytes, found = m.bytes, true
			}
		}
		return bytes, found
	}
	i := 0
	for _, w := range spec.Link.Outages {
		if w.Blip {
			continue
		}
		from, ok1 := at(w.Start.Duration)
		to, ok2 := at(w.End())
		if capacity := spec.capacity(w.Duration.Duration); ok1 && ok2 && capacity > 0 {
			u := float64(to-from) / capacity
			rep.Outages[i].Utilisation = &u
		}
		i++
	}
}

// loadSettle is how long after the ramp a load that works has a
// connection open at the end of a second, which is when loadgen counts
// them.
const loadSettle = 2 * time.Second

// failure returns why configuration cfg was not measured, or "" if it was:
// no probe in its timeline tl, or none of the load's connections ever open.
// A run cut short after elapsed (interrupted) is only judged on what was
// due by then: a first probe (firstProbeDue) and the ramp's end. A stall
// of the process worth saying is named as a likely cause.
func failure(spec Spec, cfg ConfigSpec, tl Timeline, load loadgen.Result, loadErr error, elapsed time.Duration, interrupted bool, stall time.Duration) string {
	var why []string
	if len(tl.Probes) == 0 && (!interrupted || elapsed >= cfg.Prober.firstProbeDue()) {
		why = append(why, fmt.Sprintf("no probe ran in %.0fs", elapsed.Seconds()))
	}
	if spec.Load.Conns > 0 && load.ConnsAchieved == 0 && (!interrupted || elapsed >= spec.Load.Ramp.Duration+loadSettle) {
		s := fmt.Sprintf("none of its %d load connections opened", spec.Load.Conns)
		if loadErr != nil {
			s += " (" + loadErr.Error() + ")"
		}
		why = append(why, s)
	}
	if len(why) > 0 && stall >= stallWorthSaying {
		why = append(why, fmt.Sprintf("the process could not run for up to %.1fs (its timers fired that late): a machine too busy to measure on", stall.Seconds()))
	}
	return strings.Join(why, "; ")
}

// firstProbeDue is when a prober's first probe has ended at the latest
// after its container started: the kubelet probes at once, then every
// period, skipping probes until the initial delay (in whole seconds) has
// passed; Docker waits an interval (the start interval while the container
// starts) before its first check.
func (p ProberSpec) firstProbeDue() time.Duration {
	if p.Kind == "docker" {
		return max(cmp.Or(p.Period.Duration, prober.DefaultDockerInterval), prober.DefaultDockerStartInterval) + cmp.Or(p.Timeout.Duration, prober.DefaultDockerTimeout)
	}
	return p.InitialDelay.Duration + time.Second + cmp.Or(p.Period.Duration, prober.DefaultKubeletPeriod) + cmp.Or(p.Timeout.Duration, prober.DefaultKubeletTimeout)
}

// ran is the spec as the run ran it: cut at its end when it was
// interrupted (Spec.cutAt). The report's figures are measured on it.
func (r *Report) ran() Spec {
	if !r.Interrupted {
		return r.Spec
	}
	return r.Spec.cutAt(time.Duration(math.Round(r.DurationSeconds * float64(time.Second))))
}

// A ConfigFailure is a configuration that was not measured, and why.
type ConfigFailure struct{ Config, Why string }

func (f ConfigFailure) String() string { return f.Config + ": " + f.Why }

// A ConfigBreach is a bound a configuration broke.
type ConfigBreach struct {
	Config string
	Breach
}

func (b ConfigBreach) String() string { return b.Config + ": " + b.Breach.String() }

// Breaches lists the bounds of the configurations' expect that the run
// broke, in the spec's order.
func (r *Report) Breaches() []ConfigBreach {
	var out []ConfigBreach
	for _, name := range r.Order {
		for _, b := range r.Configs[name].Breaches {
			out = append(out, ConfigBreach{Config: name, Breach: b})
		}
	}
	return out
}

// Failures lists the configurations that were not measured, in the spec's
// order.
func (r *Report) Failures() []ConfigFailure {
	var out []ConfigFailure
	for _, name := range r.Order {
		if why := r.Configs[name].Failed; why != "" {
			out = append(out, ConfigFailure{Config: name, Why: why})
		}
	}
	return out
}

// LaterActions counts the restarts and heals after an outage, once the
// link worked again (ConfigReport.LaterActions), over every configuration
// that was measured.
func (r *Report) LaterActions() int {
	n := 0
	for _, c := range r.Configs {
		if c.Failed == "" {
			n += c.LaterActions
		}
	}
	return n
}

// Crashes counts the VPN client's exits of its own (an OpenVPN client's
// process dying) over every configuration.
func (r *Report) Crashes() int {
	n := 0
	for _, c := range r.Configs {
		n += len(c.Timeline.Crashes)
	}
	return n
}

// detect fills in how rep's configuration met each outage that is no blip:
// the first restart or heal inside it.
func (rep *ConfigReport) detect(spec Spec, tl Timeline) {
	actions := slices.Concat(tl.Restarts, tl.Heals)
	slices.Sort(actions)
	var slowest float64
	for _, w := range spec.Link.Outages {
		if w.Blip {
			continue
		}
		o := OutageReport{Start: w.Start.Seconds(), End: w.End().Seconds(), Direction: w.Direction.String(), MTU: w.MTU}
		for _, a := range actions {
			if float64(a) >= o.Start && float64(a) < o.End {
				d := float64(a) - o.Start
				o.Detected, o.DetectionSeconds = true, &d
				slowest = max(slowest, d)
				break
			}
		}
		o.TooShort = !o.Detected && rep.ScheduleSeconds > 0 && o.End-o.Start < rep.ScheduleSeconds
		rep.Outages = append(rep.Outages, o)
	}
	rep.OutageDetected = len(rep.Outages) > 0 && !slices.ContainsFunc(rep.Outages, func(o OutageReport) bool { return !o.Detected })
	if rep.OutageDetected {
		rep.DetectionSeconds = &slowest
	}
}

// leaveCutOutagesUnjudged marks the outages that a run stopped at end
// (seconds) cut short and that rep's configuration had not acted on as too
// short: the run stopped before it could say whether it would have. A
// configuration with a schedule (ScheduleSeconds) is judged on it: a cut
// outage it had all its schedule's time for and did not act on is missed.
func (rep *ConfigReport) leaveCutOutagesUnjudged(end float64) {
	if rep.ScheduleSeconds > 0 {
		return // detect judged the cut outage against the schedule already
	}
	for i, o := range rep.Outages {
		if !o.Detected && o.End >= end {
			rep.Outages[i].TooShort = true
		}
	}
}

// workingTime is when the link of a spec works: from the start to the
// first outage, blips (and BlipGrace after each) left out.
type workingTime struct {
	end   float64
	blips [][2]float64 // [start, end+grace)
}

func (s Spec) workingTime() workingTime {
	w := workingTime{end: s.workingEnd().Seconds()}
	for _, o := range s.Link.Outages {
		if o.Blip {
			w.blips = append(w.blips, [2]float64{o.Start.Seconds(), (o.End() + BlipGrace).Seconds()})
		}
	}
	return w
}

// laterWorking returns whether the link worked at an offset after the
// first outage: BlipGrace or more after an outage (blips aside) ended,
// before the next one began, outside working's blips.
func (s Spec) laterWorking(working workingTime) func(Offset) bool {
	outages := s.outagesToDetect()
	return func(o Offset) bool {
		at := time.Duration(float64(o) * float64(time.Second))
		if at < s.workingEnd() || at >= s.Duration.Duration || working.inBlip(o) {
			return false
		}
		for _, w := range outages {
			if at >= w.Start.Duration && at < w.End()+BlipGrace {
				return false
			}
		}
		return true
	}
}

// inBlip reports whether o falls in a blip or its grace.
func (w workingTime) inBlip(o Offset) bool {
	for _, b := range w.blips {
		if float64(o) >= b[0] && float64(o) < b[1] {
			return true
		}
	}
	return false
}

// holds reports whether the link worked at o.
func (w workingTime) holds(o Offset) bool { return float64(o) < w.end && !w.inBlip(o) }

// longestPiece returns the longest stretch of [from, to) in which the link
// worked: cut at the first outage and around each blip (and its grace).
func (w workingTime) longestPiece(from, to float64) float64 {
	to = min(to, w.end)
	blips := slices.Clone(w.blips)
	slices.SortFunc(blips, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
	longest := 0.0
	for _, b := range blips {
		if b[0] > from {
			longest = max(longest, min(b[0], to)-from)
		}
		from = max(from, b[1])
	}
	return max(longest, to-from, 0)
}

// seconds is how long the link worked.
func (w workingTime) seconds() float64 {
	d := w.end
	for _, b := range w.blips {
		d -= max(0, min(b[1], w.end)-min(b[0], w.end))
	}
	return d
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
