package stats

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// LowerSextile returns the value one sixth of the way up the sorted measurements
// (the element at index floor((n-1)/6)), the test time of the suite: it ignores the
// slow outliers a busy machine adds without being as optimistic as the minimum.
// xs is not modified.
func LowerSextile(xs []float64) (float64, error) {
	return Quantile(xs, 1.0/6)
}

// Median returns the middle value of the sorted measurements (the lower of the two
// middle ones for an even count, so that it is always a measured value).
func Median(xs []float64) (float64, error) {
	return Quantile(xs, 0.5)
}

// Quantile returns the element at index floor((n-1)*q) of the sorted measurements,
// for q in [0, 1]; xs is not modified.
func Quantile(xs []float64, q float64) (float64, error) {
	if len(xs) == 0 {
		return 0, ErrNoData
	}
	if !(q >= 0 && q <= 1) {
		return 0, fmt.Errorf("stats: quantile %v is outside [0, 1]", q)
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[int(math.Floor(float64(len(s)-1)*q))], nil
}

// Seconds converts durations to float seconds, the unit the fits work in.
func Seconds(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = d.Seconds()
	}
	return out
}

// Summary is the usual description of one set of measurements.
type Summary struct {
	N                         int
	Min, LowerSextile, Median float64
	Max                       float64
}

// Summarize describes a set of measurements.
func Summarize(xs []float64) (Summary, error) {
	if len(xs) == 0 {
		return Summary{}, ErrNoData
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(q float64) float64 { return s[int(math.Floor(float64(len(s)-1)*q))] }
	return Summary{N: len(s), Min: s[0], LowerSextile: at(1.0 / 6), Median: at(0.5), Max: s[len(s)-1]}, nil
}
