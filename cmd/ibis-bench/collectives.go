package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/mpicoll"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
	"github.com/ibisgo/ibis/mpj"
)

func init() {
	register(&command{
		name:    "collectives",
		summary: "mpj's Barrier, Bcast, Reduce, Allreduce, Allgather, Alltoall, Gather, Scatter: T(n, p), fit, against Open MPI",
		setup:   setupCollectives,
	})
}

// collOps are the measured collectives, in table order.
var collOps = []string{"barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall", "gather", "scatter"}

// collEndTimeout bounds the final barrier and the wait for the coordinator to leave.
const collEndTimeout = 30 * time.Second

type collFlags struct {
	np, ops, sizes, mpi, mpirunArgs, cpuProfile string
	maxSize, reps, warmup                       int
	raw                                         bool
}

func setupCollectives(fs *flag.FlagSet) func(ctx context.Context, e *env) (*report.Report, error) {
	var f collFlags
	fs.StringVar(&f.np, "np", "2,3,4", "process counts p when ibis-bench starts its own processes (inside a pool: the pool's size)")
	fs.StringVar(&f.ops, "ops", strings.Join(collOps, ","), "collectives to measure")
	fs.IntVar(&f.maxSize, "max-size", 1<<20, "largest message in bytes (sizes are 0 and 4^k up to it); per rank block for Allgather, Alltoall, Gather, Scatter")
	fs.StringVar(&f.sizes, "sizes", "", "explicit comma-separated sizes in bytes (K, M suffixes), instead of -max-size")
	fs.IntVar(&f.reps, "reps", 60, "repetitions per operation and size, each after a synchronisation of the ranks (the figure is the lower sextile of their max over ranks)")
	fs.IntVar(&f.warmup, "warmup", 5, "untimed calls before measuring each operation and size")
	fs.StringVar(&f.mpi, "mpi", "auto", "Open MPI baseline (mpicc, mpirun over TCP on 127.0.0.1): auto (skip when absent), on, off")
	fs.StringVar(&f.mpirunArgs, "mpirun-args", "", "more mpirun options for the baseline, space-separated")
	fs.BoolVar(&f.raw, "raw", true, "also time mpj's Barrier patterns over plain TCP sockets between the same processes (collectives_raw.go)")
	fs.StringVar(&f.cpuProfile, "cpu-profile", "", "write a pprof CPU profile of every rank's measuring loop to `DIR`/pP-rankR.pprof")
	return func(ctx context.Context, e *env) (*report.Report, error) {
		cfg, err := f.config()
		if err != nil {
			return nil, err
		}
		return runCollectives(ctx, e, cfg)
	}
}

// collConfig is the parsed command line.
type collConfig struct {
	procs        []int
	ops          []string
	sizes        []int
	reps, warmup int
	mpi          string
	mpirunArgs   []string
	cpuProfile   string // a directory for every rank's CPU profile; "" for none
	raw          bool   // the raw-socket Barrier baseline
}

func (f collFlags) config() (collConfig, error) {
	c := collConfig{reps: f.reps, warmup: f.warmup, mpi: f.mpi, mpirunArgs: strings.Fields(f.mpirunArgs),
		cpuProfile: f.cpuProfile, raw: f.raw}
	var err error
	if c.procs, err = parseInts("np", f.np); err != nil {
		return c, err
	}
	for _, p := range c.procs {
		if p < 2 {
			return c, fmt.Errorf("%w: -np %d: at least 2 processes", errUsage, p)
		}
	}
	if f.maxSize < 0 {
		return c, fmt.Errorf("%w: -max-size %d is negative", errUsage, f.maxSize)
	}
	c.sizes = powersOfFour(f.maxSize)
	if f.sizes != "" {
		if c.sizes, err = parseInts("sizes", f.sizes); err != nil {
			return c, err
		}
	}
	slices.Sort(c.sizes)
	c.sizes = slices.Compact(c.sizes)
	if c.sizes[len(c.sizes)-1] > 1<<28 {
		return c, fmt.Errorf("%w: size %d is over 256 MiB", errUsage, c.sizes[len(c.sizes)-1])
	}
	for _, op := range parseList(f.ops) {
		if !slices.Contains(collOps, op) {
			return c, fmt.Errorf("%w: -ops: unknown collective %q (have %s)", errUsage, op, strings.Join(collOps, ", "))
		}
		c.ops = append(c.ops, op)
	}
	if len(c.ops) == 0 {
		return c, fmt.Errorf("%w: -ops is empty", errUsage)
	}
	if c.reps < 1 || c.warmup < 0 {
		return c, fmt.Errorf("%w: -reps must be at least 1, -warmup not negative", errUsage)
	}
	if c.mpi != "auto" && c.mpi != "on" && c.mpi != "off" {
		return c, fmt.Errorf("%w: -mpi %q: want auto, on or off", errUsage, c.mpi)
	}
	return c, nil
}

// collPoint is one operation, process count and size: the per-repetition maximum
// over the ranks, in seconds.
type collPoint = mpicoll.Result

// runCollectives runs the experiment: for every p, a pool of p processes measures
// mpj's collectives; the coordinator then runs the Open MPI baseline and reports.
func runCollectives(ctx context.Context, e *env, cfg collConfig) (*report.Report, error) {
	res := &collResults{cfg: cfg, cpus: runtime.NumCPU()}
	if isPeer() || e.pool.registry != "" {
		// Inside a pool (ours or someone else's): one p, the pool's size.
		pts, impl, coord, err := collPool(ctx, e, cfg, e.pool.size)
		if err != nil || !coord {
			return nil, err
		}
		res.impl = impl
		res.procs = []int{e.pool.size}
		res.mpj = pts
		res.where = "processes of pool " + e.pool.name
	} else {
		for _, p := range cfg.procs {
			e.Progress("mpj, %d processes", p)
			pts, impl, _, err := collPool(ctx, e, cfg, p)
			if err != nil {
				return nil, fmt.Errorf("mpj with %d processes: %w", p, err)
			}
			res.impl = impl
			res.mpj = append(res.mpj, pts...)
		}
		res.procs = cfg.procs
		res.where = "separate OS processes started by ibis-bench"
	}
	if err := res.baseline(ctx, e); err != nil {
		return nil, err
	}
	return collReport(res)
}

// collPool joins (or starts) a pool of p processes, makes the mpj world and
// measures on every rank; it returns the points in the coordinator (coord).
func collPool(ctx context.Context, e *env, cfg collConfig, p int) (pts []collPoint, impl string, coord bool, err error) {
	g, err := e.join(ctx, p, 2, mpj.PortTypes()...)
	if err != nil {
		return nil, "", false, err
	}
	impl = g.Ibis.Implementation()
	coord = g.IsCoordinator
	mctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(g.Ctx, func() { cancel(g.Err()) })
	defer stop()
	w, err := mpj.Init(mctx, g.Ibis)
	if err == nil {
		pts, err = profiled(cfg.cpuProfile, p, w.Rank(), func() ([]collPoint, error) {
			return collMeasure(mctx, e, w.Comm, cfg, coord)
		})
		if err == nil {
			// The collective end: nobody closes while another still needs a message.
			fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), collEndTimeout)
			err = w.Finalize(fctx)
			fcancel()
		} else {
			_ = w.Close()
		}
	}
	if !coord {
		// A peer leaves after the coordinator, so that the coordinator never sees a
		// member go while it still finishes.
		if err == nil {
			select {
			case <-g.Ctx.Done():
			case <-time.After(collEndTimeout):
			}
		}
		err = g.PeerDone(err)
		return nil, impl, false, errors.Join(err, g.Close())
	}
	err = g.Wrap(err)
	if cerr := g.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return pts, impl, true, err
}

// collMeasure times every operation and size on every rank: warmup calls, then reps
// repetitions each preceded by a synchronisation; the per-repetition maximum over the
// ranks is agreed on with an Allreduce after the loop. Only show (the coordinator)
// reports progress.
//
// The synchronisation is a 1-element Allreduce (recursive doubling), which lets every
// rank go at about the same time, as MPI_Barrier does in the Open MPI baseline. mpj's
// Barrier would not do: on up to 8 ranks it releases them one by one from rank 0, so
// the rank-0 root of a Bcast or Scatter would start early and its message would reach
// each rank right behind that rank's release, timing little more than the root's writes.
func collMeasure(ctx context.Context, e *env, c *mpj.Comm, cfg collConfig, show bool) ([]collPoint, error) {
	p := c.Size()
	maxN := cfg.sizes[len(cfg.sizes)-1]
	s := make([]byte, max(1, maxN*p))
	r := make([]byte, max(1, maxN*p))
	for i := range s {
		s[i] = byte(c.Rank() + 1)
	}
	local := make([]float64, cfg.reps)
	worst := make([]float64, cfg.reps)
	token := []int32{0}
	var out []collPoint
	for _, op := range cfg.ops {
		sizes := cfg.sizes
		if op == "barrier" {
			sizes = []int{0}
		}
		for _, n := range sizes {
			if show {
				e.Progress("mpj %s, %d processes, %d bytes", op, p, n)
			}
			for range cfg.warmup {
				if err := collCall(ctx, c, op, s, r, n); err != nil {
					return nil, fmt.Errorf("%s of %d bytes: %w", op, n, err)
				}
			}
			for k := range cfg.reps {
				if err := c.Allreduce(ctx, token, token, mpj.Max); err != nil {
					return nil, err
				}
				start := time.Now()
				if err := collCall(ctx, c, op, s, r, n); err != nil {
					return nil, fmt.Errorf("%s of %d bytes: %w", op, n, err)
				}
				local[k] = time.Since(start).Seconds()
			}
			if err := c.Allreduce(ctx, local, worst, mpj.Max); err != nil {
				return nil, err
			}
			out = append(out, collPoint{Op: op, Size: n, Procs: p, Seconds: slices.Clone(worst)})
			if op == "barrier" && cfg.raw {
				if show {
					e.Progress("raw sockets barrier, %d processes", p)
				}
				pts, err := rawBarriers(ctx, c, cfg)
				if err != nil {
					return nil, err
				}
				out = append(out, pts...)
			}
		}
	}
	return out, nil
}

// collCall is one call of op with n bytes per block, rank 0 the root, as
// csrc/mpicoll.c calls MPI (the reductions sum bytes).
func collCall(ctx context.Context, c *mpj.Comm, op string, s, r []byte, n int) error {
	p := c.Size()
	switch op {
	case "barrier":
		return c.Barrier(ctx)
	case "bcast":
		return c.Bcast(ctx, s[:n], 0)
	case "reduce":
		return c.Reduce(ctx, s[:n], r[:n], mpj.Sum, 0)
	case "allreduce":
		return c.Allreduce(ctx, s[:n], r[:n], mpj.Sum)
	case "allgather":
		return c.Allgather(ctx, s[:n], r[:n*p])
	case "alltoall":
		return c.Alltoall(ctx, s[:n*p], r[:n*p])
	case "gather":
		return c.Gather(ctx, s[:n], r[:n*p], 0)
	case "scatter":
		return c.Scatter(ctx, s[:n*p], r[:n], 0)
	}
	return fmt.Errorf("%w: unknown collective %q", errUsage, op)
}

// collResults is what the report is made of.
type collResults struct {
	cfg         collConfig
	cpus        int
	impl, where string
	procs       []int
	// mpj holds the raw-socket Barriers' points too (rawFlatOp, rawDissemOp).
	mpj, mpi []collPoint
	// mpiNote says why the baseline is missing, or how it ran.
	mpiNote string
	// mpirun is the baseline's command line for each p (the binary as "mpicoll").
	mpirun map[string]any
}

// baseline runs the Open MPI program for every p, unless -mpi off or (auto) it is
// not installed.
func (r *collResults) baseline(ctx context.Context, e *env) error {
	if r.cfg.mpi == "off" {
		r.mpiNote = "Open MPI baseline: off (-mpi off)"
		return nil
	}
	if err := mpicoll.Available(); err != nil {
		if r.cfg.mpi == "on" {
			return err
		}
		r.mpiNote = "Open MPI baseline skipped: mpicc or mpirun not found on the PATH"
		return nil
	}
	dir, err := os.MkdirTemp("", "ibis-bench-mpicoll-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := mpicoll.Build(ctx, dir)
	if err != nil {
		return err
	}
	for _, p := range r.procs {
		e.Progress("Open MPI, %d processes", p)
		args := mpicoll.Args(bin, mpicoll.Settings{Procs: p, Reps: r.cfg.reps, Warmup: r.cfg.warmup,
			Ops: r.cfg.ops, Sizes: r.cfg.sizes, ExtraArgs: r.cfg.mpirunArgs}, os.Geteuid() == 0, r.cpus)
		pts, err := mpicoll.Run(ctx, args, nil)
		if err != nil {
			return fmt.Errorf("the Open MPI baseline with %d processes: %w", p, err)
		}
		r.mpi = append(r.mpi, pts...)
		line := append([]string{"mpirun"}, args...)
		line[len(line)-5] = "mpicoll" // the binary's temporary path means nothing later
		if r.mpirun == nil {
			r.mpirun = map[string]any{}
			r.mpiNote = "Open MPI: its own collectives (internal/mpicoll/csrc/mpicoll.c, mpicc -O2), timed the same way, run as: " + strings.Join(line, " ")
			if len(r.procs) > 1 {
				r.mpiNote += " (and with the other -np)"
			}
		}
		r.mpirun[pkey(p)] = strings.Join(line, " ")
	}
	return nil
}
