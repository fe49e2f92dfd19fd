// Command lineplot draws one line per series through the medians of repeated measurements,
// for figures such as run time against wide-area latency (scripts/grid-bench.sh):
//
//	lineplot -o latency.png [-title T] [-x LABEL] [-y LABEL] [FILE ...]
//
// The points come from the files named, one after the other, or from stdin when none is
// (or from "-").
//
// Each input line is "SERIES X Y [anything]"; several lines of one (series, x) are
// repetitions, and the point drawn is their median, with the least and the greatest as an
// error bar, so that a noisy machine's spread shows. Lines starting with # and blank lines
// are skipped. The x axis labels the x values measured; the legend stands beside the axes.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/ibisgo/ibis/internal/figure"
)

// errInput marks input that is not "SERIES X Y" lines.
var errInput = errors.New("lineplot: bad input")

func main() {
	out := flag.String("o", "lines.png", "the plot to write (`FILE`.png or .svg)")
	title := flag.String("title", "", "the plot's title")
	xlabel := flag.String("x", "x", "the x axis's label")
	ylabel := flag.String("y", "y", "the y axis's label")
	flag.Parse()
	if err := run(flag.Args(), os.Stdin, *out, *title, *xlabel, *ylabel); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run reads the points from files (stdin when there are none) and writes the
// plot to out, once it knows out is a file it can write.
func run(files []string, stdin io.Reader, out, title, xlabel, ylabel string) error {
	ext := strings.ToLower(filepath.Ext(out))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("lineplot: -o %q: want a .png or .svg file", out)
	}
	in, err := figure.ReadInput(files, stdin)
	if err != nil {
		return fmt.Errorf("lineplot: %w", err)
	}
	series, err := readPoints(bytes.NewReader(in))
	if err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	var args []any
	xs := map[float64]bool{}
	for i, s := range series {
		pts := make(plotter.XYs, len(s.xs))
		bars := make(plotter.YErrors, len(s.xs))
		for i, x := range s.xs {
			lo, med, hi := spread(s.ys[x])
			pts[i] = plotter.XY{X: x, Y: med}
			bars[i].Low, bars[i].High = med-lo, hi-med
			xs[x] = true
		}
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{pts, bars})
		if err != nil {
			return fmt.Errorf("lineplot: %s: %w", s.name, err)
		}
		eb.Color = plotutil.Color(i) // the series' own, as AddLinePoints gives its line
		p.Add(eb)
		args = append(args, s.name, pts)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return fmt.Errorf("lineplot: %w", err)
	}
	p.X.Tick.Marker = valueTicks(xs)
	p.Y.Tick.Marker = figure.LinearTicks{}
	p.Y.Min = 0
	if err := figure.Save(p, 14*vg.Centimeter, 10*vg.Centimeter, out); err != nil {
		return fmt.Errorf("lineplot: writing %s: %w", out, err)
	}
	return nil
}

// valueTicks labels the x values measured; with more than fit, linear ticks.
func valueTicks(xs map[float64]bool) plot.Ticker {
	if len(xs) > 10 {
		return figure.LinearTicks{}
	}
	ticks := make(plot.ConstantTicks, 0, len(xs))
	for _, x := range sortedFloats(xs) {
		ticks = append(ticks, plot.Tick{Value: x, Label: figure.Number(x)})
	}
	return ticks
}
