package main

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/ibisgo/ibis/internal/figure"
)

// imageSize is the side in pixels of the raster of the bodies inside a picture.
const imageSize = 800

// view is the square of the x-y plane the pictures show, fixed for a run so that the frames
// of a series line up.
type view struct{ cx, cy, half float64 }

// newView frames the bodies of s: centred on the centre of mass, wide enough for 99% of the
// bodies with a margin.
func newView(s *system) view {
	var cx, cy, m float64
	for i, p := range s.pos {
		cx += s.mass[i] * p[0]
		cy += s.mass[i] * p[1]
		m += s.mass[i]
	}
	cx, cy = cx/m, cy/m
	d := make([]float64, s.n())
	for i, p := range s.pos {
		d[i] = max(math.Abs(p[0]-cx), math.Abs(p[1]-cy))
	}
	slices.Sort(d)
	half := 1.3 * quantile(d, 0.99)
	if half <= 0 {
		half = 1
	}
	return view{cx, cy, half}
}

// Size of a picture: the plot with its axes and title, about square in its data area.
const (
	frameWidth  = 18 * vg.Centimeter
	frameHeight = 18.6 * vg.Centimeter
)

// frame says which moment of the run a picture shows, for its title.
type frame struct {
	step, steps int
	time        float64
}

// writeImage draws the bodies of s projected on the x-y plane, in a plot with x and y axes
// (the model's units: G = 1, total mass 1) and the step and simulated time as its title.
func writeImage(path string, s *system, v view, f frame) error {
	if err := figure.Save(framePlot(s, v, f), frameWidth, frameHeight, path); err != nil {
		return fmt.Errorf("image: %w", err)
	}
	return nil
}

// framePlot returns the plot of the bodies of s in the square v.
func framePlot(s *system, v view, f frame) *plot.Plot {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Barnes-Hut, %d bodies: step %d of %d, t = %.4g", s.n(), f.step, f.steps, f.time)
	p.X.Label.Text = "x (model units: G = 1, total mass 1)"
	p.Y.Label.Text = "y (model units)"
	p.X.Tick.Marker = figure.LinearTicks{}
	p.Y.Tick.Marker = figure.LinearTicks{}
	p.X.Padding, p.Y.Padding = 0, 0
	p.Add(plotter.NewImage(density(s, v), v.cx-v.half, v.cy-v.half, v.cx+v.half, v.cy+v.half))
	return p
}

// density paints the bodies of s in the square v, imageSize pixels a side: each pixel's
// brightness grows with the logarithm of the mass in it.
func density(s *system, v view) *image.RGBA {
	dens := make([]float64, imageSize*imageSize)
	var top float64
	for i, p := range s.pos {
		x := int((p[0] - v.cx + v.half) / (2 * v.half) * imageSize)
		y := int((v.half - (p[1] - v.cy)) / (2 * v.half) * imageSize)
		if x < 0 || x >= imageSize || y < 0 || y >= imageSize {
			continue
		}
		dens[y*imageSize+x] += s.mass[i]
		top = max(top, dens[y*imageSize+x])
	}
	img := image.NewRGBA(image.Rect(0, 0, imageSize, imageSize))
	floor := top * 1e-3
	for k, m := range dens {
		c := color.RGBA{0, 0, 12, 255}
		if m > 0 && top > 0 {
			t := math.Log(max(m, floor)/floor) / math.Log(top/floor)
			if top == floor {
				t = 1
			}
			t = 0.25 + 0.75*t
			c = color.RGBA{uint8(255 * math.Min(1, 1.2*t)), uint8(255 * t * t), uint8(255 * math.Sqrt(t) * 0.9), 255}
		}
		img.SetRGBA(k%imageSize, k/imageSize, c)
	}
	return img
}

// framePath is the file of step k of a -image-every series: FILE.png becomes FILE-00000k.png
// (six digits, more for steps past 999999).
func framePath(path string, k int) string {
	base := path[:len(path)-len(".png")]
	if strings.HasSuffix(path, ".PNG") {
		return fmt.Sprintf("%s-%06d.PNG", base, k)
	}
	return fmt.Sprintf("%s-%06d.png", base, k)
}
