package memexp

import (
	"fmt"
	"strings"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/stats"
)

// Statistic selects which order statistic of the repeated timings is
// reported as the time of an operation. Both are computed by package stats,
// so that they mean the same in every ibis-bench experiment.
type Statistic int

const (
	// StatLowerSextile is the value one sixth of the way up the sorted
	// timings (stats.LowerSextile): on a shared machine most disturbances
	// only ever make an operation slower, so a low order statistic is
	// closest to its undisturbed cost while still not being a lucky
	// minimum. It is the test time of the message-passing micro-benchmark
	// suite that ibis-bench follows.
	StatLowerSextile Statistic = iota
	// StatMedian is the middle of the sorted timings (stats.Median).
	StatMedian
)

// String returns the name ParseStatistic accepts.
func (s Statistic) String() string {
	switch s {
	case StatLowerSextile:
		return "sextile"
	case StatMedian:
		return "median"
	}
	return fmt.Sprintf("Statistic(%d)", int(s))
}

func (s Statistic) valid() bool { return s == StatLowerSextile || s == StatMedian }

// ParseStatistic turns "sextile" (or "lower-sextile") and "median" into a
// Statistic, for a command-line flag.
func ParseStatistic(name string) (Statistic, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "sextile", "lower-sextile":
		return StatLowerSextile, nil
	case "median":
		return StatMedian, nil
	}
	return 0, fmt.Errorf("%w: statistic %q, want sextile or median", ErrInvalid, name)
}

// of picks the statistic out of a summary.
func (s Statistic) of(sum stats.Summary) float64 {
	if s == StatMedian {
		return sum.Median
	}
	return sum.LowerSextile
}
