package output

import (
	"fmt"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// StackPNG draws plots one above the other on a width by height canvas,
// laid out by tiles (its Rows and Cols are set here), and writes it to w as
// a PNG. With align set the plots' axes are aligned, for panels that share
// the x axis.
func StackPNG(w io.Writer, width, height vg.Length, tiles draw.Tiles, align bool, plots ...*plot.Plot) error {
	return StackPNGKey(w, width, height, nil, tiles, align, plots...)
}

// KeyEntry is one line of a [Key]: what a mark means and the thumbnails
// that draw it. An entry without thumbnails is a column's heading.
type KeyEntry struct {
	Label  string
	Thumbs []plot.Thumbnailer
}

// Key is the legend of a whole figure, for marks that mean the same in
// every plot of it: its columns side by side, each a list of entries.
type Key [][]KeyEntry

// keyGap is the room between the columns of a key and below it.
const keyGap = 18

// legends returns k's columns as legends, their text left, after the
// thumbnails.
func (k Key) legends() []plot.Legend {
	ls := make([]plot.Legend, 0, len(k))
	for _, col := range k {
		l := plot.NewLegend()
		l.Top, l.Left = true, true
		l.TextStyle.Font.Size = vg.Points(11)
		for _, e := range col {
			l.Add(e.Label, e.Thumbs...)
		}
		ls = append(ls, l)
	}
	return ls
}

// Height returns how tall k is drawn, the room below it included; 0 for a
// key with no entries.
func (k Key) Height() vg.Length {
	var h vg.Length
	for _, l := range k.legends() {
		h = max(h, l.Rectangle(draw.Canvas{}).Size().Y)
	}
	if h == 0 {
		return 0
	}
	return h + 2*keyGap
}

// draw draws k's columns across the top of c, centred.
func (k Key) draw(c draw.Canvas) {
	ls := k.legends()
	widths := make([]vg.Length, len(ls))
	total := vg.Length(keyGap) * vg.Length(len(ls)-1)
	for i, l := range ls {
		widths[i] = l.Rectangle(draw.Canvas{}).Size().X
		total += widths[i]
	}
	x := c.Min.X + max(c.Size().X-total, 0)/2
	for i := range ls {
		col := c
		col.Min.X, col.Max.X = x, x+widths[i]
		col.Max.Y -= keyGap
		ls[i].Draw(col)
		x += widths[i] + keyGap
	}
}

// StackPNGKey is [StackPNG] with key drawn once across the top, the plots
// below it.
func StackPNGKey(w io.Writer, width, height vg.Length, key Key, tiles draw.Tiles, align bool, plots ...*plot.Plot) error {
	canvas := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(vgimg.DefaultDPI))
	dc := draw.New(canvas)
	if h := key.Height(); h > 0 {
		key.draw(dc)
		dc = draw.Crop(dc, 0, 0, 0, -h)
	}
	tiles.Rows, tiles.Cols = len(plots), 1
	if align {
		grid := make([][]*plot.Plot, len(plots))
		for i, p := range plots {
			grid[i] = []*plot.Plot{p}
		}
		for i, row := range plot.Align(grid, tiles, dc) {
			plots[i].Draw(row[0])
		}
	} else {
		for i, p := range plots {
			p.Draw(tiles.At(dc, 0, i))
		}
	}
	if _, err := (vgimg.PngCanvas{Canvas: canvas}).WriteTo(w); err != nil {
		return fmt.Errorf("png: %w", err)
	}
	return nil
}
