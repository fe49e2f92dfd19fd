package main

import (
	"fmt"
	"image"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/ibisgo/ibis/internal/figure"
)

// heat is the colour scale of the heat map, from the lowest value to the highest.
var heat = []color.RGBA{
	{0, 0, 130, 255},   // dark blue
	{0, 90, 255, 255},  // blue
	{0, 220, 220, 255}, // cyan
	{240, 230, 0, 255}, // yellow
	{220, 30, 0, 255},  // red
}

// Size of the heat map's plot (the colour bar comes beside it; about square cells), and the sides in pixels
// between which the raster of cells is kept: a small grid is enlarged cell by cell so
// that its cells stay sharp, a large one sampled so the picture stays small.
const (
	mapWidth     = 12.5 * vg.Centimeter
	mapHeight    = 13 * vg.Centimeter
	rasterMinPix = 600
	rasterMaxPix = 1024
)

// writeImage writes the (N+2) x (N+2) grid, borders included, as a PNG heat map after
// iters iterations: cell (i, j) at column j and row i (row 0 at the bottom), colours
// scaled from the grid's lowest to its highest value, with a colour bar of that scale.
func writeImage(path string, grid []float64, n, iters int) error {
	p, scale := heatMap(grid, n, iters)
	if !(scale.Max() > scale.Min()) { // a grid of one value: give the bar a range
		scale.SetMax(scale.Min() + 1)
	}
	if err := figure.SaveWithColorBar(p, scale, "cell value", mapWidth, mapHeight, path); err != nil {
		return fmt.Errorf("image: %w", err)
	}
	return nil
}

// heatMap returns the plot of the grid and the colour scale it uses.
func heatMap(grid []float64, n, iters int) (*plot.Plot, *figure.Gradient) {
	w := n + 2
	lo, hi := grid[0], grid[0]
	for _, v := range grid {
		lo, hi = min(lo, v), max(hi, v)
	}
	scale := figure.NewGradient(heat, lo, hi)
	p := plot.New()
	p.Title.Text = fmt.Sprintf("SOR, N = %d, after %d iterations (borders included)", n, iters)
	p.X.Label.Text = "column j"
	p.Y.Label.Text = "row i"
	p.X.Tick.Marker = figure.LinearTicks{}
	p.Y.Tick.Marker = figure.LinearTicks{}
	// Cell (i, j) covers [j-0.5, j+0.5] x [i-0.5, i+0.5].
	p.Add(plotter.NewImage(raster(grid, w, scale), -0.5, -0.5, float64(w)-0.5, float64(w)-0.5))
	p.X.Padding, p.Y.Padding = 0, 0
	return p, scale
}

// raster paints the w x w grid, row 0 at the bottom, k x k pixels a cell for small grids
// and sampled down to at most rasterMaxPix pixels a side for large ones.
func raster(grid []float64, w int, scale *figure.Gradient) *image.RGBA {
	side := w
	switch {
	case w < rasterMinPix:
		side = w * ((rasterMinPix + w - 1) / w)
	case w > rasterMaxPix:
		side = rasterMaxPix
	}
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	for y := range side {
		i := w - 1 - y*w/side // image row 0 is the top: the grid's last row
		for x := range side {
			img.SetRGBA(x, y, scale.RGBA(grid[i*w+x*w/side]))
		}
	}
	return img
}
