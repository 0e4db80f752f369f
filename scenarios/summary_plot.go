package scenarios

import (
	"fmt"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tunnelprobe/tunnelprobe/internal/output"
)

// PlotSummary writes to w a PNG that tells the run at a glance: each
// configuration a point, across how long it took to act on the outage (its
// slowest detection; past the outage's end, shaded, it missed one) and up
// how often it restarted or healed the working tunnel. The best place is the
// bottom left. Failed configurations, which measured nothing, are left out.
func (r *Report) PlotSummary(w io.Writer) error {
	outage := 0.0 // the longest outage that is no blip
	for _, o := range r.Spec.Link.Outages {
		if !o.Blip {
			outage = max(outage, o.Duration.Seconds())
		}
	}
	missedAt := 1.15 * max(outage, 1)
	var pts plotter.XYs
	var names []string
	top := 1.0
	for _, name := range r.Order {
		c := r.Configs[name]
		if c.Failed != "" {
			continue
		}
		x := missedAt
		if c.DetectionSeconds != nil {
			x = *c.DetectionSeconds
		}
		if outage == 0 {
			x = 0
		}
		y := float64(c.FalseRestarts + c.FalseHeals)
		top = max(top, y)
		pts = append(pts, plotter.XY{X: x, Y: y})
		names = append(names, summaryLabel(name, c))
	}
	p := plot.New()
	p.Title.Text = "Each configuration: bottom left is best"
	p.X.Label.Text = "seconds to act on the outage (slowest); in the red band it missed one"
	p.Y.Label.Text = "restarts and heals of the working tunnel"
	p.X.Min, p.X.Max = 0, 1.3*max(outage, 1)
	p.Y.Min, p.Y.Max = -0.5, top+1
	if outage > 0 {
		missed, err := plotter.NewPolygon(plotter.XYs{
			{X: outage, Y: p.Y.Min}, {X: p.X.Max, Y: p.Y.Min}, {X: p.X.Max, Y: p.Y.Max}, {X: outage, Y: p.Y.Max},
		})
		if err != nil {
			return err
		}
		missed.Color, missed.LineStyle.Width = colorOutage, 0
		p.Add(missed)
	}
	if len(pts) > 0 {
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color, sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = colorRestart, draw.CircleGlyph{}, vg.Points(5)
		p.Add(sc)
		// A character of the labels' font is about 1/110 of the x range.
		at := spreadLabels(pts, names, p.Y.Max-p.Y.Min, (p.X.Max-p.X.Min)/110)
		labels, err := plotter.NewLabels(plotter.XYLabels{XYs: at, Labels: names})
		if err != nil {
			return err
		}
		labels.Offset = vg.Point{X: vg.Points(8), Y: vg.Points(-4)}
		p.Add(labels)
	}
	return output.StackPNG(w, 9*vg.Inch, 5*vg.Inch, draw.Tiles{}, false, p)
}

// summaryLabel names a configuration with its figures: "evidence (4.0 s,
// 6 blip actions)".
func summaryLabel(name string, c ConfigReport) string {
	s := name + " ("
	switch {
	case c.DetectionSeconds != nil:
		s += fmt.Sprintf("%.1f s", *c.DetectionSeconds)
	case c.tooShort():
		s += "outage too short for its schedule"
	default:
		s += "missed"
	}
	if c.BlipActions > 0 {
		s += fmt.Sprintf(", %d blip action(s)", c.BlipActions)
	}
	return s + ")"
}

// spreadLabels returns where to write the labels of pts so that they do
// not overlap: a label that would run into an earlier one (on its line,
// within the earlier label's width, about width x units per character) goes
// a line higher.
func spreadLabels(pts plotter.XYs, labels []string, height, width float64) plotter.XYs {
	out := make(plotter.XYs, len(pts))
	line := height / 14
	for i, pt := range pts {
		out[i] = pt
		for moved := true; moved; {
			moved = false
			for j := range i {
				overlapX := pt.X < pts[j].X+width*float64(len(labels[j])) && pts[j].X < pt.X+width*float64(len(labels[i]))
				if overlapX && abs(out[j].Y-out[i].Y) < line {
					out[i].Y += line
					moved = true
				}
			}
		}
	}
	return out
}

func abs(x float64) float64 { return max(x, -x) }
