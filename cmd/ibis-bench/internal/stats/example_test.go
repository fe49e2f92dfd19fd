package stats_test

import (
	"fmt"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/stats"
)

// The pingpong pipeline: the test time of each size is the lower sextile of its
// measurements, and the Hockney model is fitted to those.
func Example() {
	sizes := []float64{0, 1024, 4096, 16384}
	var times []float64
	for _, n := range sizes {
		base := 10e-6 + n*0.5e-9 // 10 µs start-up, 2 GB/s
		ms := []float64{base * 1.3, base, base * 1.01, base * 5, base * 1.02, base * 1.2, base * 1.1}
		t, _ := stats.LowerSextile(ms)
		times = append(times, t)
	}
	h, _ := stats.FitHockney(sizes, times)
	fmt.Printf("ts = %.1f µs, 1/tb = %.0f MB/s\n", h.Ts*1e6, h.Bandwidth()/1e6)
	// Output: ts = 10.1 µs, 1/tb = 1980 MB/s
}
