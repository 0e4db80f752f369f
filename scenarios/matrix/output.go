package matrix

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/tunnelprobe/tunnelprobe/internal/output"
	"github.com/tunnelprobe/tunnelprobe/scenarios"
)

// WriteTable writes each configuration's rates over every completed run as
// an aligned table; runs in which a configuration failed are counted
// apart.
func (m *Report) WriteTable(w io.Writer) error {
	return m.writeRates(w, "configuration", m.Configs, func(cfg string) Rates { return m.Overall[cfg] })
}

func (m *Report) writeRates(w io.Writer, first string, rows []string, get func(string) Rates) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\truns\tworking h\tfalse restarts/h (95%%)\tfalse heals/h (95%%)\tblip actions\tdetected (95%%)\tdetection median\tmax\tbroken conns/h\t\n", first)
	for _, row := range rows {
		r := get(row)
		runs := fmt.Sprint(r.Runs)
		if r.FailedRuns > 0 {
			runs += fmt.Sprintf(" (+%d failed)", r.FailedRuns)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%s\t%s\t%d in %d blips\t%s\t%s\t%s\t%.0f\t\n",
			row, runs, r.WorkingHours, fmtRate(r.FalseRestarts, r.FalseRestartRate), fmtRate(r.FalseHeals, r.FalseHealRate),
			r.BlipActions, r.Blips, fmtDetected(r), fmtSeconds(r.DetectionMedianSeconds), fmtSeconds(r.DetectionMaxSeconds), r.BrokenPerHour)
	}
	return tw.Flush()
}

func fmtRate(n int, r Rate) string {
	return fmt.Sprintf("%d: %.1f (%.1f-%.1f)", n, r.PerHour, r.Interval.Low, r.Interval.High)
}

func fmtDetected(r Rates) string {
	if r.Outages == 0 {
		return "-"
	}
	s := fmt.Sprintf("%d/%d (%.0f-%.0f%%)", r.Detected, r.Outages, 100*r.DetectedShare.Low, 100*r.DetectedShare.High)
	if r.TooShort > 0 {
		s += fmt.Sprintf(", %d too short", r.TooShort)
	}
	return s
}

func fmtSeconds(s *float64) string {
	if s == nil {
		return "-"
	}
	return fmt.Sprintf("%.1fs", *s)
}

// WriteMarkdown writes matrix.md: the rates per configuration, then per
// condition and configuration, then every run with its seed and CPU use.
func (m *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Matrix: %d condition(s) × %d pass(es)\n\n", len(m.Conditions), m.Passes)
	fmt.Fprintf(&b, "%d run(s) in %.0f min, peak memory %.1f GiB.", len(m.Runs), m.WallSeconds/60, float64(m.PeakRSSBytes)/(1<<30))
	if m.Interrupted {
		b.WriteString(" **Interrupted**: the rates cover the runs that completed.")
	}
	if n := m.saturated(); n > 0 {
		fmt.Fprintf(&b, " **%d run(s) saturated the CPU** (over %.0f%% busy): their checks may look slow for the wrong reason.", n, 100*SaturatedCPU)
	}
	b.WriteString("\n\nFalse restarts and heals happened while the link worked, per hour of it, with exact Poisson 95% intervals; " +
		"blip actions are restarts and heals during a short outage the tunnel survives by itself (or 30 s after); " +
		"detected counts outages met by a restart or heal before they ended, with Clopper-Pearson 95% intervals.\n\n```\n")
	if err := m.WriteTable(&b); err != nil {
		return err
	}
	b.WriteString("```\n")
	for _, cond := range m.Conditions {
		fmt.Fprintf(&b, "\n## %s\n\n```\n", cond)
		if err := m.writeRates(&b, "configuration", m.Configs, func(cfg string) Rates { return m.ByCondition[cond][cfg] }); err != nil {
			return err
		}
		b.WriteString("```\n")
	}
	scenarios.WriteMarginTable(&b, "The closest each configuration came to a false restart in any run while the link worked", m.Configs,
		func(cfg string) scenarios.Margin { return m.Overall[cfg].Margin })
	b.WriteString("\n## Runs\n\n| run | condition | seed | CPU | results |\n| --- | --- | --- | --- | --- |\n")
	for i, r := range m.Runs {
		note := ""
		if r.Saturated {
			note = " (saturated)"
		}
		if r.Report.Stalled() {
			note += fmt.Sprintf(" stalled %.1f s", r.Report.StalledSeconds)
		}
		if r.Report.Interrupted {
			note += " interrupted, not in the rates"
		}
		if n := r.Report.LaterActions(); n > 0 {
			note += fmt.Sprintf(" %d restart(s) or heal(s) after an outage with the link working again, not in the rates", n)
		}
		if n := r.Report.Crashes(); n > 0 {
			note += fmt.Sprintf(" %d VPN client exit(s) of its own", n)
		}
		if failed := r.Report.Failures(); len(failed) > 0 {
			whys := make([]string, len(failed))
			for i, f := range failed {
				whys[i] = f.String()
			}
			note += " failed, not in the rates: " + strings.Join(whys, "; ")
		}
		fmt.Fprintf(&b, "| %d | %s | %d | %.0f%%%s | [%s](%s/report.md) |\n", i+1, r.Condition, r.Seed, 100*r.CPU, note, r.dir(), r.dir())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (m *Report) saturated() int {
	n := 0
	for _, r := range m.Runs {
		if r.Saturated {
			n++
		}
	}
	return n
}

// dir is the run's folder in the results: condition-seedN.
func (r RunReport) dir() string { return fmt.Sprintf("%s-seed%d", r.Condition, r.Seed) }

// WriteResults writes matrix.md, matrix.json and matrix.png into dir, and
// each run's report.md, report.json and timeline.png into a folder of its
// own beside them.
func (m *Report) WriteResults(dir string) error {
	for _, r := range m.Runs {
		if err := r.Report.WriteResults(filepath.Join(dir, r.dir())); err != nil {
			return err
		}
	}
	return output.Dir(dir,
		output.Named{Name: "matrix.md", Write: m.WriteMarkdown},
		output.Named{Name: "matrix.json", Write: m.WriteJSON},
		output.Named{Name: "matrix.png", Write: m.PlotMatrix})
}

// WriteJSON writes the report as indented JSON to w.
func (m *Report) WriteJSON(w io.Writer) error { return output.JSON(w, m) }
