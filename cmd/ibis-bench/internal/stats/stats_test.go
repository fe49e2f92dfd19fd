package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestLowerSextile(t *testing.T) {
	// 1..12 shuffled: index floor(11/6) = 1 of the sorted values is 2.
	xs := []float64{7, 3, 12, 1, 9, 2, 11, 4, 8, 6, 10, 5}
	got, err := LowerSextile(xs)
	if err != nil || got != 2 {
		t.Fatalf("LowerSextile = %v, %v; want 2", got, err)
	}
	if xs[0] != 7 {
		t.Fatal("LowerSextile sorted its input in place")
	}
	med, _ := Median(xs)
	if med != 6 {
		t.Fatalf("Median = %v, want 6", med)
	}
	if _, err := LowerSextile(nil); !errors.Is(err, ErrNoData) {
		t.Fatalf("empty input: %v, want ErrNoData", err)
	}
	if _, err := Quantile(xs, 1.5); err == nil {
		t.Fatal("quantile 1.5 accepted")
	}
}

// TestLowerSextileIgnoresOutliers: a known base time with a few large outliers (what
// a busy machine adds) must come back exactly, where the mean would not.
func TestLowerSextileIgnoresOutliers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const base = 20e-6
	xs := make([]float64, 150)
	for i := range xs {
		xs[i] = base * (1 + 0.01*rng.Float64())
		if i%10 == 0 {
			xs[i] = base * (5 + 10*rng.Float64()) // 10% outliers
		}
	}
	got, _ := LowerSextile(xs)
	if math.Abs(got-base)/base > 0.01 {
		t.Fatalf("LowerSextile = %v, want %v within 1%%", got, base)
	}
	s, err := Summarize(xs)
	if err != nil || s.N != 150 || s.LowerSextile != got || s.Min > got || s.Max < 5*base {
		t.Fatalf("Summarize = %+v, %v", s, err)
	}
}

func TestFitHockneyExact(t *testing.T) {
	const ts, tb = 25e-6, 1.0 / 1e9 // 25 µs start-up, 1 GB/s
	var n, tt []float64
	for _, size := range []float64{0, 1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576} {
		n = append(n, size)
		tt = append(tt, ts+tb*size)
	}
	h, err := FitHockney(n, tt)
	if err != nil {
		t.Fatal(err)
	}
	if rel(h.Ts, ts) > 1e-9 || rel(h.Tb, tb) > 1e-9 || h.R2 < 0.999999 {
		t.Fatalf("fit %+v, want ts=%v tb=%v", h, ts, tb)
	}
	if rel(h.Bandwidth(), 1e9) > 1e-9 || rel(h.HalfPerformanceLength(), 25e3) > 1e-6 || rel(h.At(1000), ts+1000*tb) > 1e-9 {
		t.Fatalf("derived figures wrong: %v %v", h.Bandwidth(), h.HalfPerformanceLength())
	}
}

// TestFitHockneyNoisy runs the whole pipeline the pingpong experiment uses: many
// noisy measurements per size, the lower sextile per size, then the fit; the known
// parameters must come back within a few percent.
func TestFitHockneyNoisy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const ts, tb = 40e-6, 1.0 / 500e6
	var n, tt []float64
	for size := 1.0; size <= 1<<20; size *= 4 {
		ms := make([]float64, 150)
		for i := range ms {
			v := ts + tb*size
			// Timing noise only ever adds time: jitter of a few percent, and
			// one measurement in eight hit by a large delay.
			ms[i] = v * (1 + 0.03*rng.ExpFloat64())
			if rng.IntN(8) == 0 {
				ms[i] *= 3
			}
		}
		s, _ := LowerSextile(ms)
		n = append(n, size)
		tt = append(tt, s)
	}
	h, err := FitHockney(n, tt)
	if err != nil {
		t.Fatal(err)
	}
	if rel(h.Ts, ts) > 0.05 || rel(h.Tb, tb) > 0.02 {
		t.Fatalf("noisy fit ts=%v tb=%v, want %v %v", h.Ts, h.Tb, ts, tb)
	}
}

// TestFitArrayModel fits the 2-D array model T(N) = c + v*N + e*N*N with its three
// regressors of very different magnitude, as arrays2d does.
func TestFitArrayModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const c, v, e = 30e-6, 0.5e-6, 2e-9
	var x, y []float64
	for N := 128.0; N <= 1024; N += 64 {
		x = append(x, N)
		y = append(y, (c+v*N+e*N*N)*(1+0.002*rng.NormFloat64()))
	}
	f, err := FitLinear(y, x, func(N float64) []float64 { return []float64{1, N, N * N} })
	if err != nil {
		t.Fatal(err)
	}
	if rel(f.Coef[1], v) > 0.05 || rel(f.Coef[2], e) > 0.02 {
		t.Fatalf("coef %v, want v=%v e=%v", f.Coef, v, e)
	}
	if f.R2 < 0.999 || f.RMS <= 0 {
		t.Fatalf("R2 %v RMS %v", f.R2, f.RMS)
	}
}

func TestFitErrors(t *testing.T) {
	if _, err := FitHockney([]float64{1, 2}, []float64{1}); !errors.Is(err, ErrShape) {
		t.Fatalf("mismatched lengths: %v", err)
	}
	if _, err := FitHockney(nil, nil); !errors.Is(err, ErrNoData) {
		t.Fatalf("no data: %v", err)
	}
	if _, err := FitHockney([]float64{5, 5, 5}, []float64{1, 2, 3}); !errors.Is(err, ErrSingular) {
		t.Fatalf("one distinct size: %v", err)
	}
	if _, err := FitHockney([]float64{5}, []float64{1}); !errors.Is(err, ErrSingular) {
		t.Fatalf("one point: %v", err)
	}
	// Collinear regressors: N and 2N.
	_, err := FitLinear([]float64{1, 2, 3}, []float64{1, 2, 3}, func(x float64) []float64 { return []float64{x, 2 * x} })
	if !errors.Is(err, ErrSingular) {
		t.Fatalf("collinear: %v", err)
	}
	if _, err := FitRows([]float64{1}, [][]float64{{}}); !errors.Is(err, ErrShape) {
		t.Fatalf("no regressors: %v", err)
	}
}

func rel(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }
