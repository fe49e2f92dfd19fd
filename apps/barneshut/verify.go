package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// errNonFinite: a body -verify compares has a NaN or infinite acceleration, the tree's or
// direct summation's (bodies so far apart that their distances overflow, say). Its error
// cannot be measured, and counting it as 0 would pass a broken run, so -verify fails.
var errNonFinite = errors.New("non-finite forces")

// accuracy is the result of comparing tree accelerations with direct summation.
type accuracy struct {
	sampled          int
	median, p99, rms float64 // relative errors |a_tree - a_direct| / |a_direct|, +Inf for nonFinite
	nonFinite        []int   // the bodies compared whose tree or direct acceleration is not finite
}

// err is why -verify fails (wrapping errNonFinite, naming the bodies), nil when it passes
// or did not run (a nil a).
func (a *accuracy) err() error {
	if a == nil || len(a.nonFinite) == 0 {
		return nil
	}
	const shown = 10
	ids := make([]string, 0, shown)
	for _, i := range a.nonFinite[:min(len(a.nonFinite), shown)] {
		ids = append(ids, fmt.Sprint(i))
	}
	if len(a.nonFinite) > shown {
		ids = append(ids, "...")
	}
	return fmt.Errorf("verify: %w: %d of the %d bodies compared have a NaN or infinite acceleration, from the tree or direct summation (bodies %s)",
		errNonFinite, len(a.nonFinite), a.sampled, strings.Join(ids, ", "))
}

// minSample is how many bodies -verify compares at least (all of them when there are fewer).
const minSample = 1000

// sample returns the bodies -verify compares: all of them up to minSample, else minSample
// bodies evenly spread over the body order.
func sample(n int) []int {
	k := min(n, minSample)
	idx := make([]int, k)
	for j := range k {
		idx[j] = int(int64(j) * int64(n) / int64(k))
	}
	return idx
}

// checkAccuracy compares s.acc (from the tree) of the bodies idx with direct summation. A
// body with a non-finite acceleration on either side goes into nonFinite with an error of
// +Inf, so that the statistics show it rather than hide it.
func checkAccuracy(s *system, eps float64, idx []int) accuracy {
	errs := make([]float64, len(idx))
	var sq float64
	var bad []int
	for j, i := range idx {
		d := s.direct(i, eps)
		a := s.acc[i]
		num := math.Sqrt((a[0]-d[0])*(a[0]-d[0]) + (a[1]-d[1])*(a[1]-d[1]) + (a[2]-d[2])*(a[2]-d[2]))
		den := math.Sqrt(d[0]*d[0] + d[1]*d[1] + d[2]*d[2])
		e := 0.0
		switch {
		case !finite(a) || !finite(d):
			e = math.Inf(1)
			bad = append(bad, i)
		case den > 0:
			e = num / den
		}
		errs[j] = e
		sq += e * e
	}
	slices.Sort(errs)
	return accuracy{
		sampled:   len(idx),
		median:    quantile(errs, 0.5),
		p99:       quantile(errs, 0.99),
		rms:       math.Sqrt(sq / float64(len(errs))),
		nonFinite: bad,
	}
}

// finite says whether v has no NaN or infinite component.
func finite(v vec) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// quantile of sorted values (+Inf allowed, NaN not), by linear interpolation between the
// nearest ranks.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	f := pos - float64(i)
	lo, hi := sorted[i], sorted[i+1]
	if f == 0 || lo == hi { // no 0*Inf or Inf-Inf (NaN) at an exact rank or between two +Inf
		return lo
	}
	return lo + f*(hi-lo)
}
