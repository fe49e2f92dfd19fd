package figure

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// minLabels is the fewest labelled ticks an axis gets from the markers of this package.
const minLabels = 2

// LogTicks marks a log axis. It labels the powers of ten when the range holds at least
// three of them; on a shorter range 1, 2 and 5 times a power of ten, then every
// mantissa 1 to 9, and on a range too short for those the linear ticks; the other
// mantissas are minor ticks. gonum's own LogTicks labels the powers of ten only, so a
// range such as 8 to 60 µs got a single label.
type LogTicks struct{}

var _ plot.Ticker = LogTicks{}

// Ticks returns the ticks between lo and hi.
func (LogTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return LinearTicks{}.Ticks(lo, hi) // not a range a log axis can show
	}
	for _, labelled := range [][]int{{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		need := minLabels
		if len(labelled) == 1 {
			need = 3 // decades alone read well only when there are a few of them
		}
		if ticks, n := logTicks(lo, hi, labelled); n >= need {
			return ticks
		}
	}
	return LinearTicks{}.Ticks(lo, hi)
}

// logTicks returns the ticks m·10^e within [lo, hi] for m = 1..9, labelling the mantissas
// in labelled, and how many it labelled.
func logTicks(lo, hi float64, labelled []int) ([]plot.Tick, int) {
	var ticks []plot.Tick
	n := 0
	for e := int(math.Floor(math.Log10(lo))) - 1; e <= int(math.Ceil(math.Log10(hi)))+1; e++ {
		for m := 1; m <= 9; m++ {
			v := decimal(m, e)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			for _, l := range labelled {
				if l == m {
					t.Label = Number(v)
					n++
				}
			}
			ticks = append(ticks, t)
		}
	}
	return ticks, n
}

// decimal returns m·10^e as the float64 nearest to it (3·10^-1 is 0.3, not 0.30000000000000004).
func decimal(m, e int) float64 {
	v, _ := strconv.ParseFloat(strconv.Itoa(m)+"e"+strconv.Itoa(e), 64)
	return v
}

// LinearTicks marks a linear axis with labels at round values, 1, 2 or 5 times a power of
// ten apart, about five of them (gonum's default ticks gave 0.05, 0.25, 0.45), minor
// ticks between; a range too narrow for two round labels gets its ends labelled.
type LinearTicks struct{}

var _ plot.Ticker = LinearTicks{}

// linearLabels is about how many labels LinearTicks aims at.
const linearLabels = 5

// Ticks returns the ticks between lo and hi.
func (LinearTicks) Ticks(lo, hi float64) []plot.Tick {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || hi < lo {
		return nil
	}
	if hi == lo {
		return []plot.Tick{{Value: lo, Label: Number(lo)}}
	}
	// The step is m·10^e; a tick is k minor steps (of m·10^e/minors) from zero.
	raw := (hi - lo) / linearLabels
	e := int(math.Floor(math.Log10(raw)))
	m, minors := 1, 5
	switch f := raw / math.Pow10(e); {
	case f >= 7.5:
		e++
	case f >= 3.5:
		m = 5
	case f >= 1.5:
		m, minors = 2, 4
	}
	// Minor step m·10^e/minors written as mm·10^ee with an integer mm.
	mm, ee := m*10/minors, e-1
	if m*10%minors != 0 {
		mm, ee = m*100/minors, e-2
	}
	first := int64(math.Ceil(lo/decimal(mm, ee) - 1e-9))
	last := int64(math.Floor(hi/decimal(mm, ee) + 1e-9))
	if last-first > 10000 { // cannot happen for a finite range; a guard all the same
		return []plot.Tick{{Value: lo, Label: Number(lo)}, {Value: hi, Label: Number(hi)}}
	}
	var ticks []plot.Tick
	n := 0
	for k := first; k <= last; k++ {
		v := decimalInt(k*int64(mm), ee)
		if v < lo || v > hi {
			continue
		}
		t := plot.Tick{Value: v}
		if k%int64(minors) == 0 {
			t.Label = Number(v)
			n++
		}
		ticks = append(ticks, t)
	}
	if n >= minLabels {
		return ticks
	}
	return []plot.Tick{{Value: lo, Label: Number(lo)}, {Value: hi, Label: Number(hi)}}
}

// decimalInt returns k·10^e as the float64 nearest to it.
func decimalInt(k int64, e int) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatInt(k, 10)+"e"+strconv.Itoa(e), 64)
	return v
}

// Number formats a tick value: plainly from 0.0001 to under a million (with at most
// four significant digits), as 1e6, 2.5e-5 beyond.
func Number(v float64) string {
	if v == 0 {
		return "0"
	}
	if a := math.Abs(v); a >= 1e-4 && a < 1e6 {
		return strconv.FormatFloat(roundSig(v, 4), 'f', -1, 64)
	}
	s := strconv.FormatFloat(roundSig(v, 4), 'e', -1, 64) // 1e+06, 2.5e-05
	mant, exp, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(exp)
	return mant + "e" + strconv.Itoa(e)
}

// roundSig rounds v to sig significant digits, so that a tick at 0.30000000000000004
// reads 0.3.
func roundSig(v float64, sig int) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', sig, 64), 64)
	return r
}

// Labels returns the labels an axis shows: those of its marker's ticks within its range.
// Tests use it to see that a plot's axes are readable without looking at pixels.
func Labels(a *plot.Axis) []string {
	var out []string
	for _, t := range a.Tick.Marker.Ticks(a.Min, a.Max) {
		if t.Label != "" && t.Value >= a.Min && t.Value <= a.Max {
			out = append(out, t.Label)
		}
	}
	return out
}
