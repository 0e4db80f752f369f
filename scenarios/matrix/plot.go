package matrix

import (
	"fmt"
	"image/color"
	"io"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tunnelprobe/tunnelprobe/internal/output"
)

// cellColors runs from good (green) to bad (red), for the matrix's cells.
type cellColors []color.Color

func (c cellColors) Colors() []color.Color { return c }

var (
	goodToBad = cellColors{
		color.RGBA{0x1a, 0x98, 0x50, 0xff}, color.RGBA{0x91, 0xcf, 0x60, 0xff}, color.RGBA{0xd9, 0xef, 0x8b, 0xff},
		color.RGBA{0xfe, 0xe0, 0x8b, 0xff}, color.RGBA{0xfc, 0x8d, 0x59, 0xff}, color.RGBA{0xd7, 0x30, 0x27, 0xff},
	}
	badToGood = cellColors{goodToBad[5], goodToBad[4], goodToBad[3], goodToBad[2], goodToBad[1], goodToBad[0]}
)

// matrixGrid is one figure of the matrix: configurations (rows, the first
// on top) against conditions (columns).
type matrixGrid struct {
	m     *Report
	value func(Rates) float64
}

func (g matrixGrid) Dims() (c, r int) { return len(g.m.Conditions), len(g.m.Configs) }
func (g matrixGrid) X(c int) float64  { return float64(c) }
func (g matrixGrid) Y(r int) float64  { return float64(r) }
func (g matrixGrid) Z(c, r int) float64 {
	return g.value(g.m.ByCondition[g.m.Conditions[c]][g.m.Configs[len(g.m.Configs)-1-r]])
}

// PlotMatrix writes to w a PNG of the matrix at a glance, configurations against
// conditions: above, false restarts and heals per hour of working link
// (green none, red many); below, the share of outages detected (green all,
// red none) with the median detection time.
func (m *Report) PlotMatrix(w io.Writer) error {
	falsePerHour := func(r Rates) float64 { return r.FalseRestartRate.PerHour + r.FalseHealRate.PerHour }
	detected := func(r Rates) float64 {
		if r.Outages == 0 {
			return 1
		}
		return float64(r.Detected) / float64(r.Outages)
	}
	top, err := m.heatPanel("false restarts + heals per hour of working link", matrixGrid{m, falsePerHour}, goodToBad, 0, 0,
		func(r Rates) string { return fmt.Sprintf("%.1f/h", falsePerHour(r)) })
	if err != nil {
		return err
	}
	bottom, err := m.heatPanel("outages detected (median detection)", matrixGrid{m, detected}, badToGood, 0, 1,
		func(r Rates) string {
			switch {
			case r.Outages == 0:
				return "-"
			case r.Detected == 0 && r.TooShort > 0:
				return fmt.Sprintf("0/%d (too short)", r.Outages)
			}
			return fmt.Sprintf("%d/%d %s", r.Detected, r.Outages, fmtSeconds(r.DetectionMedianSeconds))
		})
	if err != nil {
		return err
	}
	width := vg.Length(1.3*float64(len(m.Conditions))+1.5) * vg.Inch
	height := 2 * vg.Length(0.45*float64(len(m.Configs))+1.2) * vg.Inch
	tiles := draw.Tiles{PadY: vg.Points(12), PadTop: vg.Points(4), PadBottom: vg.Points(4)}
	return output.StackPNG(w, width, height, tiles, false, top, bottom)
}

// heatPanel is one heat map of g, coloured by pal over min..max (max 0:
// the largest value, at least 1), each cell labelled.
func (m *Report) heatPanel(title string, g matrixGrid, pal cellColors, lo, hi float64, label func(Rates) string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	h := plotter.NewHeatMap(g, pal)
	if hi == 0 {
		hi = 1
		cols, rows := g.Dims()
		for c := range cols {
			for r := range rows {
				hi = max(hi, g.Z(c, r))
			}
		}
	}
	h.Min, h.Max = lo, hi
	p.Add(h)
	var xys plotter.XYs
	var texts []string
	for c, cond := range m.Conditions {
		for i, cfg := range m.Configs {
			xys = append(xys, plotter.XY{X: float64(c), Y: float64(len(m.Configs) - 1 - i)})
			texts = append(texts, label(m.ByCondition[cond][cfg]))
		}
	}
	labels, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: texts})
	if err != nil {
		return nil, err
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i].XAlign, labels.TextStyle[i].YAlign = draw.XCenter, draw.YCenter
	}
	p.Add(labels)
	p.NominalX(m.Conditions...)
	top := slices.Clone(m.Configs)
	slices.Reverse(top) // NominalY runs upwards
	p.NominalY(top...)
	return p, nil
}
