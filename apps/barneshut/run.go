package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/ibisgo/ibis/internal/applog"
	"github.com/ibisgo/ibis/internal/phases"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/mpj"
)

// world is the exchanger of an mpj world.
type world struct{ w *mpj.World }

func (w world) rank() int                         { return w.w.Rank() }
func (w world) size() int                         { return w.w.Size() }
func (w world) barrier(ctx context.Context) error { return w.w.Barrier(ctx) }
func (w world) allgather(ctx context.Context, send, recv []float64, counts []int) error {
	return w.w.Allgatherv(ctx, send, recv, counts, nil)
}

// result is what rank 0 reports.
type result struct {
	bodies, procs int
	impl          string
	p             params
	seconds       float64
	interactions  int64 // over the timed steps, all processes
	e0, e1        float64
	checksum      float64
	acc           *accuracy
	phases        [][]float64 // every rank's phase times (-phases)
}

func (r result) ips() float64 {
	if r.seconds <= 0 {
		return 0
	}
	return float64(r.interactions) / r.seconds
}

func (r result) drift() float64 {
	if r.e0 == 0 { // one body at rest, say
		return r.e1 - r.e0
	}
	return (r.e1 - r.e0) / math.Abs(r.e0)
}

func (r result) print(w io.Writer) {
	fmt.Fprintf(w, "Barnes-Hut, %d bodies on %d process(es) over %s: %d steps of %g in %.3f s, %.3g interactions/s (%.0f per body per step)\n",
		r.bodies, r.procs, r.impl, r.p.steps, r.p.dt, r.seconds, r.ips(),
		float64(r.interactions)/float64(max(1, r.p.steps))/float64(r.bodies))
	fmt.Fprintf(w, "theta %g, leaf %d, eps %g; energy %.9g -> %.9g, relative drift %.3g; checksum %.17g\n",
		r.p.theta, r.p.leaf, r.p.eps, r.e0, r.e1, r.drift(), r.checksum)
	if a := r.acc; a != nil {
		fmt.Fprintf(w, "verify: relative force error of %d bodies vs direct summation: median %.3g, 99th percentile %.3g, rms %.3g\n",
			a.sampled, a.median, a.p99, a.rms)
	}
	fmt.Fprintf(w, "barneshut-result bodies=%d procs=%d impl=%s steps=%d seconds=%.6f ips=%.6g drift=%.6g checksum=%.17g theta=%g leaf=%d\n",
		r.bodies, r.procs, r.impl, r.p.steps, r.seconds, r.ips(), r.drift(), r.checksum, r.p.theta, r.p.leaf)
}

// simulate is one process of the pool: it joins the world, makes or reads the bodies,
// runs the steps with the others, and rank 0 reports.
func simulate(ctx context.Context, cfg *config, stdout, stderr io.Writer) (err error) {
	// The Ibis's warnings (a registry that is not there) go to stderr.
	w, err := mpj.New(ctx, append([]ipl.Option{ipl.WithLogger(applog.New(false))}, cfg.ipl...)...)
	if err != nil {
		return fmt.Errorf("joining the pool: %w", err)
	}
	defer func() {
		if err != nil {
			_ = w.Close() // the error is what the user needs to hear about
			return
		}
		if ferr := w.Finalize(ctx); ferr != nil {
			err = fmt.Errorf("finalize: %w", ferr)
		}
	}()
	rank, p := w.Rank(), w.Size()
	defer func() {
		if err != nil && p > 1 {
			err = fmt.Errorf("rank %d of %d: %w", rank, p, err)
		}
	}()
	var s *system
	if cfg.input != "" {
		if s, err = readAtosFile(cfg.input); err != nil {
			return err
		}
	} else {
		s = plummer(cfg.bodies, cfg.spheres, cfg.seed)
	}
	if p > s.n() {
		return fmt.Errorf("%d processes for %d bodies: every process needs at least one (%w)", p, s.n(), errUsage)
	}
	var progress io.Writer
	if rank == 0 && !cfg.quiet {
		progress = stderr
	}
	var notices io.Writer // the pictures written
	if rank == 0 {
		notices = stderr
	}
	res, err := runSteps(ctx, world{w}, s, cfg, progress, notices)
	if err != nil {
		return err
	}
	if rank != 0 {
		return nil
	}
	res.impl = w.Implementation()
	if cfg.verify {
		a := checkAccuracy(s, cfg.p.eps, sample(s.n()))
		res.acc = &a
	}
	if cfg.out != "" {
		if err := writeAtosFile(cfg.out, s); err != nil {
			return err
		}
	}
	res.print(stdout)
	if cfg.phases {
		if err := phases.Print(stdout, "barneshut", phaseNames, res.phases, res.seconds); err != nil {
			return err
		}
	}
	return res.acc.err() // -verify fails on forces it cannot measure
}

// gatherPhases gives every rank every rank's phase times.
func gatherPhases(ctx context.Context, ex exchanger, mine []float64) ([][]float64, error) {
	np, k := ex.size(), len(mine)
	all := make([]float64, np*k)
	counts := make([]int, np)
	for r := range counts {
		counts[r] = k
	}
	if err := ex.allgather(ctx, mine, all, counts); err != nil {
		return nil, fmt.Errorf("gathering the phase times: %w", err)
	}
	out := make([][]float64, np)
	for r := range out {
		out[r] = all[r*k : (r+1)*k]
	}
	return out, nil
}

// runSteps runs the simulation of s on this process with the others of ex: the first force
// evaluation, then the timed steps. Every process ends with the same s. progress, when not
// nil, gets a line per step; rank 0 writes the pictures and names each on notices (when not
// nil).
func runSteps(ctx context.Context, ex exchanger, s *system, cfg *config, progress, notices io.Writer) (result, error) {
	sim := &simulation{s: s, p: cfg.p, ex: ex, clock: phases.New(phaseNames...)}
	if err := sim.forces(ctx); err != nil {
		return result{}, err
	}
	res := result{bodies: s.n(), procs: ex.size(), p: cfg.p, e0: s.energy()}
	var v view
	pictures := ex.rank() == 0 && cfg.image != ""
	picture := func(path string, k int) error {
		if err := writeImage(path, s, v, frame{step: k, steps: cfg.p.steps, time: s.time}); err != nil {
			return err
		}
		if notices != nil {
			fmt.Fprintf(notices, "barneshut: wrote %s (step %d, t=%.4g)\n", path, k, s.time)
		}
		return nil
	}
	if pictures {
		v = newView(s)
		if cfg.imageEvery > 0 {
			if err := picture(framePath(cfg.image, 0), 0); err != nil {
				return res, err
			}
		}
	}
	// Start together, so that the time is the computation's, not the stragglers' start-up.
	if err := ex.barrier(ctx); err != nil {
		return res, fmt.Errorf("starting: %w", err)
	}
	start := time.Now()
	sim.clock.Start(phaseUpdate)
	var paused time.Duration // spent writing pictures
	for k := 1; k <= cfg.p.steps; k++ {
		t0 := time.Now()
		if err := sim.step(ctx); err != nil {
			return res, fmt.Errorf("step %d: %w", k, err)
		}
		res.interactions += sim.interactions
		if progress != nil {
			d := time.Since(t0).Seconds()
			fmt.Fprintf(progress, "barneshut: step %d/%d t=%.4g %.3f s, %.3g interactions/s, %d of %d bodies here, energy %.9g\n",
				k, cfg.p.steps, s.time, d, float64(sim.interactions)/d, sim.mine, s.n(), s.energy())
		}
		if pictures && cfg.imageEvery > 0 && k%cfg.imageEvery == 0 {
			t1 := time.Now()
			sim.clock.Stop() // the pictures are not the run's time, nor the phases'
			if err := picture(framePath(cfg.image, k), k); err != nil {
				return res, err
			}
			sim.clock.Start(phaseUpdate)
			paused += time.Since(t1)
		}
	}
	sim.clock.Stop()
	res.seconds = (time.Since(start) - paused).Seconds()
	if cfg.phases {
		var err error
		if res.phases, err = gatherPhases(ctx, ex, sim.clock.Seconds()); err != nil {
			return res, err
		}
	}
	res.e1 = s.energy()
	res.checksum = s.checksum()
	if pictures {
		if err := picture(cfg.image, cfg.p.steps); err != nil {
			return res, err
		}
	}
	return res, nil
}
