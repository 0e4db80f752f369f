package scenarios

import (
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tunnelprobe/tunnelprobe/internal/output"
)

// PlotSummary writes to w a PNG that tells the run at a glance: each
// configuration a point of its own colour and shape, across how long it took
// to act on the outage (its slowest detection, on a log axis; past the
// outage's end, shaded, it missed one) and up how often it restarted or
// healed the working tunnel. The best place is the bottom left. The legend,
// right of the data, names each with its figures. Failed configurations,
// which measured nothing, are left out.
func (r *Report) PlotSummary(w io.Writer) error {
	outage := 0.0 // the longest outage that is no blip
	for _, o := range r.Spec.Link.Outages {
		if !o.Blip {
			outage = max(outage, o.Duration.Seconds())
		}
	}
	missedAt := 1.5 * max(outage, 2)
	p := plot.New()
	p.Title.Text = "Each configuration: bottom left is best"
	p.X.Label.Text = "seconds to act on the outage (slowest, log); in the red band it missed one"
	p.Y.Label.Text = "restarts and heals of the working tunnel"
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	p.X.Min = 1
	// The data on the left; the right margin holds the legend.
	p.X.Max = missedAt * 8
	top := 1.0
	for _, name := range r.Order {
		if c := r.Configs[name]; c.Failed == "" {
			top = max(top, float64(c.FalseRestarts+c.FalseHeals))
		}
	}
	p.Y.Min, p.Y.Max = -0.5, top+1
	if outage > 0 {
		missed, err := plotter.NewPolygon(plotter.XYs{
			{X: outage, Y: p.Y.Min}, {X: missedAt * 1.3, Y: p.Y.Min}, {X: missedAt * 1.3, Y: p.Y.Max}, {X: outage, Y: p.Y.Max},
		})
		if err != nil {
			return err
		}
		missed.Color, missed.LineStyle.Width = colorOutage, 0
		p.Add(missed)
		p.Legend.Add("missed an outage", missed)
	}
	var placed plotter.XYs
	for i, name := range r.Order {
		c := r.Configs[name]
		if c.Failed != "" {
			continue
		}
		at := plotter.XY{X: missedAt, Y: float64(c.FalseRestarts + c.FalseHeals)}
		switch {
		case outage == 0:
			at.X = 2 * p.X.Min // nothing to detect: only the false actions count
		case c.DetectionSeconds != nil:
			at.X = max(*c.DetectionSeconds, p.X.Min)
		}
		// Points at one place are set a little apart, so none hides another.
		for _, q := range placed {
			if abs(q.X-at.X) < 0.05*at.X && abs(q.Y-at.Y) < 0.1 {
				at.Y += 0.12
			}
		}
		placed = append(placed, at)
		sc, err := plotter.NewScatter(plotter.XYs{at})
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: summaryColors[i%len(summaryColors)], Shape: summaryShapes[i%len(summaryShapes)], Radius: vg.Points(5)}
		p.Add(sc)
		p.Legend.Add(summaryLabel(name, c, outage > 0), sc)
	}
	p.Legend.Top = true
	return output.StackPNG(w, 9*vg.Inch, 5*vg.Inch, draw.Tiles{}, false, p)
}

// The colours and shapes that tell the configurations apart.
var (
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
// 0 false, 6 in blips" (outages: whether the run had one to detect).
func summaryLabel(name string, c ConfigReport, outages bool) string {
	s := name + ": "
	switch {
	case !outages:
		s += "no outage"
	case c.DetectionSeconds != nil:
		s += fmt.Sprintf("%.1f s", *c.DetectionSeconds)
	case c.tooShort():
		s += "outage too short for it"
	default:
		s += "missed"
	}
	s += fmt.Sprintf(", %d false", c.FalseRestarts+c.FalseHeals)
	if c.BlipActions > 0 {
		s += fmt.Sprintf(", %d in blips", c.BlipActions)
	}
	return s
}

func abs(x float64) float64 { return max(x, -x) }
