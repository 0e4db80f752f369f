package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/tunnelprobe/tunnelprobe/internal/output"
	"github.com/tunnelprobe/tunnelprobe/internal/testpng"
)

// The verdict picks, of the configurations that left the working tunnel
// alone and detected the outage, the fastest; it says when none did, and
// never names a failed one.
func TestVerdict(t *testing.T) {
	secs := func(v float64) *float64 { return &v }
	rep := &Report{Order: []string{"reference", "evidence", "upstream", "broken", "slow"}, Configs: map[string]ConfigReport{
		"reference": {FalseHeals: 2, OutageDetected: true, DetectionSeconds: secs(13)},
		"evidence":  {OutageDetected: true, DetectionSeconds: secs(4), BlipActions: 1},
		"upstream":  {},
		"broken":    {Failed: "no probe ran in 90s"},
		"slow":      {OutageDetected: true, DetectionSeconds: secs(29)},
	}}
	rep.Spec.Link.Outages = []Window{{Start: Duration{60 * time.Second}, Duration: Duration{60 * time.Second}}}
	if v := rep.Verdict(); !strings.HasPrefix(v, "verdict: evidence, ") || !strings.Contains(v, "within 4.0s, the fastest of the 2 that did both") {
		t.Errorf("verdict %q, want evidence at 4.0s of 2", v)
	}
	rep.Configs["evidence"] = ConfigReport{FalseRestarts: 1, OutageDetected: true, DetectionSeconds: secs(4)}
	rep.Configs["slow"] = ConfigReport{}
	if v := rep.Verdict(); !strings.HasPrefix(v, "verdict: no configuration") {
		t.Errorf("verdict %q, want none", v)
	}
	rep.Interrupted = true
	if v := rep.Verdict(); !strings.Contains(v, "interrupted") {
		t.Errorf("verdict of an interrupted run %q", v)
	}
}

// A link loaded far below the load's aim is warned of: the machine was too
// busy, and the figures are not a loaded tunnel's. So is a load that was
// not measured, never taken for an empty link.
func TestWarningsOnALinkNotLoaded(t *testing.T) {
	share := func(v float64) *float64 { return &v }
	rep := &Report{Order: []string{"a", "b"}, Configs: map[string]ConfigReport{"a": {Utilisation: share(0.85)}, "b": {Utilisation: share(0.2)}}}
	rep.Spec.Load.Conns = 1000
	rep.Spec.Link.Rate = 20_000_000
	w := rep.Warnings()
	if len(w) != 1 || !strings.Contains(w[0], "b 20%") || strings.Contains(w[0], "a 85%") || !strings.Contains(w[0], "aim of 80%") {
		t.Errorf("warnings %q, want one naming b at 20%% against 80%%", w)
	}
	rep.Configs["b"] = ConfigReport{Utilisation: share(0.7)}
	if w := rep.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q on a loaded link", w)
	}
	rep.Configs["b"] = ConfigReport{}
	if w := rep.Warnings(); len(w) != 1 || !strings.Contains(w[0], "b (not measured)") {
		t.Errorf("warnings %q, want one naming b's load not measured", w)
	}
	rep.Spec.Load.Share = 0.9
	rep.Configs["b"] = ConfigReport{Utilisation: share(0.4)}
	if w := rep.Warnings(); len(w) != 1 || !strings.Contains(w[0], "aim of 90%") {
		t.Errorf("warnings %q, want one against the paced aim of 90%%", w)
	}
	rep.Spec.Link.Rate = 0
	if w := rep.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q on an unlimited link, which has no rate to load", w)
	}
}

// A process the machine held is warned of, also in an interrupted run or
// on an idle tunnel; a short hold is not.
func TestWarningsOnAStalledProcess(t *testing.T) {
	rep := &Report{Order: []string{"a"}, Configs: map[string]ConfigReport{"a": {}}, Interrupted: true, StalledSeconds: 0.4}
	if w := rep.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q for a 0.4 s hold", w)
	}
	rep.StalledSeconds = 7
	if w := rep.Warnings(); len(w) != 1 || !strings.Contains(w[0], "could not run for up to 7.0 s") {
		t.Errorf("warnings %q, want one for the 7 s hold", w)
	}
}

// The summary picture and the timeline draw every configuration, 1056
// pixels wide and as tall as their panels and key; written into
// TUNNELPROBE_PLOT_DIR when it is set, for a person to look at.
func TestPlots(t *testing.T) {
	secs := func(v float64) *float64 { return &v }
	rep := &Report{Order: []string{"reference", "probe-only", "auto", "wait", "evidence", "upstream", "tcp-socket", "broken"}, Configs: map[string]ConfigReport{
		"reference":  {FalseHeals: 2, OutageDetected: true, DetectionSeconds: secs(13), BlipActions: 1},
		"probe-only": {FalseRestarts: 1, OutageDetected: true, DetectionSeconds: secs(29)},
		"auto":       {FalseRestarts: 1, FalseHeals: 1, OutageDetected: true, DetectionSeconds: secs(29)},
		"wait":       {FalseHeals: 3, OutageDetected: true, DetectionSeconds: secs(13)},
		"evidence":   {OutageDetected: true, DetectionSeconds: secs(4), BlipActions: 1},
		"upstream":   {ScheduleSeconds: 180},
		"tcp-socket": {},
		"broken":     {Failed: "no probe ran"},
	}}
	rep.Spec.Duration = Duration{360 * time.Second}
	rep.Spec.Link.Outages = []Window{{Start: Duration{200 * time.Second}, Duration: Duration{60 * time.Second}}}
	dir := os.Getenv("TUNNELPROBE_PLOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, "summary.png")
	if err := output.File(path, rep.PlotSummary); err != nil {
		t.Fatal(err)
	}
	f, err := rep.summary()
	if err != nil {
		t.Fatal(err)
	}
	testpng.Check(t, path, 1056, pixels(f.height()))

	var tl Timeline
	for at := Offset(1); at < 360; at += 2 {
		tl.Checks = append(tl.Checks, CheckMark{At: at, Latency: 0, Passed: at < 200, DecidedBy: "light-probe"})
		tl.Probes = append(tl.Probes, ProbeMark{At: at, Latency: 20 + float64(at), Passed: at < 204})
	}
	tl.Checks = append(tl.Checks, CheckMark{At: 3, Latency: 350, Passed: true, DecidedBy: "active"})
	tl.Restarts = []Offset{204, 240}
	c := rep.Configs["evidence"]
	c.Timeline = tl
	rep.Configs["evidence"] = c
	rep.Order = []string{"evidence", "tcp-socket"}
	path = filepath.Join(dir, "timeline.png")
	if err := output.File(path, rep.PlotTimeline); err != nil {
		t.Fatal(err)
	}
	fig, err := rep.timeline()
	if err != nil {
		t.Fatal(err)
	}
	testpng.Check(t, path, 1056, pixels(fig.height()))
}

// pixels is l at vgimg's 96 dpi, rounded as vgimg does.
func pixels(l vg.Length) int { return int(l.Dots(vgimg.DefaultDPI) + 0.5) }
