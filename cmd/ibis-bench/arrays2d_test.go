package main

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestArrayModelFit: times made from known model parameters (and a little noise)
// must give t_com, t_ser+t_unser and t_vec back.
func TestArrayModelFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const c, tcom, tser, tvec, rawCom = 20e-6, 0.7e-9, 0.05e-9, 400e-9, 0.65e-9
	ns := []int{128, 256, 384, 512, 640, 768, 896, 1024}
	times := make([][]float64, len(arrayShapes))
	for _, n := range ns {
		N := float64(n)
		noise := func() float64 { return 1 + 0.0005*rng.NormFloat64() }
		times[0] = append(times[0], (c+tcom*N*N)*noise())
		times[1] = append(times[1], (c+tvec*N+(tcom+tser)*N*N)*noise())
		times[2] = append(times[2], (c+(tcom+tser)*N*N)*noise())
		times[3] = append(times[3], (c/2+rawCom*N*N)*noise())
	}
	fit, err := fitArrayModel(ns, times)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]float64{"t_com": tcom, "t_ser+t_unser": tser, "t_vec (per row)": tvec, "raw t_com": rawCom} {
		if rel(fit[k], want) > 0.1 {
			t.Errorf("%s = %v, want %v", k, fit[k], want)
		}
	}
	if rel(fit["t_com / raw t_com"], tcom/rawCom) > 0.01 {
		t.Errorf("ratio %v", fit["t_com / raw t_com"])
	}
	if _, err := fitArrayModel(ns[:2], [][]float64{times[0][:2], times[1][:2], times[2][:2], times[3][:2]}); err == nil {
		t.Error("a three-parameter fit from two points was accepted")
	}
}

// TestArrayCostNoise: a cost whose true value is zero comes out of noisy times as a small
// slope of either sign; the table prints it as n/a (within the noise), never as a negative
// cost, and a clear cost with its standard error. The noise is seeded: the test is fixed.
func TestArrayCostNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const c, tcom = 20e-6, 0.7e-9
	ns := []int{128, 256, 384, 512, 640, 768, 896, 1024}
	negatives, na := 0, 0
	for range 20 {
		times := make([][]float64, len(arrayShapes))
		for _, n := range ns {
			N := float64(n)
			noise := func() float64 { return 1 + 0.02*rng.NormFloat64() }
			// No serialisation cost and no per-row cost: T[N][N] = T[1][N*N] = T[N*N].
			times[0] = append(times[0], (c+tcom*N*N)*noise())
			times[1] = append(times[1], (c+tcom*N*N)*noise())
			times[2] = append(times[2], (c+tcom*N*N)*noise())
			times[3] = append(times[3], (c+tcom*N*N)*noise())
		}
		fit, err := fitArrayModel(ns, times)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"t_ser+t_unser", "t_vec (per row)"} {
			if fit[k] < 0 {
				negatives++
			}
			got := (cost{fit[k], fit[k+" se"]}).String()
			switch {
			case strings.HasPrefix(got, "n/a ("):
				na++
			case strings.HasPrefix(got, "-"):
				t.Errorf("%s = %v ± %v printed as a negative cost: %q", k, fit[k], fit[k+" se"], got)
			}
		}
		if got := (cost{fit["t_com"], fit["t_com se"]}).String(); !strings.HasSuffix(strings.Fields(got)[1], "ns") || strings.HasPrefix(got, "n/a") {
			t.Errorf("t_com printed %q", got)
		}
	}
	// Two standard errors: about 1 in 40 zero costs passes for a positive one by chance.
	if na < 34 {
		t.Errorf("%d of 40 zero costs printed n/a, want nearly all", na)
	}
	if negatives == 0 {
		t.Error("no negative fitted cost in 20 noisy runs: the test does not exercise what it should")
	}
	for _, c := range []struct {
		c    cost
		want string
	}{
		{cost{1e-9, 0.1e-9}, "1 ns ± 0.1"},
		{cost{0.1e-9, 0.1e-9}, "n/a (0.1 ± 0.1 ns: within the noise)"},
		{cost{-0.1e-9, 0.1e-9}, "n/a (-0.1 ± 0.1 ns: within the noise)"},
		{cost{-1e-9, 0.1e-9}, "n/a (-1 ± 0.1 ns: below zero, the model does not fit these times)"},
	} {
		if got := c.c.String(); got != c.want {
			t.Errorf("%v: %q, want %q", c.c, got, c.want)
		}
	}
}

func TestArrays2DRun(t *testing.T) {
	out, rep := mustRun(t, "arrays2d", "-n", "8,16,32,48", "-reps", "3", "-min-batch", "0")
	for _, want := range []string{"t_com", "t_ser+t_unser", "t_vec (per row)", "arrays2d byte", "arrays2d float32", "T[N][N]", "T[1][N*N]"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	model := rep["values"].(map[string]any)["model"].(map[string]any)
	if _, ok := model["float32"].(map[string]any)["t_com"].(float64); !ok {
		t.Errorf("no float32 t_com in %v", model)
	}
}
