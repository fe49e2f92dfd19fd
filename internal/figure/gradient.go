package figure

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot/palette"
)

// Gradient is a palette.ColorMap that interpolates linearly between colour stops spread
// evenly from Min to Max; the programs use it to map a value to a pixel and to draw the
// colour bar that explains that mapping, so the two cannot disagree.
type Gradient struct {
	stops    []color.RGBA
	min, max float64
	alpha    float64
}

var _ palette.ColorMap = (*Gradient)(nil)

// NewGradient returns the gradient through stops (at least two) from lo to hi.
func NewGradient(stops []color.RGBA, lo, hi float64) *Gradient {
	if len(stops) < 2 {
		panic("figure: a gradient needs at least two colours") // a programming error
	}
	return &Gradient{stops: stops, min: lo, max: hi, alpha: 1}
}

// RGBA returns the colour of v, clamped to the range; a range of one value maps to the
// first stop.
func (g *Gradient) RGBA(v float64) color.RGBA {
	t := 0.0
	if g.max > g.min {
		t = (v - g.min) / (g.max - g.min)
	}
	t = min(max(t, 0), 1) * float64(len(g.stops)-1)
	i := min(int(t), len(g.stops)-2)
	f := t - float64(i)
	a, b := g.stops[i], g.stops[i+1]
	mix := func(x, y uint8) uint8 { return uint8(float64(x) + f*(float64(y)-float64(x)) + 0.5) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), uint8(255*g.alpha + 0.5)}
}

// At returns the colour of v, or an error outside the range (palette.ColorMap).
func (g *Gradient) At(v float64) (color.Color, error) {
	if v < g.min || v > g.max {
		return nil, fmt.Errorf("figure: %g outside the gradient's %g to %g", v, g.min, g.max)
	}
	return g.RGBA(v), nil
}

// Max returns the value of the last stop.
func (g *Gradient) Max() float64 { return g.max }

// SetMax sets the value of the last stop.
func (g *Gradient) SetMax(v float64) { g.max = v }

// Min returns the value of the first stop.
func (g *Gradient) Min() float64 { return g.min }

// SetMin sets the value of the first stop.
func (g *Gradient) SetMin(v float64) { g.min = v }

// Alpha returns the opacity, 1 unless set.
func (g *Gradient) Alpha() float64 { return g.alpha }

// SetAlpha sets the opacity, from 0 (transparent) to 1.
func (g *Gradient) SetAlpha(a float64) { g.alpha = min(max(a, 0), 1) }

// Palette returns n colours evenly spread over the range.
func (g *Gradient) Palette(n int) palette.Palette {
	cs := make([]color.Color, n)
	for i := range cs {
		v := g.min
		if n > 1 {
			v += (g.max - g.min) * float64(i) / float64(n-1)
		}
		cs[i] = g.RGBA(v)
	}
	return colors(cs)
}

// colors is a palette.Palette of fixed colours.
type colors []color.Color

func (c colors) Colors() []color.Color { return c }
