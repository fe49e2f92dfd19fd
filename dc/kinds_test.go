package dc_test

import "github.com/ibisgo/ibis/dc"

// The kinds of job the tests run.
var (
	fibKind *dc.Kind[int, int64]
	sumKind *dc.Kind[[]int, int64]
)

func init() {
	fibKind = dc.Define("test.fib", fibJob)
	sumKind = dc.Define("test.sum", sumJob)
}

func fibJob(c *dc.Ctx, n int) int64 {
	if n < 2 {
		return int64(n)
	}
	a := fibKind.Spawn(c, n-1)
	b := fibKind.Spawn(c, n-2)
	c.Sync()
	return a.Value() + b.Value()
}

// sumJob adds a slice by halves: its arguments and results carry data when stolen.
func sumJob(c *dc.Ctx, xs []int) int64 {
	if len(xs) <= 8 {
		var s int64
		for _, x := range xs {
			s += int64(x)
		}
		return s
	}
	a := sumKind.Spawn(c, xs[:len(xs)/2])
	b := sumKind.Spawn(c, xs[len(xs)/2:])
	c.Sync()
	return a.Value() + b.Value()
}

func fibSeq(n int) int64 {
	if n < 2 {
		return int64(n)
	}
	return fibSeq(n-1) + fibSeq(n-2)
}

// mixedKind spawns jobs of three kinds in turn, so that the worker's task slots change
// kind from one spawn to the next (the slots trade tasks; see recycle.go).
var mixedKind *dc.Kind[int, int64]

func init() { mixedKind = dc.Define("test.mixed", mixedJob) }

func mixedJob(c *dc.Ctx, n int) int64 {
	if n < 2 {
		return int64(n)
	}
	xs := make([]int, n)
	for i := range xs {
		xs[i] = i
	}
	a := fibKind.Spawn(c, n-1)
	s := sumKind.Spawn(c, xs)
	m := mixedKind.Spawn(c, n-2)
	c.Sync()
	return a.Value() + s.Value() + m.Value()
}

// mixedSeq is mixedKind's result, computed sequentially.
func mixedSeq(n int) int64 {
	if n < 2 {
		return int64(n)
	}
	return fibSeq(n-1) + int64(n*(n-1)/2) + mixedSeq(n-2)
}
