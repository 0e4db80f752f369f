package loadgen

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tunnelprobe/tunnelprobe/internal/output"
)

// Plot geometry: at vgimg's 96 dpi a run plot is 960×960 pixels and a
// sweep plot 960×720.
const (
	plotWidth       = 10 * vg.Inch
	runPlotHeight   = 10 * vg.Inch
	sweepPlotHeight = 7.5 * vg.Inch
)

var (
	colorUp      = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colorDown    = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	colorOpen    = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	colorProbe   = color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}
	colorFailure = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	colorP50     = colorUp
	colorP99     = colorDown
	colorMax     = colorFailure
)

// PlotRun writes to w a PNG of r's series: panels sharing the time axis
// (seconds since the start): throughput up and down in Mbit/s (written into
// and read from the sockets), open connections, and, for a run that probed,
// the slowest probe of each second in ms, with the seconds in which a probe
// failed marked along the top of that panel.
func PlotRun(w io.Writer, r Result) error {
	pts := runPoints(r)
	title := fmt.Sprintf("%s (%s): %d of %d connections", r.Target, cmp.Or(r.Path, "direct"), r.ConnsAchieved, r.ConnsRequested)
	if r.Interrupted {
		title += ", interrupted"
	}
	tp := newPlot(title, "", "Mbit/s")
	if err := addLine(tp, pts.up, colorUp, "up"); err != nil {
		return err
	}
	if err := addLine(tp, pts.down, colorDown, "down"); err != nil {
		return err
	}

	op := newPlot("", "", "open connections")
	if err := addLine(op, pts.open, colorOpen, ""); err != nil {
		return err
	}
	tp.Y.Max *= legendRoom
	if r.Probes == 0 {
		// No --probe: no empty panel.
		op.X.Label.Text = "seconds since start"
		return stackPlots(w, runPlotHeight*2/3, shareTimeAxis(r, pts, tp, op)...)
	}

	pp := newPlot("", "seconds since start", "slowest probe (ms)")
	if err := addLine(pp, pts.probe, colorProbe, "probe max"); err != nil {
		return err
	}
	if len(pts.failed) > 0 {
		sc, err := plotter.NewScatter(pts.failed)
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: colorFailure, Radius: vg.Points(4), Shape: draw.CrossGlyph{}}
		pp.Add(sc)
		pp.Legend.Add("probe failed", sc)
	}
	pp.Y.Max = max(pp.Y.Max, pts.probeTop) * legendRoom
	return stackPlots(w, runPlotHeight, shareTimeAxis(r, pts, tp, op, pp)...)
}

// shareTimeAxis gives the panels of r one time axis, so that a dip in
// throughput lines up with the probe that suffered from it, and returns
// them.
func shareTimeAxis(r Result, pts runSeries, panels ...*plot.Plot) []*plot.Plot {
	xmin, xmax := 0.0, max(r.DurationSeconds, 1)
	if n := len(pts.up); n > 0 {
		xmax = max(xmax, pts.up[n-1].X)
	}
	for _, p := range panels {
		p.X.Min, p.X.Max = xmin, xmax
		p.Y.Min = 0
	}
	return panels
}

// runSeries are the points of a run's panels.
type runSeries struct {
	up, down, open, probe, failed plotter.XYs
	// probeTop is where failed probes are drawn: above every passing one.
	probeTop float64
}

// runPoints turns r's series into points. A Second covers [T, T+1): each
// is drawn at its end, where Open was read. The last one may be partial
// (the run ended or was stopped within it); its rates are scaled to its
// real length.
func runPoints(r Result) runSeries {
	start := float64(r.Start.UnixNano()) / 1e9
	end := start + r.DurationSeconds
	n := len(r.Series)
	pts := runSeries{up: make(plotter.XYs, n), down: make(plotter.XYs, n), open: make(plotter.XYs, n)}
	for i, s := range r.Series {
		from, to := max(float64(s.T), start), float64(s.T+1)
		if i == n-1 && end > from && end < to {
			to = end
		}
		length := max(to-from, 0.1) // a sliver would blow the rate up
		x := to - start
		pts.up[i] = plotter.XY{X: x, Y: float64(s.BytesUp) * 8 / 1e6 / length}
		pts.down[i] = plotter.XY{X: x, Y: float64(s.BytesDown) * 8 / 1e6 / length}
		pts.open[i] = plotter.XY{X: x, Y: float64(s.Open)}
		// A second without a probe has no latency, not a latency of 0.
		if s.Probes > s.ProbeFailures {
			pts.probe = append(pts.probe, plotter.XY{X: x, Y: s.ProbeMaxMS})
		}
		pts.probeTop = max(pts.probeTop, s.ProbeMaxMS)
		if s.ProbeFailures > 0 {
			pts.failed = append(pts.failed, plotter.XY{X: x})
		}
	}
	// Failures have no latency to show: mark them near the top of the panel,
	// above every passing probe and below the legend.
	pts.probeTop = max(pts.probeTop*1.1, 1)
	for i := range pts.failed {
		pts.failed[i].Y = pts.probeTop
	}
	return pts
}

// PlotSweep writes to w a PNG of a sweep: the probe's p50, p99 and max
// latency against the connections each level achieved (a logarithmic axis,
// so that 10, 100 and 1,000 connections are evenly spaced), and below it
// the share of failed probes.
func PlotSweep(w io.Writer, levels []Result) error {
	sorted := slices.Clone(levels)
	slices.SortStableFunc(sorted, func(a, b Result) int { return cmp.Compare(a.ConnsAchieved, b.ConnsAchieved) })
	p50, p99, pmax := make(plotter.XYs, len(sorted)), make(plotter.XYs, len(sorted)), make(plotter.XYs, len(sorted))
	fail := make(plotter.XYs, len(sorted))
	for i, r := range sorted {
		x := float64(max(r.ConnsAchieved, 1)) // the axis is logarithmic
		p50[i] = plotter.XY{X: x, Y: r.ProbeLatencyMS.P50}
		p99[i] = plotter.XY{X: x, Y: r.ProbeLatencyMS.P99}
		pmax[i] = plotter.XY{X: x, Y: r.ProbeLatencyMS.Max}
		fail[i] = plotter.XY{X: x, Y: failureRate(r)}
	}
	target := ""
	if len(sorted) > 0 {
		target = fmt.Sprintf("%s (%s): ", sorted[0].Target, cmp.Or(sorted[0].Path, "direct"))
	}
	lp := newPlot(target+"probe latency against connections", "", "probe latency (ms)")
	// max is drawn first and dashed, so that p99, often equal to it with
	// few probes, stays visible on top; the legend reads p50, p99, max.
	var drawn []plot.Plotter
	for _, l := range []struct {
		xys    plotter.XYs
		c      color.Color
		name   string
		dashed bool
	}{{p50, colorP50, "p50", false}, {p99, colorP99, "p99", false}, {pmax, colorMax, "max", true}} {
		line, points, err := linePoints(l.xys, l.c)
		if err != nil {
			return err
		}
		if l.dashed {
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		drawn = append([]plot.Plotter{line, points}, drawn...)
		lp.Legend.Add(l.name, line, points)
	}
	lp.Add(drawn...)
	fp := newPlot("", "connections achieved (log)", "failed probes (%)")
	if err := addLinePoints(fp, fail, colorFailure, ""); err != nil {
		return err
	}
	fp.Y.Max = max(fp.Y.Max*1.1, 1)
	lp.Y.Max = max(lp.Y.Max, 1) * legendRoom
	// Levels such as 10, 100, 1,000 connections, evenly spaced.
	for _, p := range []*plot.Plot{lp, fp} {
		p.Y.Min = 0
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		p.X.Min, p.X.Max = 1, 10 // no level: an empty axis that a log scale takes
		if len(sorted) > 0 {
			p.X.Min = float64(max(sorted[0].ConnsAchieved, 1)) / 1.5
			p.X.Max = float64(max(sorted[len(sorted)-1].ConnsAchieved, 1)) * 1.5
		}
	}
	return stackPlots(w, sweepPlotHeight, lp, fp)
}

// legendRoom scales a panel's top so that its legend, in the top right
// corner, sits above the data rather than on it.
const legendRoom = 1.25

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.X.Tick.Marker = plainTicks{}
	p.Y.Tick.Marker = plainTicks{}
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

func addLine(p *plot.Plot, xys plotter.XYs, c color.Color, name string) error {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	l.Color = c
	l.Width = vg.Points(1.5)
	p.Add(l)
	if name != "" {
		p.Legend.Add(name, l)
	}
	return nil
}

func addLinePoints(p *plot.Plot, xys plotter.XYs, c color.Color, name string) error {
	l, s, err := linePoints(xys, c)
	if err != nil {
		return err
	}
	p.Add(l, s)
	if name != "" {
		p.Legend.Add(name, l, s)
	}
	return nil
}

func linePoints(xys plotter.XYs, c color.Color) (*plotter.Line, *plotter.Scatter, error) {
	l, s, err := plotter.NewLinePoints(xys)
	if err != nil {
		return nil, nil, fmt.Errorf("plot: %w", err)
	}
	l.Color = c
	l.Width = vg.Points(1.5)
	s.Color = c
	s.Shape = draw.CircleGlyph{}
	return l, s, nil
}

// plainTicks are plot's default ticks labelled without trailing zeros:
// "2500" connections rather than "2500.00".
type plainTicks struct{}

func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i, t := range ticks {
		if t.Label != "" {
			// Six decimals hide float noise (0.30000000000000004).
			l := strconv.FormatFloat(t.Value, 'f', 6, 64)
			ticks[i].Label = strings.TrimSuffix(strings.TrimRight(l, "0"), ".")
		}
	}
	return ticks
}

// stackPlots stacks plots vertically, aligned on their axes, and writes them
// to w as a PNG of plotWidth by height.
func stackPlots(w io.Writer, height vg.Length, plots ...*plot.Plot) error {
	tiles := draw.Tiles{
		PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(12),
		PadY: vg.Points(8),
	}
	return output.StackPNG(w, plotWidth, height, tiles, true, plots...)
}
