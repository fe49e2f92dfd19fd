package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"slices"
	"strings"
)

// imageSize is the side of the pictures in pixels.
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

// writeImage draws the bodies of s projected on the x-y plane: each pixel's brightness grows
// with the logarithm of the mass in it.
func writeImage(path string, s *system, v view) error {
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

// framePath is the file of step k of a -image-every series: FILE.png becomes FILE-000k.png.
func framePath(path string, k int) string {
	base := path[:len(path)-len(".png")]
	if strings.HasSuffix(path, ".PNG") {
		return fmt.Sprintf("%s-%06d.PNG", base, k)
	}
	return fmt.Sprintf("%s-%06d.png", base, k)
}
