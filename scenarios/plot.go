package scenarios

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tunnelprobe/tunnelprobe/internal/output"
)

var (
	colorPass    = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	colorFail    = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	colorRestart = color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}
	colorHeal    = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	colorBlipAct = color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}
	colorOutage  = color.NRGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0x40}
	colorBlip    = color.NRGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0x18}
	colorProof   = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
)

// proofLatency is where a check that proof of life decided (no dial, 0 ms)
// is drawn: a row of its own at the bottom of the checks' panel.
const proofLatency = 0.3

// The columns of the timeline's key.
const (
	keyLink = iota
	keyMarks
	keyActions
)

// PlotTimeline writes to w a PNG of the run over seconds since its start:
// for each configuration a pair of panels, the prober's probes above and
// the health server's checks below, each at its latency (ms, log; green
// passed, red failed; the checks that proof of life decided with no dial a
// row of blue squares at the bottom), the outages shaded, and the
// configuration's restarts (purple) and heals (orange, dashed) as vertical
// lines: red and thick, with a red cross on top, when the link was working
// (the report's false ones), grey in a blip. Each pair's title gives its
// figures; one key at the top says what every mark means.
func (r *Report) PlotTimeline(w io.Writer) error {
	tl, err := r.timeline()
	if err != nil {
		return err
	}
	tiles := draw.Tiles{PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(12), PadY: vg.Points(8)}
	return output.StackPNGKey(w, figureWidth, tl.height(), tl.key.key(), tiles, true, tl.panels...)
}

// figureWidth is the width of the timeline and the summary: 1056 pixels
// at vgimg's 96 dpi.
const figureWidth = 11 * vg.Inch

// height is how tall the timeline is drawn: 3 in a configuration, and its
// key.
func (f *timelineFigure) height() vg.Length {
	return 3*vg.Inch*vg.Length(len(f.panels)/2) + f.key.key().Height() + vg.Inch/4
}

// timelineFigure is what PlotTimeline draws.
type timelineFigure struct {
	// panels are two per configuration, in the report's order: its
	// probes, then its checks.
	panels []*plot.Plot
	key    figureKey
	// actions are each configuration's restarts and heals as drawn.
	actions map[string][]action
}

// timeline builds the timeline's panels and key.
func (r *Report) timeline() (*timelineFigure, error) {
	f := &timelineFigure{actions: map[string][]action{}}
	end, top := r.runSeconds(), 1.0
	for _, name := range r.Order {
		for _, pm := range r.Configs[name].Timeline.Probes {
			top = max(top, pm.Latency)
		}
		for _, cm := range r.Configs[name].Timeline.Checks {
			top = max(top, cm.Latency)
		}
	}
	working := r.Spec.workingTime()
	for _, name := range r.Order {
		c := r.Configs[name]
		probes, checks := timelinePanel(end, top, "probes"), timelinePanel(end, top, "checks")
		probes.Title.Text = r.timelineTitle(name, c)
		// The checks' panel right below gives the times.
		probes.HideX()
		probes.X.Tick.Marker = plot.ConstantTicks(nil)
		f.actions[name] = actions(c.Timeline, working)
		for _, p := range []*plot.Plot{probes, checks} {
			if err := r.addOutages(p, &f.key); err != nil {
				return nil, err
			}
		}
		passed, failed := probeMarks(c.Timeline, probes.Y.Min)
		if err := addMarks(probes, &f.key, passed, failed, nil); err != nil {
			return nil, err
		}
		passed, failed, proof := checkMarks(c.Timeline, checks.Y.Min)
		if err := addMarks(checks, &f.key, passed, failed, proof); err != nil {
			return nil, err
		}
		if err := addActions(probes, f.actions[name], &f.key, true); err != nil {
			return nil, err
		}
		if err := addActions(checks, f.actions[name], nil, false); err != nil {
			return nil, err
		}
		f.panels = append(f.panels, probes, checks)
	}
	if n := len(f.panels); n > 0 {
		f.panels[n-1].X.Label.Text = "seconds since start"
	}
	return f, nil
}

// runSeconds is how long the run lasted: the spec's duration, or less
// where it was interrupted (at least a second).
func (r *Report) runSeconds() float64 {
	end := r.Spec.Duration.Seconds()
	if end <= 0 || (r.Interrupted && r.DurationSeconds > 0 && r.DurationSeconds < end) {
		end = r.DurationSeconds
	}
	return max(end, 1)
}

// timelinePanel is an empty panel over the run's seconds, 0 to end, and
// latencies up to top on a log axis.
func timelinePanel(end, top float64, what string) *plot.Plot {
	p := plot.New()
	p.Y.Label.Text = what
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = latencyTicks{}
	p.Y.Min, p.Y.Max = 0.1, 2*top
	p.X.Min, p.X.Max = 0, end
	p.X.Tick.Marker = secondTicks{}
	p.Title.TextStyle.Font.Size = vg.Points(13)
	return p
}

// timelineTitle names a configuration with its figures: "reference (loop,
// kubelet /): 0 false restarts, 1 false heal (at 17 s); acted on the
// outage after 11.1 s".
func (r *Report) timelineTitle(name string, c ConfigReport) string {
	s := name + ": "
	if c.Mode != "" || c.Prober != "" {
		s = fmt.Sprintf("%s (%s, %s): ", name, c.Mode, c.Prober)
	}
	if c.Failed != "" {
		return s + "failed, not measured: " + c.Failed
	}
	working := r.Spec.workingTime()
	for i, a := range []struct {
		what string
		at   []Offset
	}{{"false restart", c.Timeline.Restarts}, {"false heal", c.Timeline.Heals}} {
		if i > 0 {
			s += ", "
		}
		var at []string
		for _, o := range a.at {
			if working.holds(o) {
				at = append(at, strconv.Itoa(int(math.Round(float64(o)))))
			}
		}
		s += countOf(len(at), a.what)
		if len(at) > 0 {
			s += " (at " + strings.Join(at, ", ") + " s)"
		}
	}
	return s + "; " + outcome(c, r.hasOutage())
}

// hasOutage reports whether the run had an outage to detect (blips aside).
func (r *Report) hasOutage() bool { return len(r.ran().outagesToDetect()) > 0 }

// outcome says how c met the run's outages, as the table does.
func outcome(c ConfigReport, outages bool) string {
	switch {
	case !outages:
		return "no outage to detect"
	case c.DetectionSeconds != nil:
		return fmt.Sprintf("acted on the outage after %.1f s", *c.DetectionSeconds)
	case c.tooShort():
		return "outage too short for " + c.tooShortFor()
	}
	return "missed the outage"
}

// countOf is "1 false heal", "0 false heals".
func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// addOutages shades the spec's outages over the whole height of p: a
// blip, which the tunnel survives, lighter.
func (r *Report) addOutages(p *plot.Plot, key *figureKey) error {
	for _, o := range r.ran().Link.Outages {
		shade, err := plotter.NewPolygon(plotter.XYs{
			{X: o.Start.Seconds(), Y: p.Y.Min}, {X: o.End().Seconds(), Y: p.Y.Min},
			{X: o.End().Seconds(), Y: p.Y.Max}, {X: o.Start.Seconds(), Y: p.Y.Max},
		})
		if err != nil {
			return err
		}
		shade.Color, shade.LineStyle.Width = colorOutage, 0
		rank, label := 0, "outage: the tunnel is down"
		if o.Blip {
			shade.Color, rank, label = colorBlip, 1, "blip: a short outage the tunnel survives"
		}
		p.Add(shade)
		key.add(keyLink, rank, label, shade)
	}
	return nil
}

// probeMarks returns the prober's probes of tl at their latency (floor
// at least), passed and failed.
func probeMarks(tl Timeline, floor float64) (passed, failed plotter.XYs) {
	for _, pm := range tl.Probes {
		xy := plotter.XY{X: float64(pm.At), Y: max(pm.Latency, floor)}
		if pm.Passed {
			passed = append(passed, xy)
		} else {
			failed = append(failed, xy)
		}
	}
	return passed, failed
}

// checkMarks returns the health server's checks of tl at their latency
// (floor at least), passed and failed, and apart those that proof of life
// passed with no dial, at proofLatency; those it failed are failed ones
// drawn there.
func checkMarks(tl Timeline, floor float64) (passed, failed, proof plotter.XYs) {
	for _, cm := range tl.Checks {
		xy := plotter.XY{X: float64(cm.At), Y: max(cm.Latency, floor)}
		noDial := cm.DecidedBy != "" && cm.DecidedBy != "active"
		if noDial {
			xy.Y = proofLatency
		}
		switch {
		case noDial && cm.Passed:
			proof = append(proof, xy)
		case cm.Passed:
			passed = append(passed, xy)
		default:
			failed = append(failed, xy)
		}
	}
	return passed, failed, proof
}

// addMarks adds passed, failed and proof (passed with no dial) as points.
func addMarks(p *plot.Plot, key *figureKey, passed, failed, proof plotter.XYs) error {
	for i, s := range []struct {
		xys   plotter.XYs
		color color.Color
		shape draw.GlyphDrawer
		label string
	}{
		{passed, colorPass, draw.CircleGlyph{}, "passed, at its latency"},
		{failed, colorFail, draw.CrossGlyph{}, "failed"},
		{proof, colorProof, draw.BoxGlyph{}, "check passed on proof of life, no dial (0 ms)"},
	} {
		if len(s.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(s.xys)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: s.color, Shape: s.shape, Radius: vg.Points(2.5)}
		p.Add(sc)
		key.add(keyMarks, i, s.label, sc)
	}
	return nil
}

// actionKind is what a restart or heal was, as the report counts it.
type actionKind int

const (
	// actedAfterOutage: after the first outage began, when the link no
	// longer counts as working.
	actedAfterOutage actionKind = iota
	// falseAction: while the link worked, a FalseRestart or FalseHeal.
	falseAction
	// blipAction: in a blip or BlipGrace after it, a BlipAction.
	blipAction
)

// action is a restart or heal as the timeline draws it.
type action struct {
	At   Offset
	Heal bool
	Kind actionKind
}

// actions returns tl's restarts and heals, each of the kind the report
// counts it as.
func actions(tl Timeline, working workingTime) []action {
	var out []action
	for _, a := range []struct {
		at   []Offset
		heal bool
	}{{tl.Restarts, false}, {tl.Heals, true}} {
		for _, at := range a.at {
			kind := actedAfterOutage
			switch {
			case working.inBlip(at):
				kind = blipAction
			case working.holds(at):
				kind = falseAction
			}
			out = append(out, action{At: at, Heal: a.heal, Kind: kind})
		}
	}
	return out
}

// rank orders actions in the key: false restarts and heals first, those
// in a blip last.
func (a action) rank() int {
	r := map[actionKind]int{falseAction: 0, actedAfterOutage: 2, blipAction: 4}[a.Kind]
	if a.Heal {
		r++
	}
	return r
}

// style is how an action is drawn and named in the key.
func (a action) style() (c color.Color, width vg.Length, dashes []vg.Length, label string) {
	c, label = colorRestart, "restart"
	if a.Heal {
		dashes, c, label = []vg.Length{vg.Points(5), vg.Points(3)}, colorHeal, "heal"
	}
	switch a.Kind {
	case falseAction:
		return colorFail, vg.Points(2.5), dashes, "false " + label + ": the link was working"
	case blipAction:
		return colorBlipAct, vg.Points(1.5), dashes, label + " in a blip (counted apart)"
	}
	return c, vg.Points(1.5), dashes, label + " after the outage began"
}

// addActions draws acts as vertical lines over the height of p, with a red
// cross at the top of each false one when marked, and names them in key
// (when not nil), false ones first.
func addActions(p *plot.Plot, acts []action, key *figureKey, marked bool) error {
	var crosses plotter.XYs
	for _, a := range acts {
		l, err := plotter.NewLine(plotter.XYs{{X: float64(a.At), Y: p.Y.Min}, {X: float64(a.At), Y: p.Y.Max}})
		if err != nil {
			return err
		}
		var label string
		l.Color, l.Width, l.Dashes, label = a.style()
		p.Add(l)
		thumbs := []plot.Thumbnailer{l}
		if a.Kind == falseAction {
			cross := falseCross(plotter.XYs{{X: float64(a.At), Y: p.Y.Max / 2}})
			thumbs = append(thumbs, cross)
			crosses = append(crosses, cross.XYs[0])
		}
		key.add(keyActions, a.rank(), label, thumbs...)
	}
	if marked && len(crosses) > 0 {
		p.Add(falseCross(crosses))
	}
	return nil
}

// falseCross marks false actions at xys: a large red cross.
func falseCross(xys plotter.XYs) *plotter.Scatter {
	sc, _ := plotter.NewScatter(xys) // finite, never empty: no error
	sc.GlyphStyle = draw.GlyphStyle{Color: colorFail, Shape: draw.CrossGlyph{}, Radius: vg.Points(6)}
	return sc
}

// figureKey collects what a figure's marks mean, each once, for its key.
type figureKey struct {
	cols [3][]keyEntry
	seen map[string]bool
}

// keyEntry is an entry of a figureKey and its rank in its column: the
// lower first.
type keyEntry struct {
	output.KeyEntry
	rank int
}

// keyHeadings head the key's columns.
var keyHeadings = [3]string{"the link", "each probe (upper panel) and check (lower)", "restarts and heals"}

// add adds label to column col at rank, unless the key already has it.
func (k *figureKey) add(col, rank int, label string, thumbs ...plot.Thumbnailer) {
	if k == nil || k.seen[label] {
		return
	}
	if k.seen == nil {
		k.seen = map[string]bool{}
	}
	k.seen[label] = true
	k.cols[col] = append(k.cols[col], keyEntry{output.KeyEntry{Label: label, Thumbs: thumbs}, rank})
	slices.SortStableFunc(k.cols[col], func(a, b keyEntry) int { return cmp.Compare(a.rank, b.rank) })
}

// labels are the key's labels, column by column.
func (k *figureKey) labels() []string {
	var out []string
	for _, col := range k.cols {
		for _, e := range col {
			out = append(out, e.Label)
		}
	}
	return out
}

// key returns the key to draw: its columns with entries, each under its
// heading.
func (k *figureKey) key() output.Key {
	var key output.Key
	for i, col := range k.cols {
		if len(col) == 0 {
			continue
		}
		entries := []output.KeyEntry{{Label: keyHeadings[i]}}
		for _, e := range col {
			entries = append(entries, e.KeyEntry)
		}
		key = append(key, entries)
	}
	return key
}

// secondTicks label seconds plainly (0, 60, 120), a round step that gives
// at most eight intervals.
type secondTicks struct{}

func (secondTicks) Ticks(lo, hi float64) []plot.Tick {
	steps := [][2]float64{ // major, minor
		{1, 0}, {2, 1}, {5, 1}, {10, 5}, {15, 5}, {30, 10}, {60, 10}, {120, 30}, {300, 60},
		{600, 120}, {900, 300}, {1800, 600}, {3600, 900}, {7200, 1800}, {21600, 3600}, {86400, 21600},
	}
	step := steps[len(steps)-1]
	for _, s := range steps {
		if (hi-lo)/s[0] <= 8 {
			step = s
			break
		}
	}
	var ticks []plot.Tick
	if step[1] > 0 {
		for v := math.Ceil(lo/step[1]) * step[1]; v <= hi; v += step[1] {
			ticks = append(ticks, plot.Tick{Value: v})
		}
	}
	for v := math.Ceil(lo/step[0]) * step[0]; v <= hi; v += step[0] {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return ticks
}

// latencyTicks mark the decades of milliseconds from 1 ms, labelled as a
// person says them: 1 ms, 10 ms, 100 ms, 1 s, 10 s.
type latencyTicks struct{}

func (latencyTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for v := 1.0; v <= hi; v *= 10 {
		if v < lo {
			continue
		}
		label := strconv.FormatFloat(v, 'f', -1, 64) + " ms"
		if v >= 1000 {
			label = strconv.FormatFloat(v/1000, 'f', -1, 64) + " s"
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
	}
	return ticks
}
