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

// Message tags.
const (
	tagUp   = 1 // a process's first row, to the process above it
	tagDown = 2 // a process's last row, to the process below it
	tagSum  = 3 // the running checksum
)

// result is what the process holding the checksum reports.
type result struct {
	n, procs int
	impl     string
	async    bool
	iters    int
	change   float64
	checksum float64
	seconds  float64
}

// mcups is million cell updates per second: N*N updates per iteration.
func (r result) mcups() float64 {
	return float64(r.n) * float64(r.n) * float64(r.iters) / r.seconds / 1e6
}

func (r result) print(w io.Writer) {
	mode := "sync"
	if r.async {
		mode = "async"
	}
	fmt.Fprintf(w, "SOR %dx%d on %d process(es) over %s (%s exchange): %d iterations in %.3f s, %.1f million cell updates/s\n",
		r.n, r.n, r.procs, r.impl, mode, r.iters, r.seconds, r.mcups())
	fmt.Fprintf(w, "final change %.6g, checksum %.17g\n", r.change, r.checksum)
	fmt.Fprintf(w, "sor-result n=%d procs=%d impl=%s async=%t iters=%d change=%.17g checksum=%.17g seconds=%.6f mcups=%.3f\n",
		r.n, r.procs, r.impl, r.async, r.iters, r.change, r.checksum, r.seconds, r.mcups())
}

// solve is one process of the pool: it joins the world, relaxes its block of rows with its
// neighbours, and rank 0 prints the result.
func solve(ctx context.Context, cfg *config, stdout, stderr io.Writer) (err error) {
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
	if p > cfg.n {
		return fmt.Errorf("%d processes for the %d rows of -n %d: every process needs at least one row (%w)", p, cfg.n, cfg.n, errUsage)
	}
	s := &solver{ctx: ctx, w: w, rank: rank, p: p, b: newBlock(cfg.n, p, rank), pr: newParams(cfg.n), async: cfg.async,
		clock: phases.New(phaseNames...)}
	if err := w.Barrier(ctx); err != nil {
		return fmt.Errorf("barrier: %w", err)
	}
	start := time.Now()
	s.clock.Start(phaseCompute)
	lastReport := start
	change := []float64{0}
	iters := 0
	for {
		d, err := s.iterate()
		if err != nil {
			return err
		}
		change[0] = d
		s.clock.Enter(phaseAllreduce)
		if err := w.Allreduce(ctx, change, change, mpj.Max); err != nil {
			return fmt.Errorf("iteration %d: allreduce of the change: %w", iters+1, err)
		}
		s.clock.Enter(phaseCompute)
		iters++
		if change[0] <= s.pr.stopdiff || iters == cfg.iters {
			break
		}
		if rank == 0 && !cfg.quiet {
			if now := time.Now(); now.Sub(start) >= cfg.progress && now.Sub(lastReport) >= cfg.progress {
				lastReport = now
				rate := float64(cfg.n) * float64(cfg.n) * float64(iters) / now.Sub(start).Seconds() / 1e6
				fmt.Fprintf(stderr, "sor: iteration %d, change %.3g (stop at %.3g), %.1f million cell updates/s\n",
					iters, change[0], s.pr.stopdiff, rate)
			}
		}
	}
	s.clock.Stop()
	seconds := time.Since(start).Seconds()

	var perRank [][]float64
	if cfg.phases {
		if perRank, err = s.gatherPhases(); err != nil {
			return err
		}
	}
	sum, err := s.checksum()
	if err != nil {
		return err
	}
	var grid []float64
	if cfg.verify || cfg.image != "" {
		if grid, err = s.gather(); err != nil {
			return err
		}
	}
	if rank != 0 {
		return nil
	}
	res := result{n: cfg.n, procs: p, impl: w.Implementation(), async: cfg.async, iters: iters,
		change: change[0], checksum: sum, seconds: seconds}
	if cfg.verify {
		if err := verify(grid, res, cfg.iters); err != nil {
			return err
		}
	}
	if cfg.image != "" {
		if err := writeImage(cfg.image, grid, cfg.n, iters); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "sor: wrote %s (heat map of the grid)\n", cfg.image)
	}
	res.print(stdout)
	if cfg.phases {
		if err := phases.Print(stdout, "sor", phaseNames, perRank, seconds); err != nil {
			return err
		}
	}
	if cfg.verify {
		fmt.Fprintf(stdout, "verified: the grid, iterations, change and checksum are bitwise equal to the sequential computation\n")
	}
	return nil
}

// solver holds one process's part of the computation.
type solver struct {
	ctx     context.Context
	w       *mpj.World
	rank, p int
	b       *block
	pr      params
	async   bool
	recvs   [2]*mpj.Request // the exchange under way
	clock   *phases.Clock   // where the iterations' time goes (-phases)
}

// The phases of an iteration that -phases reports: the sweeps, the exchange of the boundary
// rows (sending, and waiting for the neighbours' rows), the allreduce of the change.
const (
	phaseCompute = iota
	phaseExchange
	phaseAllreduce
)

var phaseNames = []string{"compute", "exchange", "allreduce"}

// gatherPhases collects every rank's phase times at rank 0 (nil elsewhere).
func (s *solver) gatherPhases() ([][]float64, error) {
	mine := s.clock.Seconds()
	var all []float64
	if s.rank == 0 {
		all = make([]float64, s.p*len(mine))
	}
	if err := s.w.Gather(s.ctx, mine, all, 0); err != nil {
		return nil, fmt.Errorf("gathering the phase times: %w", err)
	}
	if s.rank != 0 {
		return nil, nil
	}
	out := make([][]float64, s.p)
	for r := range out {
		out[r] = all[r*len(mine) : (r+1)*len(mine)]
	}
	return out, nil
}

// iterate does one iteration of the solver's block (block.iterate) with the neighbours.
func (s *solver) iterate() (float64, error) {
	return s.b.iterate(s.pr.omega, s.async, s)
}

// start posts the receives of the ghost rows and sends the first and last rows to the
// neighbours (block.iterate's exchanger). mpj's sends never wait for the receiver, so every
// process may send first.
func (s *solver) start() (err error) {
	defer s.clock.Enter(s.clock.Enter(phaseExchange))
	b := s.b
	s.recvs = [2]*mpj.Request{}
	if s.rank > 0 {
		if s.recvs[0], err = s.w.Irecv(b.row(0), s.rank-1, tagDown); err != nil {
			return fmt.Errorf("posting the receive from rank %d: %w", s.rank-1, err)
		}
	}
	if s.rank < s.p-1 {
		if s.recvs[1], err = s.w.Irecv(b.row(b.rows+1), s.rank+1, tagUp); err != nil {
			return fmt.Errorf("posting the receive from rank %d: %w", s.rank+1, err)
		}
	}
	if s.rank > 0 {
		if err := s.w.Send(s.ctx, b.row(1), s.rank-1, tagUp); err != nil {
			return fmt.Errorf("sending to rank %d: %w", s.rank-1, err)
		}
	}
	if s.rank < s.p-1 {
		if err := s.w.Send(s.ctx, b.row(b.rows), s.rank+1, tagDown); err != nil {
			return fmt.Errorf("sending to rank %d: %w", s.rank+1, err)
		}
	}
	return nil
}

// wait waits for the neighbours' rows.
func (s *solver) wait() error {
	defer s.clock.Enter(s.clock.Enter(phaseExchange))
	if _, err := mpj.WaitAll(s.ctx, s.recvs[:]...); err != nil {
		return fmt.Errorf("receiving the neighbours' rows: %w", err)
	}
	return nil
}

// checksum passes the running sum from rank to rank in row order, so that one float64 adds
// every interior cell in row-major order; the last rank hands the total to rank 0, which
// returns it (the others return 0).
func (s *solver) checksum() (float64, error) {
	sum := []float64{0}
	if s.rank > 0 {
		if _, err := s.w.Recv(s.ctx, sum, s.rank-1, tagSum); err != nil {
			return 0, fmt.Errorf("checksum from rank %d: %w", s.rank-1, err)
		}
	}
	sum[0] = s.b.checksum(sum[0])
	if s.p == 1 {
		return sum[0], nil
	}
	next := (s.rank + 1) % s.p // the last rank's next is rank 0
	if err := s.w.Send(s.ctx, sum, next, tagSum); err != nil {
		return 0, fmt.Errorf("checksum to rank %d: %w", next, err)
	}
	if s.rank == 0 {
		if _, err := s.w.Recv(s.ctx, sum, s.p-1, tagSum); err != nil {
			return 0, fmt.Errorf("checksum from rank %d: %w", s.p-1, err)
		}
		return sum[0], nil
	}
	return 0, nil
}

// gather collects the interior rows at rank 0 and returns the whole (N+2) x (N+2) grid there
// (nil elsewhere). Blocks differ by at most a row, so each is padded to the largest for
// mpj's Gather.
func (s *solver) gather() ([]float64, error) {
	b, n := s.b, s.b.n
	_, maxRows := partition(n, s.p, 0)
	send := make([]float64, maxRows*n)
	for r := 1; r <= b.rows; r++ {
		copy(send[(r-1)*n:r*n], b.row(r)[1:n+1])
	}
	var recv []float64
	if s.rank == 0 {
		recv = make([]float64, s.p*maxRows*n)
	}
	if err := s.w.Gather(s.ctx, send, recv, 0); err != nil {
		return nil, fmt.Errorf("gathering the grid: %w", err)
	}
	if s.rank != 0 {
		return nil, nil
	}
	full := newBlock(n, 1, 0)
	for q := range s.p {
		lo, rows := partition(n, s.p, q)
		for r := range rows {
			src := recv[(q*maxRows+r)*n:][:n]
			copy(full.row(lo + r)[1:n+1], src)
		}
	}
	return full.g, nil
}

// verify runs the computation sequentially and compares every bit with the gathered grid.
// maxIters is -iters: the sequential run stops by the same rule.
func verify(grid []float64, res result, maxIters int) error {
	seq, iters, change := solveSeq(res.n, maxIters)
	if iters != res.iters {
		return fmt.Errorf("verify: %d iterations, the sequential computation did %d", res.iters, iters)
	}
	if math.Float64bits(change) != math.Float64bits(res.change) {
		return fmt.Errorf("verify: final change %.17g, sequentially %.17g", res.change, change)
	}
	w := res.n + 2
	for k, v := range seq.g {
		if math.Float64bits(v) != math.Float64bits(grid[k]) {
			return fmt.Errorf("verify: cell (%d, %d) is %.17g, sequentially %.17g", k/w, k%w, grid[k], v)
		}
	}
	if sum := seq.checksum(0); math.Float64bits(sum) != math.Float64bits(res.checksum) {
		return fmt.Errorf("verify: checksum %.17g, sequentially %.17g", res.checksum, sum)
	}
	return nil
}
