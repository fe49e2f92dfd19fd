package main

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestBurstRates: bursts timed at a known bandwidth, with one-sided noise and
// outliers, must give that bandwidth back from the lower sextile.
func TestBurstRates(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const ibisBW, rawBW = 2e9, 4e9 // bytes per second
	const user, total, burst = 100 << 10, 102520, 10
	noisy := func(bw float64) []float64 {
		xs := make([]float64, 90)
		for i := range xs {
			xs[i] = total * burst / bw * (1 + 0.01*rng.ExpFloat64())
			if i%7 == 0 {
				xs[i] *= 4
			}
		}
		return xs
	}
	r, err := burstRates(user, total, burst, noisy(ibisBW), noisy(rawBW))
	if err != nil {
		t.Fatal(err)
	}
	if rel(r.total, ibisBW/1e6) > 0.01 || rel(r.rawTotal, rawBW/1e6) > 0.01 {
		t.Fatalf("total MB/s %v and raw %v, want %v and %v", r.total, r.rawTotal, ibisBW/1e6, rawBW/1e6)
	}
	if rel(r.user, ibisBW/1e6*user/total) > 0.01 || rel(r.ratio, 0.5) > 0.02 {
		t.Fatalf("user MB/s %v, ratio %v", r.user, r.ratio)
	}
	if _, err := burstRates(1, 1, 1, nil, []float64{1}); err == nil {
		t.Fatal("no measurements accepted")
	}
}

func TestThroughputRun(t *testing.T) {
	out, rep := mustRun(t, "throughput", "-size", "8192", "-nodes", "31", "-burst", "2", "-reps", "4", "-min-batch", "0")
	for _, want := range []string{"8 KB []byte", "8 KB []int32", "8 KB []int64", "8 KB []float64",
		"31-node tree user", "31-node tree total", "latency", "Ibis/raw"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	v := rep["values"].(map[string]any)["throughput"].(map[string]any)
	for _, k := range []string{"bytes_mbps", "float64_raw_mbps", "tree_user_mbps", "tree_total_mbps", "latency_seconds"} {
		if x, ok := v[k].(float64); !ok || x <= 0 {
			t.Errorf("%s = %v", k, v[k])
		}
	}
	if v["tree_total_mbps"].(float64) <= v["tree_user_mbps"].(float64) {
		t.Errorf("tree total %v not above user %v", v["tree_total_mbps"], v["tree_user_mbps"])
	}
}
