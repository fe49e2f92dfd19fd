package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
)

// heat is the colour scale of the heat map, from the lowest value to the highest.
var heat = []color.RGBA{
	{0, 0, 130, 255},   // dark blue
	{0, 90, 255, 255},  // blue
	{0, 220, 220, 255}, // cyan
	{240, 230, 0, 255}, // yellow
	{220, 30, 0, 255},  // red
}

// writeImage writes the (N+2) x (N+2) grid, borders included, as a PNG heat map: one pixel
// per cell, colours scaled from the grid's lowest to its highest value.
func writeImage(path string, grid []float64, n int) error {
	w := n + 2
	lo, hi := grid[0], grid[0]
	for _, v := range grid {
		lo, hi = min(lo, v), max(hi, v)
	}
	img := image.NewRGBA(image.Rect(0, 0, w, w))
	for k, v := range grid {
		t := 0.0
		if hi > lo {
			t = (v - lo) / (hi - lo)
		}
		img.SetRGBA(k%w, k/w, scale(t))
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("image: %w", err)
	}
	if err := png.Encode(f, img); err != nil {
		_ = f.Close() // the encoding error is the one to report
		return fmt.Errorf("image %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("image %s: %w", path, err)
	}
	return nil
}

// scale maps t in [0, 1] to a colour of the heat scale, interpolating linearly.
func scale(t float64) color.RGBA {
	t = min(max(t, 0), 1) * float64(len(heat)-1)
	i := min(int(t), len(heat)-2)
	f := t - float64(i)
	a, b := heat[i], heat[i+1]
	mix := func(x, y uint8) uint8 { return uint8(float64(x) + f*(float64(y)-float64(x)) + 0.5) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 255}
}
