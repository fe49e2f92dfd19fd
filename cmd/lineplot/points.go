package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// series is one line of the plot: the y values measured at each x, in input order of
// the series and sorted by x.
type series struct {
	name string
	xs   []float64
	ys   map[float64][]float64
}

// readPoints reads "SERIES X Y" lines into series, in the order each first appears.
func readPoints(r io.Reader) ([]*series, error) {
	var out []*series
	byName := map[string]*series{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("%w: line %d: %q: want SERIES X Y", errInput, n, line)
		}
		x, err1 := strconv.ParseFloat(f[1], 64)
		y, err2 := strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil || math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
			return nil, fmt.Errorf("%w: line %d: %q: X and Y must be finite numbers", errInput, n, line)
		}
		s := byName[f[0]]
		if s == nil {
			s = &series{name: f[0], ys: map[float64][]float64{}}
			byName[f[0]] = s
			out = append(out, s)
		}
		if _, ok := s.ys[x]; !ok {
			s.xs = append(s.xs, x)
		}
		s.ys[x] = append(s.ys[x], y)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("lineplot: reading: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no points", errInput)
	}
	for _, s := range out {
		slices.Sort(s.xs)
	}
	return out, nil
}

// spread returns the least, the median and the greatest of ys (not empty).
func spread(ys []float64) (lo, med, hi float64) {
	v := slices.Clone(ys)
	slices.Sort(v)
	m := len(v)
	med = v[m/2]
	if m%2 == 0 {
		med = (v[m/2-1] + v[m/2]) / 2
	}
	return v[0], med, v[m-1]
}

// sortedFloats returns the keys of m in order.
func sortedFloats(m map[float64]bool) []float64 {
	out := make([]float64, 0, len(m))
	for x := range m {
		out = append(out, x)
	}
	slices.Sort(out)
	return out
}
