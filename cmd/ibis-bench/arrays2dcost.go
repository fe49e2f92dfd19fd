package main

import (
	"fmt"
	"math"
)

// A fitted cost (seconds per element or per row) is the slope of a least-squares line, and
// on a busy machine a small one can come out below zero: a slope is noise, not a cost, when
// it lies within twice its standard error of zero, and a model that does not fit the times
// when it lies further below zero. The parameter table says which instead of printing a
// negative cost.

// cost is a fitted per-element or per-row cost and its standard error, in seconds.
type cost struct{ v, se float64 }

// meaningful tells whether the cost is clearly above zero (more than two standard errors).
func (c cost) meaningful() bool { return c.v > 2*c.se }

// String prints the cost in ns with its standard error, or "n/a" and why.
func (c cost) String() string {
	switch {
	case math.IsNaN(c.se):
		return fmt.Sprintf("%.4g ns (no error estimate: too few N)", c.v*1e9)
	case c.meaningful():
		return fmt.Sprintf("%.4g ns ± %.2g", c.v*1e9, c.se*1e9)
	case c.v < -2*c.se:
		return fmt.Sprintf("n/a (%.3g ± %.2g ns: below zero, the model does not fit these times)", c.v*1e9, c.se*1e9)
	}
	return fmt.Sprintf("n/a (%.3g ± %.2g ns: within the noise)", c.v*1e9, c.se*1e9)
}

// slopeSE is the standard error of the slope b of the fit y = a + b*u with the given
// coefficients: sqrt(residual variance / sum (u - mean u)^2); NaN with fewer than three
// points.
func slopeSE(y, u []float64, a, b float64) float64 {
	n := len(u)
	if n < 3 {
		return math.NaN()
	}
	var mean float64
	for _, v := range u {
		mean += v
	}
	mean /= float64(n)
	var ssRes, ssU float64
	for i := range u {
		r := y[i] - a - b*u[i]
		ssRes += r * r
		ssU += (u[i] - mean) * (u[i] - mean)
	}
	if ssU == 0 {
		return math.NaN()
	}
	return math.Sqrt(ssRes / float64(n-2) / ssU)
}
