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
	canvas := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(vgimg.DefaultDPI))
	dc := draw.New(canvas)
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
