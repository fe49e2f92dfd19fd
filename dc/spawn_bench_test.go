package dc_test

import (
	"context"
	"testing"
	"time"

	"github.com/ibisgo/ibis/dc"
)

// fibLoop runs fib(n) times times, in one job, for the benchmarks.
type fibLoop struct{ N, Times int }

var loopKind = dc.Define("test.fibloop", func(c *dc.Ctx, a fibLoop) int64 {
	var s int64
	for range a.Times {
		s += fibKind.Call(c, a.N)
	}
	return s
})

//go:noinline
func fibPlain(n int) int64 {
	if n < 2 {
		return int64(n)
	}
	return fibPlain(n-1) + fibPlain(n-2)
}

// fibCalls is how many calls fib(n) makes.
func fibCalls(n int) int64 {
	if n < 2 {
		return 1
	}
	return 1 + fibCalls(n-1) + fibCalls(n-2)
}

// BenchmarkSpawn compares a spawn that is not stolen (one process: nothing is) with a
// plain function call: fib(20) as spawns and syncs against plain recursion. ns/call is
// the wall time per call of fib, cpu-ns/call the process's CPU time per call (what the
// benchmark itself used, on a machine shared with other work).
func BenchmarkSpawn(b *testing.B) {
	calls := float64(fibCalls(20))
	b.Run("plain", func(b *testing.B) {
		var s int64
		cpu0, ok := cpuTime()
		for b.Loop() {
			s += fibPlain(20)
		}
		reportPerCall(b, calls, cpu0, ok)
	})
	b.Run("spawn", func(b *testing.B) {
		rts := localPool(b, "tcp", 1)
		b.ResetTimer()
		cpu0, ok := cpuTime()
		if _, err := dc.Run(context.Background(), rts[0], loopKind, fibLoop{N: 20, Times: b.N}); err != nil {
			b.Fatal(err)
		}
		reportPerCall(b, calls, cpu0, ok)
	})
}

// reportPerCall reports the wall and CPU time per call of fib since cpu0.
func reportPerCall(b *testing.B, calls float64, cpu0 time.Duration, ok bool) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/calls, "ns/call")
	if cpu1, ok1 := cpuTime(); ok && ok1 {
		b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N)/calls, "cpu-ns/call")
	}
}
