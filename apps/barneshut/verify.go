package main

import (
	"math"
	"slices"
)

// accuracy is the result of comparing tree accelerations with direct summation.
type accuracy struct {
	sampled          int
	median, p99, rms float64 // relative errors |a_tree - a_direct| / |a_direct|
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

// checkAccuracy compares s.acc (from the tree) of the bodies idx with direct summation.
func checkAccuracy(s *system, eps float64, idx []int) accuracy {
	errs := make([]float64, len(idx))
	var sq float64
	for j, i := range idx {
		d := s.direct(i, eps)
		a := s.acc[i]
		num := math.Sqrt((a[0]-d[0])*(a[0]-d[0]) + (a[1]-d[1])*(a[1]-d[1]) + (a[2]-d[2])*(a[2]-d[2]))
		den := math.Sqrt(d[0]*d[0] + d[1]*d[1] + d[2]*d[2])
		e := 0.0
		if den > 0 {
			e = num / den
		}
		errs[j] = e
		sq += e * e
	}
	slices.Sort(errs)
	return accuracy{
		sampled: len(idx),
		median:  quantile(errs, 0.5),
		p99:     quantile(errs, 0.99),
		rms:     math.Sqrt(sq / float64(len(errs))),
	}
}

// quantile of sorted values, by linear interpolation between the nearest ranks.
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
	return sorted[i] + f*(sorted[i+1]-sorted[i])
}
