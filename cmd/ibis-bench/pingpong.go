package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/cluster"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/payload"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/stats"
)

func init() {
	register(&command{
		name:    "pingpong",
		summary: "one-way latency and bandwidth for 0 and 4^k bytes, Hockney fit, against a raw socket",
		setup:   setupPingpong,
	})
}

type pingpongFlags struct {
	maxSize, objectMax int
	sizes, types       string
	reps, warmup       int
	minBatch           time.Duration
}

func setupPingpong(fs *flag.FlagSet) func(ctx context.Context, e *env) (*report.Report, error) {
	var f pingpongFlags
	fs.IntVar(&f.maxSize, "max-size", 1<<20, "largest message in bytes (sizes are 0 and 4^k up to it)")
	fs.StringVar(&f.sizes, "sizes", "", "explicit comma-separated sizes in bytes (K, M suffixes), instead of -max-size")
	fs.StringVar(&f.types, "types", "bytes,int32,float64,objects", "payload variants: bytes, int32, int64, float32, float64, objects (16-byte structs through WriteObject and the object codec), objects-msgpack (the same through msgpack)")
	fs.IntVar(&f.objectMax, "object-max", 64<<10, "largest size for the objects variants (msgpack is slow for big slices)")
	fs.IntVar(&f.reps, "reps", 150, "measurements per size (the test time is their lower sextile)")
	fs.IntVar(&f.warmup, "warmup", 20, "round trips before measuring each size")
	fs.DurationVar(&f.minBatch, "min-batch", 200*time.Microsecond, "shortest measurement: small sizes are timed in batches at least this long")
	return func(ctx context.Context, e *env) (*report.Report, error) {
		if f.maxSize < 0 {
			return nil, fmt.Errorf("%w: -max-size %d is negative", errUsage, f.maxSize)
		}
		sizes := powersOfFour(f.maxSize)
		if f.sizes != "" {
			var err error
			if sizes, err = parseInts("sizes", f.sizes); err != nil {
				return nil, err
			}
		}
		kinds, err := parseKinds(f.types)
		if err != nil {
			return nil, err
		}
		if f.reps < 1 || f.warmup < 0 || f.minBatch < 0 {
			return nil, fmt.Errorf("%w: -reps must be at least 1, -warmup and -min-batch not negative", errUsage)
		}
		for _, n := range sizes {
			if n > payload.MaxSize {
				return nil, fmt.Errorf("%w: size %d is over the limit of %d", errUsage, n, payload.MaxSize)
			}
		}
		tm := timer{reps: f.reps, minBatch: f.minBatch, warmup: f.warmup}
		return e.runNetwork(ctx, 2, 2, func(ctx context.Context, g *cluster.Group, links []*link) (*report.Report, error) {
			return pingpong(ctx, e, g, links[0], tm, sizes, kinds, f.objectMax)
		})
	}
}

// parseKinds parses -types.
func parseKinds(s string) ([]payload.Kind, error) {
	var out []payload.Kind
	for _, name := range parseList(s) {
		k, err := payload.ParseKind(name)
		if err != nil {
			return nil, fmt.Errorf("%w: -types: %v", errUsage, err)
		}
		if k.IsTree() || k == payload.Bytes2D || k == payload.Float322D {
			return nil, fmt.Errorf("%w: -types: %s has no size series; use bytes, int32, int64, float32, float64, objects, objects-msgpack", errUsage, k)
		}
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: -types is empty", errUsage)
	}
	return out, nil
}

// warmupTime is how long pingpong exercises both paths before measuring.
const warmupTime = 300 * time.Millisecond

// curve is one variant's measured latencies: T[i] for size N[i], in seconds.
type curve struct {
	name string
	N, T []float64
}

func pingpong(ctx context.Context, e *env, g *cluster.Group, l *link, tm timer, sizes []int, kinds []payload.Kind, objectMax int) (*report.Report, error) {
	raw, err := l.dialRaw(ctx)
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	rawBuf := make([]byte, sizes[len(sizes)-1])
	rawCurve := &curve{name: "raw socket"}
	curves := make([]*curve, len(kinds))
	for i, k := range kinds {
		curves[i] = &curve{name: k.String()}
	}
	// Warm both paths up together first: the first size measured should not pay for
	// cold caches, lazily grown buffers or a CPU still at low clock.
	warm := time.Now()
	for time.Since(warm) < warmupTime {
		if _, err := raw.RoundTrip(nil, 0); err != nil {
			return nil, err
		}
		if err := l.ping(ctx); err != nil {
			return nil, err
		}
	}
	for si, n := range sizes {
		e.Progress("size %d bytes (%d/%d)", n, si+1, len(sizes))
		ops := []func() error{func() error {
			_, err := raw.RoundTrip(rawBuf[:n], n)
			return err
		}}
		var used []*curve
		for i, k := range kinds {
			spec := payload.Spec{Kind: k, Size: n}
			if spec.Validate() != nil || (k.IsObject() && n > objectMax) {
				continue // a size the variant cannot hold (1 byte of int32)
			}
			if err := l.verify(ctx, spec); err != nil {
				return nil, fmt.Errorf("checking %s: %w", spec, err)
			}
			ops = append(ops, func() error { return l.echo(ctx, spec) })
			used = append(used, curves[i])
		}
		ms, err := tm.measure(ctx, ops...)
		if err != nil {
			return nil, err
		}
		for i, c := range append([]*curve{rawCurve}, used...) {
			rtt, err := stats.LowerSextile(ms[i])
			if err != nil {
				return nil, err
			}
			c.N = append(c.N, float64(n))
			c.T = append(c.T, rtt/2) // one way
		}
	}
	return pingpongReport(describe(g, e), tm, rawCurve, curves)
}

func pingpongReport(about string, tm timer, raw *curve, curves []*curve) (*report.Report, error) {
	rep := report.New("pingpong")
	rawAt := map[float64]float64{}
	for i, n := range raw.N {
		rawAt[n] = raw.T[i]
	}
	method := fmt.Sprintf("one-way T(n) = lower sextile of %d round-trip measurements / 2 (small sizes timed in batches of at least %v)", tm.reps, tm.minBatch)
	for _, c := range curves {
		if len(c.N) == 0 {
			continue
		}
		t := &report.Table{
			Title:   "pingpong " + c.name + ": " + about,
			Columns: []string{"size (B)", "T(n)", "MB/s", "raw T(n)", "raw MB/s", "T/raw"},
			Notes:   []string{method, "raw: plain net.TCPConn echo between the same two processes, measured in turn with Ibis"},
		}
		for i, n := range c.N {
			r := rawAt[n]
			t.AddRow(int(n), seconds(c.T[i]), mbps(n, c.T[i]), seconds(r), mbps(n, r), c.T[i]/r)
		}
		rep.Tables = append(rep.Tables, t)
	}
	fits := &report.Table{
		Title:   "pingpong: Hockney model T(n) = ts + tb*n, least squares over all sizes",
		Columns: []string{"variant", "ts", "tb (ns/B)", "1/tb (MB/s)", "R²", "ts/raw ts", "tb/raw tb"},
	}
	rawFit, err := stats.FitHockney(raw.N, raw.T)
	if err != nil {
		// One size, or sizes the fit cannot tell apart: the measurements stand alone.
		if len(rep.Tables) > 0 {
			last := rep.Tables[len(rep.Tables)-1]
			last.Notes = append(last.Notes, fmt.Sprintf("no Hockney fit: %v (a fit needs two different sizes or more, e.g. -sizes 0,1K,64K,1M)", err))
		}
		return pingpongPlots(rep, raw, curves), nil
	}
	fits.AddRow(raw.name, seconds(rawFit.Ts), rawFit.Tb*1e9, rawFit.Bandwidth()/1e6, rawFit.R2, 1.0, 1.0)
	values := map[string]any{raw.name: fitValues(rawFit)}
	flat := false
	for _, c := range curves {
		if len(c.N) < 2 {
			continue
		}
		h, err := stats.FitHockney(c.N, c.T)
		if err != nil {
			fits.Notes = append(fits.Notes, fmt.Sprintf("%s: no fit (%v)", c.name, err))
			continue
		}
		fits.AddRow(c.name, seconds(h.Ts), h.Tb*1e9, h.Bandwidth()/1e6, h.R2, h.Ts/rawFit.Ts, h.Tb/rawFit.Tb)
		values[c.name] = fitValues(h)
		if h.Tb <= 0 || rawFit.Tb <= 0 {
			flat = true
		}
	}
	if flat {
		fits.Notes = append(fits.Notes, "a slope tb of 0 or less has no bandwidth (-): the sizes are too close together for the "+
			"noise; give -sizes a larger one (e.g. 0,1K,64K,1M)")
	}
	rep.Tables = append(rep.Tables, fits)
	rep.Set("hockney", values)
	return pingpongPlots(rep, raw, curves), nil
}

// pingpongPlots adds the latency and bandwidth curves to rep, as figures and as JSON.
func pingpongPlots(rep *report.Report, raw *curve, curves []*curve) *report.Report {
	lat := &report.Plot{Title: "pingpong: one-way latency", XLabel: "message size (bytes)", YLabel: "T(n) (µs)", LogX: true, LogY: true}
	bw := &report.Plot{Title: "pingpong: bandwidth n/T(n)", XLabel: "message size (bytes)", YLabel: "MB/s", LogX: true, LogY: true}
	series := map[string]any{}
	for _, c := range append([]*curve{raw}, curves...) {
		if len(c.N) == 0 {
			continue
		}
		us := make([]float64, len(c.T))
		mb := make([]float64, len(c.T))
		for i := range c.T {
			us[i] = c.T[i] * 1e6
			mb[i] = mbps(c.N[i], c.T[i])
		}
		lat.Series = append(lat.Series, report.Series{Name: c.name, X: c.N, Y: us})
		bw.Series = append(bw.Series, report.Series{Name: c.name, X: c.N, Y: mb})
		series[c.name] = map[string]any{"size": c.N, "seconds": c.T}
	}
	rep.Plots = append(rep.Plots, lat, bw)
	rep.Set("latency", series)
	return rep
}

func fitValues(h stats.Hockney) map[string]any {
	return map[string]any{"ts_seconds": h.Ts, "tb_seconds_per_byte": h.Tb, "r2": h.R2}
}

// seconds turns float seconds into a Duration cell.
func seconds(s float64) time.Duration { return time.Duration(s * 1e9) }

// mbps is n bytes in t seconds as MB/s (10^6 bytes per second); 0 for n = 0.
func mbps(n, t float64) float64 {
	if n == 0 || t <= 0 {
		return 0
	}
	return n / t / 1e6
}
