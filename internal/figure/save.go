package figure

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ErrFormat is returned for a file name that ends in neither .png nor .svg.
var ErrFormat = errors.New("figure: the file must end in .png or .svg")

// gap is the space between a plot and what stands beside it.
const gap = 8 * vg.Millimeter

// margin is the space left at the right edge of a figure after its legend.
const margin = 2 * vg.Millimeter

// colorBarWidth is the width of a colour bar, its ticks and label included.
const colorBarWidth = 2.6 * vg.Centimeter

// Save writes p to path, as PNG or SVG after the name's extension, w x h for the plot.
// The legend entries of p go in a column to the right of the axes, where they hide no
// data, and the figure is widened by that column.
func Save(p *plot.Plot, w, h vg.Length, path string) error {
	legend := p.Legend
	width := legendWidth(&legend)
	if width > 0 {
		width += gap + margin
	}
	return save(path, w+width, h, func(dc draw.Canvas) {
		p.Legend = plot.NewLegend() // drawn beside, not inside
		left := draw.Crop(dc, 0, -width, 0, 0)
		p.Draw(left)
		p.Legend = legend
		if width == 0 {
			return
		}
		data := p.DataCanvas(left)
		right := dc
		right.Min.X = left.Max.X + gap
		right.Max.Y = data.Max.Y
		l := legend
		l.Top, l.Left, l.XOffs, l.YOffs = true, true, 0, 0
		l.Draw(right)
	})
}

// SaveWithColorBar writes p to path like Save, with a vertical colour bar of cmap to
// its right, as tall as p's data area, its axis labelled label.
func SaveWithColorBar(p *plot.Plot, cmap palette.ColorMap, label string, w, h vg.Length, path string) error {
	if !(cmap.Max() > cmap.Min()) {
		return fmt.Errorf("figure: colour bar from %g to %g: the range is empty", cmap.Min(), cmap.Max())
	}
	bar := ColorBar(cmap, label)
	return save(path, w+gap+colorBarWidth, h, func(dc draw.Canvas) {
		left := draw.Crop(dc, 0, -(gap + colorBarWidth), 0, 0)
		p.Draw(left)
		want := p.DataCanvas(left)
		right := dc
		right.Min.X = left.Max.X + gap
		right.Min.Y, right.Max.Y = want.Min.Y, want.Max.Y
		// The bar's own axes take some room: stretch its canvas until its data area
		// spans exactly the plot's.
		got := bar.DataCanvas(right)
		right.Min.Y -= got.Min.Y - want.Min.Y
		right.Max.Y += want.Max.Y - got.Max.Y
		bar.Draw(right)
	})
}

// ColorBar returns the plot of a vertical colour bar of cmap, its axis labelled label:
// what SaveWithColorBar draws, for tests to inspect.
func ColorBar(cmap palette.ColorMap, label string) *plot.Plot {
	bar := plot.New()
	bar.Add(&plotter.ColorBar{ColorMap: cmap, Vertical: true})
	bar.HideX()
	bar.X.Padding = 0
	bar.Y.Padding = 0
	bar.Y.Label.Text = label
	bar.Y.Tick.Marker = LinearTicks{}
	return bar
}

// legendWidth returns the width the entries of l take, 0 for none.
func legendWidth(l *plot.Legend) vg.Length {
	r := l.Rectangle(draw.Canvas{})
	return r.Max.X - r.Min.X
}

// save creates a w x h canvas of the format path names, lets draw fill it and writes it.
func save(path string, w, h vg.Length, drawFn func(draw.Canvas)) error {
	format := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	if format != "png" && format != "svg" {
		return fmt.Errorf("%w: %q", ErrFormat, path)
	}
	c, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return fmt.Errorf("figure: %s: %w", path, err)
	}
	drawFn(draw.New(c))
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("figure: %w", err)
	}
	if _, err := c.WriteTo(f); err != nil {
		_ = f.Close() // the write error is the one to report
		return fmt.Errorf("figure: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("figure: writing %s: %w", path, err)
	}
	return nil
}
