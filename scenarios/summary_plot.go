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

// PlotSummary writes to w a PNG that tells the run at a glance: each
// configuration a point of its own colour and shape in two panels, its
// restarts of the working tunnel above and its heals of it below, across
// how long it took to act on the outage (its slowest detection, on a log
// axis), or in a column of its own when it missed the outage (red) or the
// outage was too short for its schedule (grey). The best place is the
// bottom left of both. Points that would cover each other are set apart
// sideways; the counts stay whole. The key above names each configuration
// with its figures. Failed configurations, which measured nothing, are left
// out and named in the title.
func (r *Report) PlotSummary(w io.Writer) error {
	f, err := r.summary()
	if err != nil {
		return err
	}
	tiles := draw.Tiles{PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(16), PadY: vg.Points(10)}
	return output.StackPNGKey(w, figureWidth, f.height(), f.key, tiles, true, f.restarts, f.heals)
}

// height is how tall the summary is drawn: 2.4 in a panel, and its key.
func (f *summaryFigure) height() vg.Length { return 2*2.4*vg.Inch + f.key.Height() + vg.Inch/2 }

// summaryFigure is what PlotSummary draws.
type summaryFigure struct {
	restarts, heals *plot.Plot
	axis            summaryAxis
	// points holds each configuration's place in the restarts' panel
	// and in the heals' panel.
	points map[string][2]plotter.XY
	key    output.Key
}

// summaryAxis lays out the summary's x axis: the seconds to act on the
// outage, from 1 to its length, then a column for the configurations that
// missed it and one for those it was too short for.
type summaryAxis struct {
	outage   float64    // the longest outage that is no blip; 0 if none
	missed   [2]float64 // the missed column's extent
	tooShort [2]float64 // the too-short column's; zero when no configuration had one
}

// columnWidth is the factor a column spans on the log axis.
const columnWidth = 1.8

func (r *Report) summaryAxis() summaryAxis {
	var a summaryAxis
	for _, o := range r.ran().outagesToDetect() {
		a.outage = max(a.outage, o.Duration.Seconds())
	}
	if a.outage == 0 {
		return a
	}
	a.missed = [2]float64{a.outage, a.outage * columnWidth}
	for _, name := range r.Order {
		if c := r.Configs[name]; c.Failed == "" && c.DetectionSeconds == nil && c.tooShort() {
			a.tooShort = [2]float64{a.missed[1], a.missed[1] * columnWidth}
		}
	}
	return a
}

// x returns where c is drawn across.
func (a summaryAxis) x(c ConfigReport) float64 {
	switch {
	case a.outage == 0:
		return 2 // nothing to detect: only the false actions count
	case c.DetectionSeconds != nil:
		return min(max(*c.DetectionSeconds, 1), a.outage)
	case c.tooShort():
		return math.Sqrt(a.tooShort[0] * a.tooShort[1])
	}
	return math.Sqrt(a.missed[0] * a.missed[1])
}

// span returns the x axis's extent.
func (a summaryAxis) span() (lo, hi float64) {
	switch {
	case a.outage == 0:
		return 1, 4
	case a.tooShort[1] > 0:
		return 1, a.tooShort[1]
	}
	return 1, a.missed[1]
}

// summary builds the summary's panels and key.
func (r *Report) summary() (*summaryFigure, error) {
	f := &summaryFigure{axis: r.summaryAxis(), points: map[string][2]plotter.XY{}}
	var names, failed []string
	top := 1
	for _, name := range r.Order {
		c := r.Configs[name]
		if c.Failed != "" {
			failed = append(failed, name)
			continue
		}
		names = append(names, name)
		top = max(top, c.FalseRestarts, c.FalseHeals)
	}
	f.restarts = f.axis.panel("false restarts\n(the link working)", top)
	f.heals = f.axis.panel("false heals\n(the link working)", top)
	f.heals.X.Label.Text = "seconds from the outage's start to the first restart or heal (log)"
	f.restarts.Title.Text = "Each configuration at a glance: the bottom left of both panels is best"
	if len(failed) > 0 {
		f.restarts.Title.Text += "\nleft out, failed and not measured: " + strings.Join(failed, ", ")
	}
	restarts := make([]plotter.XY, len(names))
	heals := make([]plotter.XY, len(names))
	for i, name := range names {
		c := r.Configs[name]
		restarts[i] = plotter.XY{X: f.axis.x(c), Y: float64(c.FalseRestarts)}
		heals[i] = plotter.XY{X: f.axis.x(c), Y: float64(c.FalseHeals)}
	}
	setApart(restarts, f.axis.bounds())
	setApart(heals, f.axis.bounds())
	columns := f.axis.columns(f.restarts, f.heals)
	var configs []output.KeyEntry
	for i, name := range names {
		f.points[name] = [2]plotter.XY{restarts[i], heals[i]}
		style := draw.GlyphStyle{Color: summaryColors[i%len(summaryColors)], Shape: summaryShapes[i%len(summaryShapes)], Radius: vg.Points(5)}
		var thumb plot.Thumbnailer
		for j, p := range []*plot.Plot{f.restarts, f.heals} {
			sc, err := plotter.NewScatter(plotter.XYs{f.points[name][j]})
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle = style
			p.Add(sc)
			thumb = sc
		}
		configs = append(configs, output.KeyEntry{Label: summaryLabel(name, r.Configs[name], f.axis.outage > 0), Thumbs: []plot.Thumbnailer{thumb}})
	}
	f.key = append(f.key, columns)
	for len(configs) > 0 {
		n := min(len(configs), 4)
		f.key, configs = append(f.key, configs[:n]), configs[n:]
	}
	return f, nil
}

// panel is an empty panel of the summary: counts of what up to top, across
// a's axis.
func (a summaryAxis) panel(what string, top int) *plot.Plot {
	p := plot.New()
	p.Y.Label.Text = what
	p.Y.Min, p.Y.Max = -0.5, float64(top)+0.5
	p.Y.Tick.Marker = countTicks{}
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, a
	p.X.Min, p.X.Max = a.span()
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Add(plotter.NewGrid())
	return p
}

// columns shades the missed and too-short columns in the panels and
// returns their key entries under a heading.
func (a summaryAxis) columns(panels ...*plot.Plot) []output.KeyEntry {
	entries := []output.KeyEntry{{Label: "the shaded columns"}}
	for _, col := range []struct {
		at    [2]float64
		color color.Color
		label string
	}{
		{a.missed, colorOutage, "missed: did not act on the outage before it ended"},
		{a.tooShort, colorTooShort, "too short: the outage ended before its schedule could act, or the run stopped"},
	} {
		if col.at[1] == 0 {
			continue
		}
		var thumb plot.Thumbnailer
		for _, p := range panels {
			shade, _ := plotter.NewPolygon(plotter.XYs{ // finite: no error
				{X: col.at[0], Y: p.Y.Min}, {X: col.at[1], Y: p.Y.Min}, {X: col.at[1], Y: p.Y.Max}, {X: col.at[0], Y: p.Y.Max},
			})
			shade.Color, shade.LineStyle.Width = col.color, 0
			p.Add(shade)
			thumb = shade
		}
		entries = append(entries, output.KeyEntry{Label: col.label, Thumbs: []plot.Thumbnailer{thumb}})
	}
	if len(entries) == 1 {
		entries = append(entries, output.KeyEntry{Label: "the run reached no outage: only the counts tell"})
	}
	return entries
}

// Ticks labels the seconds to act in decades up to the outage's length,
// that length itself, and the missed and too-short columns by name.
func (a summaryAxis) Ticks(lo, hi float64) []plot.Tick {
	if a.outage == 0 {
		return []plot.Tick{{Value: 2, Label: "no outage to detect"}}
	}
	var ticks []plot.Tick
	for decade := 1.0; decade <= a.outage; decade *= 10 {
		for _, m := range []float64{1, 2, 5} {
			v := m * decade
			if v < lo || v > a.outage {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 && v*1.5 < a.outage {
				t.Label = strconv.FormatFloat(v, 'f', -1, 64) + " s"
			}
			ticks = append(ticks, t)
		}
	}
	ticks = append(ticks, plot.Tick{Value: a.outage, Label: strconv.FormatFloat(a.outage, 'f', -1, 64) + " s"})
	ticks = append(ticks, plot.Tick{Value: math.Sqrt(a.missed[0] * a.missed[1]), Label: "missed"})
	if a.tooShort[1] > 0 {
		ticks = append(ticks, plot.Tick{Value: math.Sqrt(a.tooShort[0] * a.tooShort[1]), Label: "too short"})
	}
	return ticks
}

// countTicks label whole counts only: 0, 1, 2, or a rounder step when
// there are many.
type countTicks struct{}

func (countTicks) Ticks(lo, hi float64) []plot.Tick {
	step := 1.0
	for (hi-lo)/step > 8 {
		step *= 2
	}
	var ticks []plot.Tick
	for v := max(math.Ceil(lo/step), 0) * step; v <= hi; v += step { // from 0, never -0
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return ticks
}

// apart is the least factor between the x of two points at one count, on
// the log axis, for neither to cover the other.
const apart = 1.12

// setApart spreads the points of pts that would cover each other (the same
// count, x within apart of each other, in the same region between bounds)
// sideways around their middle, leaving their counts as they are, and
// keeps each within its region: a configuration that detected the outage
// is never drawn in the missed column, nor a missed one past it.
func setApart(pts []plotter.XY, bounds []float64) {
	region := func(x float64) int {
		n := 0
		for _, b := range bounds {
			if x > b {
				n++
			}
		}
		return n
	}
	order := make([]int, len(pts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		return cmp.Or(cmp.Compare(pts[i].Y, pts[j].Y), cmp.Compare(pts[i].X, pts[j].X))
	})
	for start := 0; start < len(order); {
		first := pts[order[start]]
		end := start + 1
		for end < len(order) && pts[order[end]].Y == first.Y && region(pts[order[end]].X) == region(first.X) &&
			pts[order[end]].X < pts[order[end-1]].X*apart {
			end++
		}
		if n := end - start; n > 1 {
			r := region(first.X)
			lo, hi := 1.0, math.Inf(1) // the axis starts at 1 s
			if r > 0 {
				lo = bounds[r-1]
			}
			if r < len(bounds) {
				hi = bounds[r]
			}
			step := min(apart, math.Pow(hi/lo, 1/float64(n)))
			half := math.Pow(step, float64(n-1)/2)
			mid := min(max(math.Sqrt(first.X*pts[order[end-1]].X), lo*half), hi/half)
			for k, i := range order[start:end] {
				pts[i].X = mid * math.Pow(step, float64(k)-float64(n-1)/2)
			}
		}
		start = end
	}
}

// bounds returns where the x axis's regions meet: the outage's length,
// and the ends of the missed and too-short columns.
func (a summaryAxis) bounds() []float64 {
	var b []float64
	for _, x := range []float64{a.outage, a.missed[1], a.tooShort[1]} {
		if x > 0 {
			b = append(b, x)
		}
	}
	return b
}

// The colours and shapes that tell the configurations apart.
var (
	colorTooShort = color.NRGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0x40}
	summaryColors = []color.Color{
		color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
		color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
		color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
		color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}, color.RGBA{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff},
	}
	summaryShapes = []draw.GlyphDrawer{
		draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{},
		draw.RingGlyph{}, draw.BoxGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{},
	}
)

// summaryLabel names a configuration with its figures: "evidence: 4.0 s,
// 0 restarts, 0 heals, 6 in blips" (outages: whether the run had one to
// detect).
func summaryLabel(name string, c ConfigReport, outages bool) string {
	s := name + ": "
	switch {
	case !outages:
	case c.DetectionSeconds != nil:
		s += fmt.Sprintf("%.1f s, ", *c.DetectionSeconds)
	case c.tooShort():
		s += "too short, "
	default:
		s += "missed, "
	}
	s += countOf(c.FalseRestarts, "restart") + ", " + countOf(c.FalseHeals, "heal")
	if c.BlipActions > 0 {
		s += fmt.Sprintf(", %d in blips", c.BlipActions)
	}
	return s
}
