// Package phases adds up where one process of a parallel run spends its time, phase by
// phase (computing, exchanging, reducing), and prints the spread over the ranks, so that a
// run that scales less than it should shows where the missing cores went.
//
// A Clock costs one time.Now per phase change; it is always on and printed on demand.
package phases

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Clock accumulates wall time per phase; a Clock is used by one goroutine. A nil Clock
// times nothing, so code that is also run untimed (tests, sequential checks) needs none.
type Clock struct {
	names []string
	sums  []time.Duration
	cur   int
	since time.Time
	on    bool
}

// New returns a stopped Clock over the named phases; phase i is names[i].
func New(names ...string) *Clock {
	return &Clock{names: names, sums: make([]time.Duration, len(names))}
}

// Start starts timing phase i.
func (c *Clock) Start(i int) {
	if c == nil {
		return
	}
	c.cur, c.since, c.on = i, time.Now(), true
}

// Enter ends the running phase and starts phase i; it returns the phase it ended, so that
// a caller can go back to it. A stopped Clock only remembers i.
func (c *Clock) Enter(i int) (was int) {
	if c == nil {
		return i
	}
	was = c.cur
	if c.on {
		now := time.Now()
		c.sums[c.cur] += now.Sub(c.since)
		c.since = now
	}
	c.cur = i
	return was
}

// Stop ends the running phase.
func (c *Clock) Stop() {
	if c != nil && c.on {
		c.sums[c.cur] += time.Since(c.since)
		c.on = false
	}
}

// Seconds returns the time of each phase, in the order of the names.
func (c *Clock) Seconds() []float64 {
	out := make([]float64, len(c.sums))
	for i, d := range c.sums {
		out[i] = d.Seconds()
	}
	return out
}

// Names returns the phases' names.
func (c *Clock) Names() []string { return c.names }

// Print writes, for a run of wall seconds, one line per phase with the minimum, mean and
// maximum over the ranks and the mean's share of the wall time, under prefix:
//
//	PREFIX-phase name=exchange min=0.012 mean=0.015 max=0.020 share=0.041
//
// perRank[r] is rank r's Seconds. Ranks whose row is shorter than names are refused.
func Print(w io.Writer, prefix string, names []string, perRank [][]float64, wall float64) error {
	if len(perRank) == 0 {
		return fmt.Errorf("phases: no ranks to print")
	}
	for r, row := range perRank {
		if len(row) < len(names) {
			return fmt.Errorf("phases: rank %d has %d phases, want %d", r, len(row), len(names))
		}
	}
	var b strings.Builder
	for i, name := range names {
		lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
		for _, row := range perRank {
			lo, hi, sum = math.Min(lo, row[i]), math.Max(hi, row[i]), sum+row[i]
		}
		mean := sum / float64(len(perRank))
		share := 0.0
		if wall > 0 {
			share = mean / wall
		}
		fmt.Fprintf(&b, "%s-phase name=%s min=%.6f mean=%.6f max=%.6f share=%.4f\n", prefix, name, lo, mean, hi, share)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
