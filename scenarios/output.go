package scenarios

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/internal/output"
)

// WriteTable writes the comparison as an aligned table, its legend, the
// verdict and any warning.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "configuration\tfalse restarts\tfalse heals\tdetected\tdetection\tflaps\tprobes passed\tcheck p50\tcheck p99\tbroken conns\tutilisation\t")
	for _, name := range r.Order {
		c := r.Configs[name]
		if c.Failed != "" { // nothing measured: no figure to show
			fmt.Fprintf(tw, "%s\t-\t-\tfailed\t-\t-\t-\t-\t-\t-\t-\t\n", name)
			continue
		}
		detected, detection := "no", "-"
		if len(c.Outages) == 0 {
			detected = "-" // none to detect
		}
		if c.tooShort() {
			detected = "too short"
		}
		if c.OutageDetected {
			detected = "yes"
			detection = fmt.Sprintf("%.1fs", *c.DetectionSeconds)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%d\t%s\t%s\t%s\t%d\t%s\t\n",
			name, c.FalseRestarts, c.FalseHeals, detected, detection, c.Flaps,
			fmtShare(c.probesPassed()), fmtMS(c.CheckLatencyMS.P50), fmtMS(c.CheckLatencyMS.P99),
			c.BrokenConnections, fmtShare(c.Utilisation))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	r.writeLegend(w)
	return nil
}

func fmtMS(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2fs", v/1000)
	}
	return fmt.Sprintf("%.0fms", v)
}

// fmtShare prints a measured share as a percentage, and one that was not
// measured as "n/m".
func fmtShare(v *float64) string {
	if v == nil {
		return "n/m"
	}
	return fmt.Sprintf("%.0f%%", 100**v)
}

// WriteJSON writes the report as indented JSON to w.
func (r *Report) WriteJSON(w io.Writer) error { return output.JSON(w, r) }

// WriteMarkdown writes report.md: the table, how each configuration was set
// up, and what the figures say.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Scenario %q\n\n", r.Name)
	s := r.Spec
	fmt.Fprintf(&b, "Seed %d, %s in all. Tunnel %s. Link %s, %v one way, queue %s, MTU %s; load %d connections (%s), ramp %v.",
		r.Seed, s.Duration, s.Tunnel, s.Link.Rate, s.Link.Delay, s.Link.Queue, harness.FormatMTU(s.Link.MTU), s.Load.Conns, loadKind(s.Load), s.Load.Ramp)
	for _, o := range s.Link.Outages {
		what := "Outage"
		if o.MTU > 0 {
			what = fmt.Sprintf("MTU black hole (%d bytes)", o.MTU)
		}
		fmt.Fprintf(&b, " %s from %v to %v.", what, o.Start, Duration{o.End()})
	}
	fmt.Fprintf(&b, " Peak memory %.1f GiB.", float64(r.PeakRSSBytes)/(1<<30))
	if r.Interrupted {
		fmt.Fprintf(&b, " **Interrupted** after %.0fs: the figures cover the part that ran, and the outages it reached.", r.DurationSeconds)
	}
	if failed := r.Failures(); len(failed) > 0 {
		fmt.Fprintf(&b, " **%d configuration(s) failed**, not measured (see below).", len(failed))
	}
	b.WriteString("\n\n```\n")
	if err := r.WriteTable(&b); err != nil {
		return err
	}
	b.WriteString("```\n\n")
	b.WriteString("| configuration | health server | prober |\n| --- | --- | --- |\n")
	for _, c := range s.Configs {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", c.Name, describeHealth(c.Health), describeProber(c.Prober))
	}
	WriteMarginTable(&b, "How close each configuration came to a false restart while the link worked", r.Order,
		func(name string) Margin { return r.Configs[name].Margin })
	b.WriteString("\n## What it means\n\n")
	for _, line := range r.findings() {
		fmt.Fprintf(&b, "- %s\n", line)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// findings states, from the figures alone, which configurations kept the
// loaded tunnel up and which caught the outage, and which failed and say
// nothing.
func (r *Report) findings() []string {
	var out []string
	var calm, caught []string
	ended := "it ended"
	if r.Interrupted {
		ended = "it ended or the run stopped"
	}
	for _, name := range r.Order {
		c := r.Configs[name]
		if c.Failed != "" {
			out = append(out, fmt.Sprintf("%s failed: %s. It was not measured, so nothing here says how it would have done.", name, c.Failed))
			continue
		}
		if c.FalseRestarts == 0 && c.FalseHeals == 0 {
			calm = append(calm, name)
		}
		switch {
		case len(c.Outages) == 0: // none to detect
		case c.OutageDetected:
			caught = append(caught, fmt.Sprintf("%s in %.0fs", name, *c.DetectionSeconds))
		case c.tooShort() && c.ScheduleSeconds == 0:
			out = append(out, fmt.Sprintf("%s had not acted on the outage when the run stopped: not judged.", name))
		case c.tooShort():
			out = append(out, fmt.Sprintf("%s did not act on the outage before %s: its schedule needs up to %.0fs to act, "+
				"longer than the outage ran; this run says nothing about how it detects one.", name, ended, c.ScheduleSeconds))
		default:
			out = append(out, fmt.Sprintf("%s did not act on the outage before %s.", name, ended))
		}
		if n := len(c.Timeline.Crashes); n > 0 {
			out = append(out, fmt.Sprintf("%s's VPN client exited on its own %d time(s); each exit restarted its container, "+
				"counted apart from the prober's restarts (timeline.crashes in report.json).", name, n))
		}
		if c.BlipActions > 0 {
			out = append(out, fmt.Sprintf("%s restarted or healed %d time(s) for a blip the tunnel would have survived by itself.", name, c.BlipActions))
		}
		if c.LaterActions > 0 {
			out = append(out, fmt.Sprintf("%s restarted or healed %d time(s) after an outage, the link working again for %v or more: "+
				"not in the false restarts and heals, which count the loaded phase before the first outage; "+
				"its timeline tells whether the tunnel had come back.", name, c.LaterActions, BlipGrace))
		}
		if n := c.FalseRestarts + c.FalseHeals; n > 0 {
			out = append(out, fmt.Sprintf("%s restarted or healed the working tunnel %d time(s), breaking %d connection(s).",
				name, n, c.BrokenConnections))
		}
	}
	if len(calm) > 0 {
		out = append(out, "No restart and no heal while the link worked: "+strings.Join(calm, ", ")+".")
	}
	if len(caught) > 0 {
		out = append(out, "Outage detected by "+strings.Join(caught, ", ")+".")
	}
	return out
}

func loadKind(l LoadSpec) string {
	if l.Share > 0 {
		return fmt.Sprintf("paced at %.0f%% of the rate", 100*l.Share)
	}
	return "greedy"
}

func describeHealth(h HealthSpec) string {
	if h.Preset == "upstream" {
		restarts := "restarts off"
		if h.Heal {
			restarts = "restarts on"
		}
		return "the upstream's current check: ICMP echo every 60 s (10 tries, 5-30 s), TLS every 5 min (3 tries, 10-30 s), " + restarts
	}
	parts := []string{"mode " + h.Mode.String()}
	if len(h.Timeouts) > 0 {
		var ts []string
		for _, t := range h.Timeouts {
			ts = append(ts, t.String())
		}
		parts = append(parts, "timeouts "+strings.Join(ts, ","))
	}
	if h.Period.Duration > 0 {
		parts = append(parts, "period "+h.Period.String())
	}
	if h.FailureThreshold > 0 {
		parts = append(parts, fmt.Sprintf("threshold %d", h.FailureThreshold))
	}
	if h.Heal {
		parts = append(parts, "heal")
	}
	return strings.Join(parts, ", ")
}

func describeProber(p ProberSpec) string {
	what := p.describe()
	if p.Kind == "docker" && p.Autoheal {
		what += " (autoheal)"
	}
	return fmt.Sprintf("%s every %v, timeout %v, failure threshold %d", what, p.Period, p.Timeout, p.FailureThreshold)
}

// tooShort reports whether every outage c did not act on, at least one,
// was too short for its schedule or cut short by the run's stop: one it
// simply missed makes it a miss.
func (c ConfigReport) tooShort() bool {
	short := false
	for _, o := range c.Outages {
		if !o.Detected && !o.TooShort {
			return false
		}
		short = short || o.TooShort
	}
	return short
}

// tooShortFor says what an outage c did not act on was too short for: its
// schedule, or a run that stopped during it.
func (c ConfigReport) tooShortFor() string {
	if c.ScheduleSeconds > 0 {
		return "its schedule"
	}
	return "the run, stopped during it"
}

// WriteResults writes report.md, report.json, summary.png and timeline.png into dir,
// creating it.
func (r *Report) WriteResults(dir string) error {
	return output.Dir(dir,
		output.Named{Name: "report.md", Write: r.WriteMarkdown},
		output.Named{Name: "report.json", Write: r.WriteJSON},
		output.Named{Name: "summary.png", Write: r.PlotSummary},
		output.Named{Name: "timeline.png", Write: r.PlotTimeline})
}
