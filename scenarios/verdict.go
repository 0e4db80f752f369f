package scenarios

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// legend says what each column of the table counts, a line each.
var legend = []string{
	"false restarts, false heals: the prober's restarts and the health loop's heals while the link worked (blips aside)",
	"detected, detection: whether a restart or heal met every outage, and the slowest time from an outage's start to it",
	"flaps: the health state turning unhealthy while the link worked; probes passed: the prober's, while it worked",
	"check p50, p99: how long the health checks took; broken conns: load connections that false actions cut",
	"utilisation: what the load delivered over the link's rate, from the end of its ramp to the first outage",
}

// lowUtilisation is the share of the load's aim under which the link is
// said not to have been loaded as the suite intends.
const lowUtilisation = 0.5

// Verdict names the configuration this run favours and the figure that
// makes it best: of those that neither restarted nor healed the working
// tunnel and detected every outage, the fastest to detect (fewer blip
// actions, then fewer flaps, break ties). It says when none qualifies, and
// that one run on one seed is an example, not a rate.
func (r *Report) Verdict() string {
	if r.Interrupted {
		return "verdict: none, the run was interrupted; the figures cover the part that ran"
	}
	outages := r.hasOutage()
	best, calm := "", 0
	for _, name := range r.Order {
		c := r.Configs[name]
		if c.Failed != "" || c.FalseRestarts+c.FalseHeals > 0 || outages && !c.OutageDetected {
			continue
		}
		calm++
		if best == "" || better(c, r.Configs[best]) {
			best = name
		}
	}
	const example = "one run on one seed is an example: --matrix gives rates with intervals"
	switch {
	case best == "":
		return "verdict: no configuration both left the working tunnel alone and detected every outage (" + example + ")"
	case !outages:
		return fmt.Sprintf("verdict: %s, no restart or heal while the link worked, with %d blip action(s) and %d flap(s) (%s)",
			best, r.Configs[best].BlipActions, r.Configs[best].Flaps, example)
	}
	c := r.Configs[best]
	return fmt.Sprintf("verdict: %s, no restart or heal while the link worked and every outage detected within %.1fs, "+
		"the fastest of the %d that did both (%s)", best, *c.DetectionSeconds, calm, example)
}

// better reports whether a beats b as the verdict's choice.
func better(a, b ConfigReport) bool {
	if a.DetectionSeconds != nil && b.DetectionSeconds != nil && *a.DetectionSeconds != *b.DetectionSeconds {
		return *a.DetectionSeconds < *b.DetectionSeconds
	}
	if a.BlipActions != b.BlipActions {
		return a.BlipActions < b.BlipActions
	}
	return a.Flaps < b.Flaps
}

// Warnings says what makes the figures differ from what the suite intends:
// a process the machine held (Stalled), or a link loaded far below the
// load's aim (the machine too busy to load it, so the checks did not face
// a loaded tunnel).
func (r *Report) Warnings() []string {
	var warns []string
	if r.Stalled() {
		warns = append(warns, fmt.Sprintf("warning: the process could not run for up to %.1f s (its timers fired that late): "+
			"timings around then are the machine's, not the tunnel's", r.StalledSeconds))
	}
	if low := r.lowLoad(); len(low) > 0 {
		warns = append(warns, fmt.Sprintf("warning: the load reached only %s of the link's rate, against an aim of %.0f%%: "+
			"this machine was likely too busy to load the link, and these figures are not those of a loaded tunnel "+
			"(fewer configurations side by side, --spec, or a larger machine)", strings.Join(low, ", "), 100*r.loadAim()))
	}
	return warns
}

// loadAim is the share of the link the load aims at.
func (r *Report) loadAim() float64 {
	if r.Spec.Load.Share > 0 {
		return r.Spec.Load.Share
	}
	return 0.8 // a greedy load fills the link
}

// lowLoad lists the configurations whose load stayed far below its aim
// ("k8s 37%"), or whose utilisation was not measured ("k8s (not
// measured)"); none for an idle tunnel, an unlimited link or an
// interrupted run.
func (r *Report) lowLoad() []string {
	if r.Interrupted || r.Spec.Load.Conns == 0 || r.Spec.capacity(time.Second) == 0 {
		return nil
	}
	var low []string
	for _, name := range r.Order {
		switch c := r.Configs[name]; {
		case c.Failed != "":
		case c.Utilisation == nil:
			low = append(low, name+" (not measured)")
		case *c.Utilisation < lowUtilisation*r.loadAim():
			low = append(low, name+" "+fmtShare(c.Utilisation))
		}
	}
	return low
}

// expectations says whether the configurations kept the bounds of their
// expect: "" when none has any.
func (r *Report) expectations() string {
	bounded := 0
	for _, c := range r.Spec.Configs {
		if c.Expect.bounds() {
			bounded++
		}
	}
	switch breaches := r.Breaches(); {
	case bounded == 0:
		return ""
	case r.Interrupted:
		return "expectations: not judged, the run was interrupted"
	case len(breaches) == 0:
		return fmt.Sprintf("expectations: the %d configuration(s) with bounds kept them all", bounded)
	default:
		parts := make([]string, len(breaches))
		for i, b := range breaches {
			parts[i] = b.String()
		}
		return "EXPECTATIONS BROKEN: " + strings.Join(parts, "; ")
	}
}

// writeLegend writes the legend, the verdict and the warnings under the
// table.
func (r *Report) writeLegend(w io.Writer) {
	fmt.Fprintln(w)
	for _, l := range legend {
		fmt.Fprintln(w, "  "+l)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, r.Verdict())
	for _, warn := range r.Warnings() {
		fmt.Fprintln(w, warn)
	}
	if line := r.expectations(); line != "" {
		fmt.Fprintln(w, line)
	}
}
