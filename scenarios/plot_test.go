package scenarios

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
)

// plotReport is a 360 s run with a blip at 60 s and an outage at 200 s:
// a configuration that healed the working tunnel at 30 s, healed in the
// blip and restarted in the outage; one that acted on the outage only; one
// that missed it; one it was too short for; two that share a place.
func plotReport() *Report {
	secs := func(v float64) *float64 { return &v }
	rep := &Report{Order: []string{"reference", "evidence", "tcp-socket", "upstream", "wait", "broken"}, Configs: map[string]ConfigReport{
		"reference": {FalseHeals: 1, BlipActions: 1, OutageDetected: true, DetectionSeconds: secs(13), Timeline: Timeline{
			Heals: []Offset{30, 65}, Restarts: []Offset{213},
			Probes: []ProbeMark{{At: 10, Latency: 40, Passed: true}, {At: 205, Latency: 9000}},
			Checks: []CheckMark{{At: 11, Latency: 2500, Passed: true, DecidedBy: "active"}, {At: 28, Latency: 6000, DecidedBy: "active"}},
		}},
		"evidence": {OutageDetected: true, DetectionSeconds: secs(4), Timeline: Timeline{
			Restarts: []Offset{204},
			Checks:   []CheckMark{{At: 12, Passed: true, DecidedBy: "light-probe"}, {At: 203, DecidedBy: "counters"}},
		}},
		"tcp-socket": {},
		"upstream":   {ScheduleSeconds: 180, Outages: []OutageReport{{Start: 200, End: 260, TooShort: true}}},
		"wait":       {FalseRestarts: 1, FalseHeals: 1, OutageDetected: true, DetectionSeconds: secs(13.5)},
		"broken":     {Failed: "no probe ran"},
	}}
	rep.Spec.Duration = Duration{360 * time.Second}
	rep.Spec.Link.Outages = []Window{
		{Start: Duration{60 * time.Second}, Duration: Duration{10 * time.Second}, Blip: true},
		{Start: Duration{200 * time.Second}, Duration: Duration{60 * time.Second}},
	}
	return rep
}

// noLegend fails t if p has a legend of its own: the figure's key holds.
func noLegend(t *testing.T, what string, p *plot.Plot) {
	t.Helper()
	if h := p.Legend.Rectangle(draw.Canvas{}).Size().Y; h != 0 {
		t.Errorf("%s has a legend of its own (%v tall)", what, h)
	}
}

// The timeline has a pair of panels per configuration, probes above and
// checks below, over the run's seconds and no further, labelled in plain
// seconds, with one key for all of them.
func TestTimelinePanels(t *testing.T) {
	rep := plotReport()
	tl, err := rep.timeline()
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.panels) != 2*len(rep.Order) {
		t.Fatalf("%d panels for %d configurations, want a pair each", len(tl.panels), len(rep.Order))
	}
	for i, p := range tl.panels {
		want := []string{"probes", "checks"}[i%2]
		if p.Y.Label.Text != want {
			t.Errorf("panel %d is of %q, want %q", i, p.Y.Label.Text, want)
		}
		if p.X.Min != 0 || p.X.Max != 360 {
			t.Errorf("panel %d runs from %v to %v s, want the run's 0 to 360", i, p.X.Min, p.X.Max)
		}
		noLegend(t, p.Y.Label.Text, p)
	}
	last := tl.panels[len(tl.panels)-1]
	var labels []string
	for _, tick := range last.X.Tick.Marker.Ticks(last.X.Min, last.X.Max) {
		if tick.Label != "" {
			labels = append(labels, tick.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "0 60 120 180 240 300 360" {
		t.Errorf("time labels %q, want every minute in plain seconds", got)
	}
	if got := strings.Join(labels, " "); strings.Contains(got, ".") {
		t.Errorf("time labels %q with decimals", got)
	}
}

// Probes and checks are apart: the probes' panel holds the prober's
// probes, the checks' panel the health server's checks, and a check that
// proof of life decided with no dial sits in its row.
func TestTimelineMarksApart(t *testing.T) {
	tl := plotReport().Configs["reference"].Timeline
	passed, failed := probeMarks(tl, 0.1)
	if len(passed) != 1 || passed[0].X != 10 || len(failed) != 1 || failed[0].X != 205 {
		t.Errorf("probe marks passed %v failed %v, want the probes at 10 and 205 s", passed, failed)
	}
	passed, failed, proof := checkMarks(tl, 0.1)
	if len(passed) != 1 || passed[0].X != 11 || len(failed) != 1 || failed[0].X != 28 || len(proof) != 0 {
		t.Errorf("check marks passed %v failed %v proof %v, want the checks at 11 and 28 s", passed, failed, proof)
	}
	passed, failed, proof = checkMarks(plotReport().Configs["evidence"].Timeline, 0.1)
	if len(passed) != 0 || len(proof) != 1 || proof[0] != (plotter.XY{X: 12, Y: proofLatency}) || len(failed) != 1 || failed[0].Y != proofLatency {
		t.Errorf("proof-of-life checks: passed %v failed %v proof %v", passed, failed, proof)
	}
}

// A restart or heal while the link worked is drawn as a false one, named
// so in the key and the panel's title; one in a blip and one after the
// outage began are drawn apart. The key names each kind of mark once.
func TestTimelineFalseActions(t *testing.T) {
	rep := plotReport()
	tl, err := rep.timeline()
	if err != nil {
		t.Fatal(err)
	}
	want := []action{{At: 213, Kind: actedAfterOutage}, {At: 30, Heal: true, Kind: falseAction}, {At: 65, Heal: true, Kind: blipAction}}
	if got := tl.actions["reference"]; !slices.Equal(got, want) {
		t.Errorf("reference's actions %+v, want %+v", got, want)
	}
	if title := tl.panels[0].Title.Text; !strings.Contains(title, "1 false heal (at 30 s)") || !strings.Contains(title, "0 false restarts") {
		t.Errorf("reference's title %q, want its false heal and when", title)
	}
	labels := tl.key.labels()
	for _, l := range []string{"false heal: the link was working", "restart after the outage began", "heal in a blip (counted apart)",
		"outage: the tunnel is down", "blip: a short outage the tunnel survives", "passed, at its latency", "failed"} {
		if n := slices.Index(labels, l); n < 0 {
			t.Errorf("key %q lacks %q", labels, l)
		}
	}
	if len(labels) != 8 {
		t.Errorf("key has %d entries %q, want 8, each once", len(labels), labels)
	}
	if keyed := tl.key.key(); len(keyed) != 3 || keyed[2][1].Label != "false heal: the link was working" {
		t.Errorf("key columns %v, want the link, the marks and the actions, false ones first", keyed)
	}
}

// The summary draws restarts and heals of the working tunnel in panels
// of their own, at their whole counts; points at one place are set apart
// sideways; a configuration the outage was too short for lies in a column
// of its own, outside the missed one; the failed one is named in the title.
func TestSummaryPoints(t *testing.T) {
	rep := plotReport()
	rep.Configs["wait"] = ConfigReport{FalseRestarts: 1, FalseHeals: 1, OutageDetected: true, DetectionSeconds: rep.Configs["reference"].DetectionSeconds}
	f, err := rep.summary()
	if err != nil {
		t.Fatal(err)
	}
	noLegend(t, "restarts", f.restarts)
	noLegend(t, "heals", f.heals)
	for name, at := range f.points {
		c := rep.Configs[name]
		if at[0].Y != float64(c.FalseRestarts) || at[1].Y != float64(c.FalseHeals) {
			t.Errorf("%s at %v, want %d restarts and %d heals", name, at, c.FalseRestarts, c.FalseHeals)
		}
		for _, p := range at {
			if p.Y != math.Trunc(p.Y) {
				t.Errorf("%s drawn at a count of %v", name, p.Y)
			}
		}
	}
	ref, wait := f.points["reference"][1], f.points["wait"][1]
	if ref.Y != wait.Y || wait.X/ref.X < apart*0.999 {
		t.Errorf("reference at %v and wait at %v: one covers the other", ref, wait)
	}
	if 13/ref.X > apart || wait.X/13 > apart {
		t.Errorf("reference at %v and wait at %v, far from their 13 s", ref, wait)
	}
	short, missed := f.points["upstream"][0].X, f.points["tcp-socket"][0].X
	if short >= f.axis.missed[0] && short <= f.axis.missed[1] {
		t.Errorf("too short at %v, in the missed column %v", short, f.axis.missed)
	}
	if short <= f.axis.tooShort[0] || short >= f.axis.tooShort[1] {
		t.Errorf("too short at %v, outside its column %v", short, f.axis.tooShort)
	}
	if missed <= f.axis.missed[0] || missed >= f.axis.missed[1] {
		t.Errorf("missed at %v, outside its column %v", missed, f.axis.missed)
	}
	if _, ok := f.points["broken"]; ok || !strings.Contains(f.restarts.Title.Text, "broken") {
		t.Errorf("the failed configuration is drawn, or not named in %q", f.restarts.Title.Text)
	}
	var labels []string
	for _, tick := range f.axis.Ticks(f.restarts.X.Min, f.restarts.X.Max) {
		labels = append(labels, tick.Label)
	}
	if !slices.Contains(labels, "missed") || !slices.Contains(labels, "too short") {
		t.Errorf("x labels %q, want the columns named", labels)
	}
	for _, tick := range (countTicks{}).Ticks(f.heals.Y.Min, f.heals.Y.Max) {
		if tick.Value != math.Trunc(tick.Value) || tick.Label == "-0" {
			t.Errorf("count tick %+v", tick)
		}
	}
}

// Points set apart stay in their region: two detections just under the
// outage's length are not spread into the missed column, and many missed
// points stay within it.
func TestSetApartKeepsRegions(t *testing.T) {
	bounds := []float64{60, 108}
	pts := []plotter.XY{{X: 59, Y: 0}, {X: 60, Y: 0}}
	setApart(pts, bounds)
	for _, p := range pts {
		if p.X > 60 {
			t.Errorf("a detection drawn at %.1f s, in the missed column past 60 s: %v", p.X, pts)
		}
	}
	if pts[0].X >= pts[1].X {
		t.Errorf("not set apart: %v", pts)
	}
	missed := make([]plotter.XY, 9)
	for i := range missed {
		missed[i] = plotter.XY{X: math.Sqrt(60 * 108)}
	}
	setApart(missed, bounds)
	for _, p := range missed {
		if p.X <= 60 || p.X > 108 {
			t.Errorf("a missed point drawn at %.1f s, outside its column (60, 108]: %v", p.X, missed)
		}
	}
}
