// Command speedplot draws a speedup plot (speedup against processes, one line per
// implementation, with the ideal line) from timing lines, for the application benchmarks
// (apps/barneshut/bench.sh, apps/sor/bench.sh): the figures of the thesis's chapter 6
// for the machine at hand.
//
//	speedplot -o speedup.png [-title T] [FILE ...]
//
// The timings come from the files named, one after the other, or from stdin when none is
// (or from "-").
//
// Each input line is "IMPLEMENTATION PROCESSES SECONDS [anything]"; several lines of one
// (implementation, processes) are repetitions and the best (least) time counts. The
// speedup of a point is the implementation's best time on one process over the point's.
// Lines starting with # and blank lines are skipped. The process axis labels the counts
// measured; the legend stands to the right of the axes, clear of the curves.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/ibisgo/ibis/internal/figure"
)

// errInput marks a line that is not "IMPLEMENTATION PROCESSES SECONDS".
var errInput = errors.New("speedplot: bad input")

func main() {
	out := flag.String("o", "speedup.png", "the plot to write (`FILE`.png or .svg)")
	title := flag.String("title", "Speedup", "the plot's title")
	flag.Parse()
	if err := run(flag.Args(), os.Stdin, *out, *title); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run reads the timings from files (stdin when there are none) and writes the
// plot to out, once it knows out is a file it can write.
func run(files []string, stdin io.Reader, out, title string) error {
	ext := strings.ToLower(filepath.Ext(out))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("speedplot: -o %q: want a .png or .svg file", out)
	}
	in, err := figure.ReadInput(files, stdin)
	if err != nil {
		return fmt.Errorf("speedplot: %w", err)
	}
	best, err := readTimings(bytes.NewReader(in))
	if err != nil {
		return err
	}
	p, err := speedupPlot(best, title)
	if err != nil {
		return err
	}
	// The legend goes beside the axes: inside, it covered the curves where they end.
	if err := figure.Save(p, 14*vg.Centimeter, 10*vg.Centimeter, out); err != nil {
		return fmt.Errorf("speedplot: writing %s: %w", out, err)
	}
	return nil
}

// speedupPlot draws the speedup curves of the best times, and the ideal line.
func speedupPlot(best map[string]map[int]float64, title string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "processes"
	p.Y.Label.Text = "speedup over one process"
	maxP := 1
	var args []any
	counts := map[int]bool{}
	for _, impl := range sortedKeys(best) {
		one, ok := best[impl][1]
		if !ok {
			return nil, fmt.Errorf("%w: %s has no time on one process to compare with", errInput, impl)
		}
		var pts plotter.XYs
		for _, procs := range sortedKeys(best[impl]) {
			pts = append(pts, plotter.XY{X: float64(procs), Y: one / best[impl][procs]})
			maxP = max(maxP, procs)
			counts[procs] = true
		}
		args = append(args, impl, pts)
	}
	ideal := plotter.XYs{{X: 1, Y: 1}, {X: float64(maxP), Y: float64(maxP)}}
	args = append(args, "ideal", ideal)
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return nil, fmt.Errorf("speedplot: %w", err)
	}
	p.X.Tick.Marker = processTicks(sortedKeys(counts))
	p.Y.Tick.Marker = figure.LinearTicks{}
	return p, nil
}

// processTicks labels the process counts measured (gonum's default ticks put 1.5
// processes between 1 and 2); with more counts than fit, the default linear ticks.
func processTicks(counts []int) plot.Ticker {
	if len(counts) > 8 {
		return figure.LinearTicks{}
	}
	ticks := make(plot.ConstantTicks, len(counts))
	for i, c := range counts {
		ticks[i] = plot.Tick{Value: float64(c), Label: strconv.Itoa(c)}
	}
	return ticks
}

// readTimings returns the best time of every (implementation, processes).
func readTimings(r io.Reader) (map[string]map[int]float64, error) {
	best := map[string]map[int]float64{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("%w: line %d: %q: want IMPLEMENTATION PROCESSES SECONDS", errInput, n, line)
		}
		procs, err1 := strconv.Atoi(f[1])
		secs, err2 := strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil || procs < 1 || !(secs > 0) {
			return nil, fmt.Errorf("%w: line %d: %q: want a process count of at least 1 and a positive time", errInput, n, line)
		}
		if best[f[0]] == nil {
			best[f[0]] = map[int]float64{}
		}
		if old, ok := best[f[0]][procs]; !ok || secs < old {
			best[f[0]][procs] = secs
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("speedplot: reading: %w", err)
	}
	if len(best) == 0 {
		return nil, fmt.Errorf("%w: no timings", errInput)
	}
	return best, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[K int | string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}
