package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"time"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/cluster"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/payload"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/stats"
)

func init() {
	register(&command{
		name:    "arrays2d",
		summary: "N*N vector vs N x N and 1 x N*N 2-D slices of float32 and byte: per-element and per-row costs (Table 5.1)",
		setup:   setupArrays2D,
	})
}

type arrays2dFlags struct {
	ns, types string
	reps      int
	minBatch  time.Duration
}

func setupArrays2D(fs *flag.FlagSet) func(ctx context.Context, e *env) (*report.Report, error) {
	var f arrays2dFlags
	fs.StringVar(&f.ns, "n", "128,256,384,512,640,768,896,1024", "array extents N")
	fs.StringVar(&f.types, "types", "byte,float32", "element types: byte, float32")
	fs.IntVar(&f.reps, "reps", 60, "measurements per point (the test time is their lower sextile)")
	fs.DurationVar(&f.minBatch, "min-batch", time.Millisecond, "shortest measurement (small arrays are timed in batches)")
	return func(ctx context.Context, e *env) (*report.Report, error) {
		ns, err := parseInts("n", f.ns)
		if err != nil {
			return nil, err
		}
		for _, n := range ns {
			if n < 1 || 4*n*n > payload.MaxSize {
				return nil, fmt.Errorf("%w: -n %d: N must be at least 1 and 4*N*N at most %d", errUsage, n, payload.MaxSize)
			}
		}
		var elems []arrayElem
		for _, t := range parseList(f.types) {
			el, ok := arrayElems[t]
			if !ok {
				return nil, fmt.Errorf("%w: -types: unknown element type %q (have byte, float32)", errUsage, t)
			}
			elems = append(elems, el)
		}
		if len(elems) == 0 || f.reps < 1 || f.minBatch < 0 {
			return nil, fmt.Errorf("%w: need an element type and -reps of at least 1", errUsage)
		}
		tm := timer{reps: f.reps, minBatch: f.minBatch, warmup: 3}
		return e.runNetwork(ctx, 2, 2, func(ctx context.Context, g *cluster.Group, links []*link) (*report.Report, error) {
			return arrays2d(ctx, e, g, links[0], tm, ns, elems)
		})
	}
}

// arrayElem is an element type of the experiment: its vector and 2-D kinds.
type arrayElem struct {
	name     string
	size     int
	vec, two payload.Kind
}

var arrayElems = map[string]arrayElem{
	"byte":    {"byte", 1, payload.Bytes, payload.Bytes2D},
	"float32": {"float32", 4, payload.Float32, payload.Float322D},
}

// arrayShapes are the three shapes of the text plus the raw socket.
var arrayShapes = []string{"T[N*N] vector", "T[N][N]", "T[1][N*N]", "raw socket N*N*size bytes"}

func arrays2d(ctx context.Context, e *env, g *cluster.Group, l *link, tm timer, ns []int, elems []arrayElem) (*report.Report, error) {
	raw, err := l.dialRaw(ctx)
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	rep := report.New("arrays2d")
	params := &report.Table{
		Title:   "arrays2d: fitted parameters of the model (cf. Table 5.1 of the multidimensional-arrays text); " + describe(g, e),
		Columns: []string{"parameter"},
		Notes: []string{
			"t_com: per element, slope of T[N*N] (a plain vector, no per-row work) against N*N",
			"t_ser+t_unser: per element, slope of T[1][N*N] minus t_com (serialisation work per element of a 2-D slice)",
			"t_vec: per row, slope of T[N][N] - T[1][N*N] against N (serialising and unserialising one row; the model gives both the same per-element term)",
			"ping-pong cannot separate serialisation from unserialisation: the text measured them apart, here they are one sum",
			"raw t_com: per element, the same fit over a plain socket moving N*N*size bytes",
			"± is one standard error of the fit; a cost within two of zero is printed n/a (noise), one further below zero n/a (the model does not fit: rerun on a quieter machine or with more -reps)",
		},
	}
	rows := map[string][]any{}
	order := []string{"t_com", "t_ser+t_unser", "t_vec (per row)", "raw t_com", "t_com / raw t_com"}
	values := map[string]any{}
	total := len(ns) * len(elems)
	step := 0
	for _, el := range elems {
		params.Columns = append(params.Columns, el.name)
		times := make([][]float64, len(arrayShapes)) // one-way seconds per N
		for _, n := range ns {
			step++
			e.Progress("%s N=%d (%d/%d)", el.name, n, step, total)
			size := n * n * el.size
			specs := []payload.Spec{{Kind: el.vec, Size: size}, {Kind: el.two, Size: size, Rows: n}, {Kind: el.two, Size: size, Rows: 1}}
			var ops []func() error
			for _, s := range specs {
				if err := l.verify(ctx, s); err != nil {
					return nil, fmt.Errorf("checking %s: %w", s, err)
				}
				ops = append(ops, func() error { return l.echo(ctx, s) })
			}
			buf := make([]byte, size)
			ops = append(ops, func() error { _, err := raw.RoundTrip(buf, size); return err })
			ms, err := tm.measure(ctx, ops...)
			if err != nil {
				return nil, err
			}
			for i := range ms {
				s, _ := stats.LowerSextile(ms[i])
				times[i] = append(times[i], s/2)
			}
		}
		fit, err := fitArrayModel(ns, times)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", el.name, err)
		}
		for _, k := range order {
			if k == "t_com / raw t_com" {
				com, raw := cost{fit["t_com"], fit["t_com se"]}, cost{fit["raw t_com"], fit["raw t_com se"]}
				if com.meaningful() && raw.meaningful() {
					rows[k] = append(rows[k], fit[k])
				} else {
					rows[k] = append(rows[k], "n/a (a cost is noise)")
				}
				continue
			}
			rows[k] = append(rows[k], cost{fit[k], fit[k+" se"]}.String())
		}
		values[el.name] = fit
		rep.Tables = append(rep.Tables, arrayTimes(el, ns, times))
		p := &report.Plot{Title: "arrays2d: " + el.name + " ping-pong (one way)", XLabel: "N", YLabel: "T (ms)"}
		for i, name := range arrayShapes {
			p.Series = append(p.Series, report.Series{Name: name, X: floatsOf(ns), Y: scale(times[i], 1e3)})
		}
		rep.Plots = append(rep.Plots, p)
	}
	for _, k := range order {
		params.Rows = append(params.Rows, append([]any{k}, rows[k]...))
	}
	rep.Tables = append([]*report.Table{params}, rep.Tables...)
	rep.Set("model", values)
	return rep, nil
}

// fitArrayModel fits the three equations of the model to the one-way times of the
// shapes (indexed as arrayShapes) and returns the parameters in seconds, each cost with its
// standard error under the key "<name> se".
func fitArrayModel(ns []int, times [][]float64) (map[string]float64, error) {
	x := floatsOf(ns)
	quad := func(N float64) []float64 { return []float64{1, N * N} }
	full := func(N float64) []float64 { return []float64{1, N, N * N} }
	vec, err := stats.FitLinear(times[0], x, quad)
	if err != nil {
		return nil, fmt.Errorf("fitting T[N*N]: %w", err)
	}
	nn, err := stats.FitLinear(times[1], x, full)
	if err != nil {
		return nil, fmt.Errorf("fitting T[N][N] (needs three or more values of N): %w", err)
	}
	// The model gives T[N][N] and T[1][N*N] the same per-element term, so their
	// difference is c + t_vec*N: a two-parameter fit, far steadier on noisy data
	// than the N coefficient of the three-parameter fit (which is kept for JSON).
	diff := make([]float64, len(x))
	for i := range diff {
		diff[i] = times[1][i] - times[2][i]
	}
	rowFit, err := stats.FitLinear(diff, x, func(N float64) []float64 { return []float64{1, N} })
	if err != nil {
		return nil, fmt.Errorf("fitting T[N][N] - T[1][N*N]: %w", err)
	}
	one, err := stats.FitLinear(times[2], x, quad)
	if err != nil {
		return nil, fmt.Errorf("fitting T[1][N*N]: %w", err)
	}
	raw, err := stats.FitLinear(times[3], x, quad)
	if err != nil {
		return nil, fmt.Errorf("fitting the raw socket: %w", err)
	}
	nn2 := make([]float64, len(x))
	for i, N := range x {
		nn2[i] = N * N
	}
	vecSE, oneSE := slopeSE(times[0], nn2, vec.Coef[0], vec.Coef[1]), slopeSE(times[2], nn2, one.Coef[0], one.Coef[1])
	return map[string]float64{
		"t_com":              vec.Coef[1],
		"t_com se":           vecSE,
		"t_ser+t_unser se":   math.Hypot(vecSE, oneSE),
		"t_vec (per row) se": slopeSE(diff, x, rowFit.Coef[0], rowFit.Coef[1]),
		"raw t_com se":       slopeSE(times[3], nn2, raw.Coef[0], raw.Coef[1]),
		"t_ser+t_unser":      one.Coef[1] - vec.Coef[1],
		"t_vec (per row)":    rowFit.Coef[1],
		"t_vec_3param":       nn.Coef[1],
		"raw t_com":          raw.Coef[1],
		"t_com / raw t_com":  vec.Coef[1] / raw.Coef[1],
		"nn_per_element":     nn.Coef[2],
		"r2_vector":          vec.R2,
		"r2_nn":              nn.R2,
		"r2_1xnn":            one.R2,
	}, nil
}

func arrayTimes(el arrayElem, ns []int, times [][]float64) *report.Table {
	t := &report.Table{
		Title:   fmt.Sprintf("arrays2d %s: one-way time T (lower sextile of round trips / 2)", el.name),
		Columns: append([]string{"N"}, arrayShapes...),
	}
	t.Columns = append(t.Columns, "vector/raw", "NxN/vector")
	for i, n := range ns {
		row := []any{n}
		for s := range arrayShapes {
			row = append(row, seconds(times[s][i]))
		}
		row = append(row, times[0][i]/times[3][i], times[1][i]/times[0][i])
		t.AddRow(row...)
	}
	return t
}

func floatsOf(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

func scale(xs []float64, f float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * f
	}
	return out
}
