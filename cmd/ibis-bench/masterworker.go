package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/cluster"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/stats"
)

func init() {
	register(&command{
		name:    "masterworker",
		summary: "Figure 6.1: requests per second a master answers for 1 to 64 workers, against raw sockets",
		setup:   setupMasterWorker,
	})
	registerOp(opWorkers, handleWorkers)
}

type mwFlags struct {
	sweep            string
	perProcess, reps int
	duration         time.Duration
	noRaw            bool
	masters          string
	variants         []mwVariant
	concurrency      int
	cpuProfile       string
}

func setupMasterWorker(fs *flag.FlagSet) func(ctx context.Context, e *env) (*report.Report, error) {
	var f mwFlags
	fs.StringVar(&f.sweep, "workers", "1,2,4,8,16,32,64", "numbers of active workers to measure")
	fs.IntVar(&f.perProcess, "workers-per-process", 8, "workers per worker process; each is a goroutine with its own Ibis instance (own pool membership, ports and sockets)")
	fs.DurationVar(&f.duration, "duration", 500*time.Millisecond, "measuring time per point (after a warm-up of a fifth of it)")
	fs.IntVar(&f.reps, "reps", 3, "measurements per point (the figure is their median)")
	fs.BoolVar(&f.noRaw, "no-raw", false, "skip the raw-socket baseline")
	fs.StringVar(&f.masters, "master", "explicit", "master variants, taking turns: explicit (one goroutine calls Receive), upcall (message upcalls, the handler finishes the request before it answers), concurrent (ipl.WithConcurrentUpcalls: a handler per worker answers)")
	fs.IntVar(&f.concurrency, "concurrency", 0, "concurrent upcalls of the concurrent variant's port (0: one per worker of the pool)")
	fs.StringVar(&f.cpuProfile, "cpu-profile", "", "write a pprof CPU profile of the master's process over every measured phase to `FILE` (measure one -master variant and -no-raw to profile it alone)")
	return func(ctx context.Context, e *env) (*report.Report, error) {
		sweep, err := parseInts("workers", f.sweep)
		if err != nil {
			return nil, err
		}
		if f.variants, err = parseMasterVariants(f.masters); err != nil {
			return nil, err
		}
		if f.concurrency < 0 {
			return nil, fmt.Errorf("%w: -concurrency must not be negative", errUsage)
		}
		slices.Sort(sweep)
		if sweep[0] < 1 || f.perProcess < 1 || f.reps < 1 || f.duration <= 0 {
			return nil, fmt.Errorf("%w: -workers values, -workers-per-process and -reps must be at least 1, -duration positive", errUsage)
		}
		if sweep[len(sweep)-1]*f.perProcess > 4096 {
			return nil, fmt.Errorf("%w: at most 4096 workers", errUsage)
		}
		procs := (sweep[len(sweep)-1] + f.perProcess - 1) / f.perProcess
		return e.runNetwork(ctx, procs+1, 2, func(ctx context.Context, g *cluster.Group, links []*link) (*report.Report, error) {
			return masterWorker(ctx, e, g, links, f, sweep)
		})
	}
}

// mwPoint is one point of the figure.
type mwPoint struct {
	workers int
	ibis    [][]float64 // per master variant (mwFlags.variants): requests per second, one per repetition
	raw     []float64
}

func masterWorker(ctx context.Context, e *env, g *cluster.Group, links []*link, f mwFlags, sweep []int) (*report.Report, error) {
	total := len(links) * f.perProcess
	var skipped []int
	for len(sweep) > 0 && sweep[len(sweep)-1] > total {
		skipped = append(skipped, sweep[len(sweep)-1])
		sweep = sweep[:len(sweep)-1]
	}
	if len(sweep) == 0 {
		return nil, fmt.Errorf("%w: the pool holds %d workers, fewer than any -workers value", cluster.ErrPoolSize, total)
	}
	concurrency := 0
	if containsVariant(f.variants, mwConcurrent) {
		concurrency = f.concurrency
		if concurrency == 0 {
			concurrency = total
		}
	}
	m, err := startMaster(ctx, g, e, links, f.perProcess, !f.noRaw, concurrency)
	if err != nil {
		return nil, err
	}
	defer m.close()
	stopProfile, err := startCPUProfile(f.cpuProfile)
	if err != nil {
		return nil, err
	}
	defer func() { _ = stopProfile() }()
	var points []mwPoint
	for i, k := range sweep {
		p := mwPoint{workers: k, ibis: make([][]float64, len(f.variants))}
		for r := range f.reps {
			e.Progress("%d workers, repetition %d (%d/%d)", k, r+1, i+1, len(sweep))
			for j, v := range f.variants {
				rate, err := m.phase(ctx, k, f.duration, false, v)
				if err != nil {
					return nil, fmt.Errorf("%d workers, %s master: %w", k, v, err)
				}
				p.ibis[j] = append(p.ibis[j], rate)
			}
			if !f.noRaw {
				rate, err := m.phase(ctx, k, f.duration, true, mwExplicit)
				if err != nil {
					return nil, fmt.Errorf("%d raw workers: %w", k, err)
				}
				p.raw = append(p.raw, rate)
			}
		}
		points = append(points, p)
	}
	if err := stopProfile(); err != nil {
		return nil, err
	}
	if err := m.stop(ctx); err != nil {
		return nil, err
	}
	return mwReport(describe(g, e), g.Ibis.Implementation(), f, len(links), total, points, skipped), nil
}

func mwReport(about, impl string, f mwFlags, procs, total int, points []mwPoint, skipped []int) *report.Report {
	cols := []string{"workers"}
	for _, v := range f.variants {
		cols = append(cols, v.String()+" req/s")
	}
	cols = append(cols, "raw req/s")
	for _, v := range f.variants {
		cols = append(cols, v.String()+"/raw")
	}
	for _, v := range f.variants {
		cols = append(cols, v.String()+" µs/request")
	}
	t := &report.Table{
		Title:   "masterworker: requests per second at the master; " + about,
		Columns: cols,
		Notes: []string{
			fmt.Sprintf("workers are goroutines, %d per worker process, each with its OWN Ibis instance (its own pool membership, ports and TCP connections); %d worker processes, %d workers in all, the active ones spread over the processes", f.perProcess, procs, total),
			"each worker sends a request object (WriteObject) and waits; the master answers with an object holding one value of each primitive type",
			"masters: explicit = one goroutine with an explicit Receive on a many-to-one port; upcall = message upcalls, one dispatcher, the handler finishes the request before it answers; concurrent = ipl.WithConcurrentUpcalls, each handler answers from its own goroutine; the variants and raw take turns in every repetition",
			fmt.Sprintf("a point is the median of %d runs of %v (after a warm-up of %v)", f.reps, f.duration, f.duration/5),
			"raw: the same exchange over plain net.TCPConn connections (one per worker) to a server with a goroutine per connection, fixed-size frames",
		},
	}
	if len(skipped) > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("not measured (more than the %d workers of the pool): %v", total, skipped))
	}
	xs := []float64{}
	ys := make([][]float64, len(f.variants))
	var rs []float64
	values := []map[string]any{}
	for _, p := range points {
		row := []any{p.workers}
		meds := make([]float64, len(f.variants))
		v := map[string]any{"workers": p.workers}
		for j, variant := range f.variants {
			meds[j], _ = stats.Median(p.ibis[j])
			row = append(row, meds[j])
			ys[j] = append(ys[j], meds[j])
			v[variant.String()] = map[string]any{"requests_per_second": meds[j], "runs": p.ibis[j]}
		}
		v["requests_per_second"] = meds[0]
		if len(p.raw) > 0 {
			rw, _ := stats.Median(p.raw)
			row = append(row, rw)
			for _, med := range meds {
				row = append(row, med/rw)
			}
			v["raw_requests_per_second"], v["raw_runs"] = rw, p.raw
			rs = append(rs, rw)
		} else {
			row = append(row, "")
			for range meds {
				row = append(row, "")
			}
		}
		for _, med := range meds {
			row = append(row, seconds(1/med))
		}
		t.AddRow(row...)
		xs = append(xs, float64(p.workers))
		values = append(values, v)
	}
	rep := report.New("masterworker")
	rep.Tables = append(rep.Tables, t)
	plot := &report.Plot{Title: "masterworker: requests/s at the master", XLabel: "workers", YLabel: "requests per second", LogX: true}
	for j, v := range f.variants {
		plot.Series = append(plot.Series, report.Series{Name: "Ibis (" + impl + ", " + v.String() + ")", X: xs, Y: ys[j]})
	}
	if len(rs) == len(xs) {
		plot.Series = append(plot.Series, report.Series{Name: "raw sockets", X: xs, Y: rs})
	}
	rep.Plots = append(rep.Plots, plot)
	rep.Set("points", values)
	rep.Set("workers_per_process", f.perProcess)
	rep.Set("masters", mwVariantList(f.variants))
	return rep
}

func mwVariantList(vs []mwVariant) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out
}
