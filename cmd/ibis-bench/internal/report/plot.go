package report

import (
	"fmt"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/ibisgo/ibis/internal/figure"
)

// Size of a saved figure.
const (
	plotWidth  = 16 * vg.Centimeter
	plotHeight = 10 * vg.Centimeter
)

// PlotPaths returns the files SavePlot writes for n plots: path itself for the first
// (the main figure), name-2.ext, name-3.ext, ... for the others.
func PlotPaths(path string, n int) []string {
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(path, ext)
	out := make([]string, n)
	for i := range out {
		out[i] = path
		if i > 0 {
			out[i] = fmt.Sprintf("%s-%d%s", base, i+1, ext)
		}
	}
	return out
}

// SavePlot draws every plot of the report with gonum/plot (.png or .svg): the first to
// path, the others to the names PlotPaths gives. It returns the files written, in the
// order of the plots, also those written before an error.
func (r *Report) SavePlot(path string) ([]string, error) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".png" && ext != ".svg" {
		return nil, fmt.Errorf("%w: %q (use .png or .svg)", ErrFormat, path)
	}
	if len(r.Plots) == 0 {
		return nil, fmt.Errorf("%w: %s produces no curves", ErrNoPlot, r.Command)
	}
	var written []string
	for i, name := range PlotPaths(path, len(r.Plots)) {
		p, err := r.Plots[i].render()
		if err != nil {
			return written, err
		}
		if err := figure.Save(p, plotWidth, plotHeight, name); err != nil {
			return written, fmt.Errorf("report: saving %s: %w", name, err)
		}
		written = append(written, name)
	}
	return written, nil
}

// render builds the gonum plot; figure.Save puts its legend beside the axes. Points that a log axis cannot show (zero or
// negative) are left out of that curve rather than failing the whole figure.
func (pl *Plot) render() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pl.Title
	p.X.Label.Text = pl.XLabel
	p.Y.Label.Text = pl.YLabel
	p.X.Tick.Marker = figure.LinearTicks{}
	p.Y.Tick.Marker = figure.LinearTicks{}
	if pl.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = figure.LogTicks{}
	}
	if pl.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = figure.LogTicks{}
	}
	p.Add(plotter.NewGrid())
	drawn := 0
	for i, s := range pl.Series {
		var xys plotter.XYs
		for j := range min(len(s.X), len(s.Y)) {
			x, y := s.X[j], s.Y[j]
			if (pl.LogX && !(x > 0)) || (pl.LogY && !(y > 0)) || x != x || y != y {
				continue
			}
			xys = append(xys, plotter.XY{X: x, Y: y})
		}
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("report: plotting %q: %w", s.Name, err)
		}
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i)
		points.Color = plotutil.Color(i)
		points.Shape = plotutil.Shape(i)
		points.Radius = vg.Points(2.5)
		p.Add(line, points)
		p.Legend.Add(s.Name, line, points)
		drawn++
	}
	if drawn == 0 {
		return nil, fmt.Errorf("%w: %q has no drawable points", ErrNoPlot, pl.Title)
	}
	return p, nil
}
