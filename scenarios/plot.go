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

var (
	colorPass    = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	colorFail    = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	colorCheck   = color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}
	colorRestart = color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}
	colorHeal    = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	colorOutage  = color.NRGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0x40}
	colorProof   = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
)

// proofLatency is where a check that proof of life decided (no dial, 0 ms)
// is drawn: a row of its own above the axis, named in the legend.
const proofLatency = 0.3

// legendMargin is the x range over the run's duration: the rest is the
// legend's.
const legendMargin = 1.45

// PlotTimeline writes to w a PNG with one panel per configuration: probe
// latencies (green passed, red failed), the health server's check latencies
// (grey; blue in a row at the bottom for the checks that proof of life
// decided with no dial), restarts (purple) and heals (orange) as vertical
// lines, and the outages shaded, over seconds since the start. The legend
// sits right of the run, over no data.
func (r *Report) PlotTimeline(w io.Writer) error {
	const panelHeight = 2.6 * vg.Inch
	panels := make([]*plot.Plot, len(r.Order))
	for i, name := range r.Order {
		p, err := r.panel(name)
		if err != nil {
			return err
		}
		panels[i] = p
	}
	tiles := draw.Tiles{PadTop: vg.Points(4), PadBottom: vg.Points(4)}
	return output.StackPNG(w, 11*vg.Inch, panelHeight*vg.Length(len(r.Order)), tiles, false, panels...)
}

func (r *Report) panel(name string) (*plot.Plot, error) {
	c := r.Configs[name]
	tl := c.Timeline
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s, %s", name, c.Mode, c.Prober)
	p.X.Label.Text = "seconds since start"
	p.Y.Label.Text = "latency (ms, log)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	// The run on the left; the right margin, where no data falls, holds
	// the legend.
	p.X.Min, p.X.Max = 0, legendMargin*r.Spec.Duration.Seconds()
	top := 1.0
	for _, pm := range tl.Probes {
		top = max(top, pm.Latency)
	}
	for _, cm := range tl.Checks {
		top = max(top, cm.Latency)
	}
	p.Y.Min, p.Y.Max = 0.1, 2*top
	if err := r.addOutages(p); err != nil {
		return nil, err
	}
	if err := addMarks(p, tl); err != nil {
		return nil, err
	}
	if err := addActions(p, tl); err != nil {
		return nil, err
	}
	p.Legend.Top = true
	return p, nil
}

// addOutages shades the spec's outages over the whole height of p.
func (r *Report) addOutages(p *plot.Plot) error {
	for i, o := range r.Spec.Link.Outages {
		shade, err := plotter.NewPolygon(plotter.XYs{
			{X: o.Start.Seconds(), Y: p.Y.Min}, {X: o.End().Seconds(), Y: p.Y.Min},
			{X: o.End().Seconds(), Y: p.Y.Max}, {X: o.Start.Seconds(), Y: p.Y.Max},
		})
		if err != nil {
			return err
		}
		shade.Color = colorOutage
		shade.LineStyle.Width = 0
		p.Add(shade)
		if i == 0 {
			p.Legend.Add("outage (link down)", shade)
		}
	}
	return nil
}

// addMarks adds the health server's checks and the prober's probes as
// points at their latency.
func addMarks(p *plot.Plot, tl Timeline) error {
	var checks, proof, passed, failed plotter.XYs
	for _, cm := range tl.Checks {
		if cm.DecidedBy != "" && cm.DecidedBy != "active" { // a proof decided it: no dial
			proof = append(proof, plotter.XY{X: float64(cm.At), Y: proofLatency})
			continue
		}
		checks = append(checks, plotter.XY{X: float64(cm.At), Y: max(cm.Latency, p.Y.Min)})
	}
	for _, pm := range tl.Probes {
		xy := plotter.XY{X: float64(pm.At), Y: max(pm.Latency, p.Y.Min)}
		if pm.Passed {
			passed = append(passed, xy)
		} else {
			failed = append(failed, xy)
		}
	}
	for _, s := range []struct {
		xys   plotter.XYs
		color color.Color
		shape draw.GlyphDrawer
		label string
	}{
		{checks, colorCheck, draw.CircleGlyph{}, "check"},
		{proof, colorProof, draw.BoxGlyph{}, "check decided by proof of life (no dial)"},
		{passed, colorPass, draw.TriangleGlyph{}, "probe passed"},
		{failed, colorFail, draw.CrossGlyph{}, "probe failed"},
	} {
		if len(s.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(s.xys)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color, sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = s.color, s.shape, vg.Points(2)
		p.Add(sc)
		p.Legend.Add(s.label, sc)
	}
	return nil
}

// addActions adds the restarts and heals as dashed vertical lines.
func addActions(p *plot.Plot, tl Timeline) error {
	for _, m := range []struct {
		at    []Offset
		color color.Color
		label string
	}{
		{tl.Restarts, colorRestart, "restart"},
		{tl.Heals, colorHeal, "heal"},
	} {
		for i, at := range m.at {
			l, err := plotter.NewLine(plotter.XYs{{X: float64(at), Y: p.Y.Min}, {X: float64(at), Y: p.Y.Max}})
			if err != nil {
				return err
			}
			l.Color, l.Width = m.color, vg.Points(1.5)
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
			p.Add(l)
			if i == 0 {
				p.Legend.Add(m.label, l)
			}
		}
	}
	return nil
}
