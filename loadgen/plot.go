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
// sweep plot 960×960 (960×320 without probes).
const (
	plotWidth       = 10 * vg.Inch
	runPlotHeight   = 10 * vg.Inch
	sweepPlotHeight = 10 * vg.Inch
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

// PlotSweep writes to w a PNG of a sweep against the connections each level
// achieved (a logarithmic axis, so that 10, 100 and 1,000 connections are
// evenly spaced), in panels: the probe's p50, p99 and max latency (max
// dashed on top, with a ring, so that it shows where it equals p99, as it
// does with fewer than 100 probes), each level marked with the passed
// probes its latencies rest on; the share of failed probes in percent, out
// of how many; and the throughput each level delivered. A sweep that
// probed nothing has the throughput only.
func PlotSweep(w io.Writer, levels []Result) error {
	panels, err := sweepPanels(levels)
	if err != nil {
		return err
	}
	return stackPlots(w, sweepPlotHeight*vg.Length(len(panels))/3, panels...)
}

// sweepPanels builds PlotSweep's panels, top to bottom.
func sweepPanels(levels []Result) ([]*plot.Plot, error) {
	d := sweepPoints(levels)
	title := "throughput against connections"
	if len(levels) > 0 {
		title = fmt.Sprintf("%s (%s): ", levels[0].Target, cmp.Or(levels[0].Path, "direct")) + title
	}
	tp, err := d.throughput()
	if err != nil {
		return nil, err
	}
	panels := []*plot.Plot{tp}
	if d.probed {
		lp, err := d.latency()
		if err != nil {
			return nil, err
		}
		fp, err := d.failures()
		if err != nil {
			return nil, err
		}
		panels = []*plot.Plot{lp, fp, tp}
		title = strings.Replace(title, "throughput", "probe latency", 1)
	}
	panels[0].Title.Text = title
	tp.X.Label.Text = "connections achieved (log)"
	// Levels such as 10, 100, 1,000 connections, evenly spaced.
	for _, p := range panels {
		p.Y.Min = 0
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		p.X.Min, p.X.Max = 1, 10 // no level: an empty axis that a log scale takes
		if n := len(d.up); n > 0 {
			p.X.Min, p.X.Max = d.up[0].X/1.5, d.up[n-1].X*1.5
		}
	}
	return panels, nil
}

// sweepSeries are the points of a sweep's panels, a level each, by the
// connections it achieved (at least 1, on the logarithmic axis).
type sweepSeries struct {
	p50, p99, max, failed, up, down plotter.XYs
	// samples say how many probes passed at each level, the samples its
	// latencies rest on; outOf how many failed, out of how many.
	samples, outOf []string
	// upName says what up counts; probed whether any level probed;
	// anyDown whether any level moved bytes down.
	upName          string
	probed, anyDown bool
}

// sweepPoints turns levels into points, sorted by the connections each
// achieved. Up is what the target received where the path counts it,
// else what was written into the sockets (the table's figure).
func sweepPoints(levels []Result) sweepSeries {
	sorted := slices.Clone(levels)
	slices.SortStableFunc(sorted, func(a, b Result) int { return cmp.Compare(a.ConnsAchieved, b.ConnsAchieved) })
	d := sweepSeries{upName: "up, delivered"}
	for _, r := range sorted {
		x := float64(max(r.ConnsAchieved, 1))
		d.p50 = append(d.p50, plotter.XY{X: x, Y: r.ProbeLatencyMS.P50})
		d.p99 = append(d.p99, plotter.XY{X: x, Y: r.ProbeLatencyMS.P99})
		d.max = append(d.max, plotter.XY{X: x, Y: r.ProbeLatencyMS.Max})
		d.failed = append(d.failed, plotter.XY{X: x, Y: failureRate(r)})
		d.up = append(d.up, plotter.XY{X: x, Y: mbits(r.upBytes(), r.DurationSeconds)})
		d.down = append(d.down, plotter.XY{X: x, Y: mbits(r.BytesDown, r.DurationSeconds)})
		d.samples = append(d.samples, fmt.Sprintf("%d probes passed", r.ProbeLatencyMS.Count))
		d.outOf = append(d.outOf, fmt.Sprintf("%d of %d", r.ProbeFailures, r.Probes))
		if r.DeliveredUp == nil {
			d.upName = "up, written into the sockets"
		}
		d.probed = d.probed || r.Probes > 0
		d.anyDown = d.anyDown || r.BytesDown > 0
	}
	return d
}

// latencyLines are the probe's latency lines in the order they are drawn:
// max last, on top of p99, which it equals with fewer than 100 probes;
// dashed and ringed, so that p99 shows between its dashes and inside its
// rings.
func (d sweepSeries) latencyLines() []sweepLine {
	return []sweepLine{{d.p50, colorP50, "p50", false}, {d.p99, colorP99, "p99", false}, {d.max, colorMax, "max", true}}
}

// sweepLine is a line of the sweep's latency panel.
type sweepLine struct {
	xys    plotter.XYs
	color  color.Color
	name   string
	dashed bool
}

// latency is the panel of the probe's latency percentiles, each level
// labelled with how many probes passed.
func (d sweepSeries) latency() (*plot.Plot, error) {
	lp := newPlot("", "", "probe latency (ms)")
	for _, l := range d.latencyLines() {
		line, points, err := linePoints(l.xys, l.color)
		if err != nil {
			return nil, err
		}
		if l.dashed {
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
			points.Shape, points.Radius = draw.RingGlyph{}, vg.Points(6)
		}
		lp.Add(line, points)
		lp.Legend.Add(l.name, line, points)
	}
	// The legend top left, where latency is lowest, clear of the labels
	// above the highest points.
	lp.Legend.Left = true
	lp.Y.Max = max(lp.Y.Max, 1) * legendRoom * legendRoom
	if err := addLevelLabels(lp, d.max, d.samples); err != nil {
		return nil, err
	}
	return lp, nil
}

// failures is the panel of the share of failed probes, in percent on an
// axis to 100, each level labelled with its failures out of its probes.
func (d sweepSeries) failures() (*plot.Plot, error) {
	fp := newPlot("", "", "failed probes (%)")
	if err := addLinePoints(fp, d.failed, colorFailure, ""); err != nil {
		return nil, err
	}
	fp.Y.Max = 100
	if err := addLevelLabels(fp, d.failed, d.outOf); err != nil {
		return nil, err
	}
	return fp, nil
}

// throughput is the panel of what each level moved on average, in Mbit/s.
func (d sweepSeries) throughput() (*plot.Plot, error) {
	tp := newPlot("", "", "throughput (Mbit/s)")
	if err := addLinePoints(tp, d.up, colorUp, d.upName); err != nil {
		return nil, err
	}
	if d.anyDown {
		if err := addLinePoints(tp, d.down, colorDown, "down, read"); err != nil {
			return nil, err
		}
	}
	tp.Y.Max = max(tp.Y.Max, 1) * legendRoom
	return tp, nil
}

// addLevelLabels writes labels just above the points xys of p.
func addLevelLabels(p *plot.Plot, xys plotter.XYs, labels []string) error {
	if len(xys) == 0 {
		return nil
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	for i := range l.TextStyle {
		l.TextStyle[i].XAlign = draw.XCenter
		l.TextStyle[i].Font.Size = vg.Points(10)
	}
	l.Offset = vg.Point{Y: vg.Points(8)}
	p.Add(l)
	return nil
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
