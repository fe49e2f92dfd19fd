package main

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/stats"
)

// collCurves indexes sextiles by operation and p: T(n) as a curve.
type collCurves map[string]map[int]*curve

// collIndex computes the lower sextile of every point and groups them into curves.
func collIndex(pts []collPoint) (collCurves, error) {
	out := collCurves{}
	for _, pt := range pts {
		t, err := stats.LowerSextile(pt.Seconds)
		if err != nil {
			return nil, fmt.Errorf("%s, %d processes, %d bytes: %w", pt.Op, pt.Procs, pt.Size, err)
		}
		if out[pt.Op] == nil {
			out[pt.Op] = map[int]*curve{}
		}
		c := out[pt.Op][pt.Procs]
		if c == nil {
			c = &curve{name: fmt.Sprintf("%s p=%d", pt.Op, pt.Procs)}
			out[pt.Op][pt.Procs] = c
		}
		c.N = append(c.N, float64(pt.Size))
		c.T = append(c.T, t)
	}
	return out, nil
}

// at returns T(n) of op at p, or NaN.
func (cc collCurves) at(op string, p int, n float64) float64 {
	c := cc[op][p]
	if c == nil {
		return math.NaN()
	}
	for i, x := range c.N {
		if x == n {
			return c.T[i]
		}
	}
	return math.NaN()
}

// durOrDash is a Duration cell, or "-" for a missing figure.
func durOrDash(s float64) any {
	if math.IsNaN(s) {
		return "-"
	}
	return seconds(s)
}

// ratioOrDash is a/b, or "-" when either figure is missing.
func ratioOrDash(a, b float64) any {
	if math.IsNaN(a) || math.IsNaN(b) {
		return "-"
	}
	return a / b
}

func pkey(p int) string { return "p=" + strconv.Itoa(p) }

// zeroSizeNote says why a collective's mpj/MPI ratio is left out at size 0.
const zeroSizeNote = "mpj/MPI at size 0: n/a, because Open MPI returns at once from a collective with count 0 (no communication), while mpj still exchanges the algorithm's messages; the ratio would compare a message round with a function call. Use size 1 for latency"

// collRatio is the mpj/MPI cell of an operation with a payload at n bytes: the ratio, or
// n/a at size 0 (zeroSizeNote). Barrier, which has no size, is called with n = -1.
func collRatio(mpj, mpi float64, n int) any {
	if n == 0 {
		return "n/a (size 0)"
	}
	return mpj / mpi
}

func collReport(r *collResults) (*report.Report, error) {
	rep := report.New("collectives")
	mine, err := collIndex(r.mpj)
	if err != nil {
		return nil, err
	}
	theirs, err := collIndex(r.mpi)
	if err != nil {
		return nil, err
	}
	haveMPI := len(r.mpi) > 0
	method := fmt.Sprintf("T(n, p) = lower sextile over %d repetitions (each after a synchronisation: a 1-element Allreduce in mpj, MPI_Barrier in Open MPI; %d untimed calls first) of the per-repetition maximum over the ranks; n is bytes per rank block (the buffer for Bcast, Reduce, Allreduce), root rank 0, reductions sum bytes",
		r.cfg.reps, r.cfg.warmup)
	about := fmt.Sprintf("mpj over %s, %s", r.impl, r.where)
	notes := []string{method, about, r.mpiNote}
	var over []int
	for _, p := range r.procs {
		if p > r.cpus {
			over = append(over, p)
		}
	}
	if len(over) > 0 {
		notes = append(notes, fmt.Sprintf("p = %v is more processes than this machine's %d CPUs: oversubscribed, both mpj and Open MPI", over, r.cpus))
	}
	maxN := float64(r.cfg.sizes[len(r.cfg.sizes)-1])

	// Barrier: one figure per p.
	if mine["barrier"] != nil {
		t := &report.Table{Title: "collectives barrier: T(p)", Columns: []string{"p", "mpj", "Open MPI", "mpj/MPI"}, Notes: notes}
		raw := mine[rawFlatOp] != nil
		if raw {
			t.Columns = append(t.Columns, "raw flat", "raw dissem.", "mpj/raw", "best raw/MPI")
			t.Notes = append(t.Notes, "raw: a barrier over plain TCP connections between the same processes, one byte per signal, read by the waiting goroutine, timed the same way: flat (gather to rank 0 and release, mpj's Barrier up to 8 ranks) and dissemination (mpj's beyond); mpj/raw against the pattern mpj uses at that p")
		}
		for _, p := range r.procs {
			a, b := mine.at("barrier", p, 0), theirs.at("barrier", p, 0)
			row := []any{p, durOrDash(a), durOrDash(b), collRatio(a, b, -1)}
			if raw {
				fl, ds := mine.at(rawFlatOp, p, 0), mine.at(rawDissemOp, p, 0)
				same := fl
				if p > rawFlatProcs {
					same = ds
				}
				row = append(row, durOrDash(fl), durOrDash(ds), ratioOrDash(a, same), ratioOrDash(min(fl, ds), b))
			}
			t.AddRow(row...)
		}
		rep.Tables = append(rep.Tables, t)
	}
	// Every other operation: sizes down, p across.
	for _, op := range r.cfg.ops {
		if op == "barrier" {
			continue
		}
		t := &report.Table{Title: "collectives " + op + ": T(n, p), mpj vs Open MPI", Columns: []string{"size (B)"}}
		for _, p := range r.procs {
			t.Columns = append(t.Columns, pkey(p)+" mpj")
			if haveMPI {
				t.Columns = append(t.Columns, pkey(p)+" MPI", pkey(p)+" mpj/MPI")
			}
		}
		for _, n := range r.cfg.sizes {
			row := []any{n}
			for _, p := range r.procs {
				a := mine.at(op, p, float64(n))
				row = append(row, durOrDash(a))
				if haveMPI {
					b := theirs.at(op, p, float64(n))
					row = append(row, durOrDash(b), collRatio(a, b, n))
				}
			}
			t.AddRow(row...)
		}
		if len(rep.Tables) == 0 {
			t.Notes = notes
		}
		if haveMPI && r.cfg.sizes[0] == 0 {
			t.Notes = append(t.Notes, zeroSizeNote)
		}
		rep.Tables = append(rep.Tables, t)
	}

	// Hockney fits per operation and p.
	fits := &report.Table{
		Title:   "collectives: fit T(n, p) = ts(p) + tb(p)*n, least squares over all sizes",
		Columns: []string{"op", "p", "ts", "tb (ns/B)", "1/tb (MB/s)", "R²"},
	}
	if haveMPI {
		fits.Columns = append(fits.Columns, "MPI ts", "MPI tb (ns/B)", "MPI R²", "ts/MPI ts", "tb/MPI tb")
	}
	fitJSON := map[string]any{}
	for name, cc := range map[string]collCurves{"mpj": mine, "openmpi": theirs} {
		byOp := map[string]any{}
		for op, byP := range cc {
			m := map[string]any{}
			for p, c := range byP {
				if h, err := stats.FitHockney(c.N, c.T); err == nil {
					m[pkey(p)] = fitValues(h)
				}
			}
			if len(m) > 0 {
				byOp[op] = m
			}
		}
		if len(byOp) > 0 {
			fitJSON[name] = byOp
		}
	}
	for _, op := range r.cfg.ops {
		if op == "barrier" {
			continue
		}
		for _, p := range r.procs {
			c := mine[op][p]
			if c == nil || len(c.N) < 2 {
				continue
			}
			h, err := stats.FitHockney(c.N, c.T)
			if err != nil {
				fits.Notes = append(fits.Notes, fmt.Sprintf("%s p=%d: no fit (%v)", op, p, err))
				continue
			}
			row := []any{op, p, seconds(h.Ts), h.Tb * 1e9, h.Bandwidth() / 1e6, h.R2}
			if haveMPI {
				if m := theirs[op][p]; m != nil && len(m.N) >= 2 {
					if hm, err := stats.FitHockney(m.N, m.T); err == nil {
						row = append(row, seconds(hm.Ts), hm.Tb*1e9, hm.R2, h.Ts/hm.Ts, h.Tb/hm.Tb)
					}
				}
			}
			fits.AddRow(row...)
		}
	}
	if len(fits.Rows) > 0 {
		fits.Notes = append(fits.Notes, "least squares on absolute times, so the large sizes set tb and ts is the intercept, not T(0); Barrier has no size and no fit")
		rep.Tables = append(rep.Tables, fits)
	}

	// The ratio at the largest size, the figure of the issue.
	ratioJSON := map[string]any{}
	if haveMPI {
		rt := &report.Table{Title: fmt.Sprintf("collectives: mpj/Open MPI at %d bytes", int(maxN)), Columns: []string{"op"}}
		for _, p := range r.procs {
			rt.Columns = append(rt.Columns, pkey(p))
		}
		for _, op := range r.cfg.ops {
			n, size := maxN, int(maxN)
			if op == "barrier" {
				n, size = 0, -1 // no size: its one figure
			}
			row := []any{op}
			m := map[string]any{}
			for _, p := range r.procs {
				a, b := mine.at(op, p, n), theirs.at(op, p, n)
				row = append(row, collRatio(a, b, size))
				if size != 0 {
					m[pkey(p)] = a / b
				}
			}
			ratioJSON[op] = m
			rt.AddRow(row...)
		}
		rep.Tables = append(rep.Tables, rt)
	}

	// Curves: one plot per operation, mpj and Open MPI for every p.
	for _, op := range r.cfg.ops {
		if op == "barrier" {
			continue
		}
		pl := &report.Plot{Title: "collectives " + op + ": T(n, p)", XLabel: "bytes per block", YLabel: "T (µs)", LogX: true, LogY: true}
		for _, p := range r.procs {
			for _, s := range []struct {
				name string
				cc   collCurves
			}{{"mpj", mine}, {"Open MPI", theirs}} {
				if c := s.cc[op][p]; c != nil {
					us := make([]float64, len(c.T))
					for i, t := range c.T {
						us[i] = t * 1e6
					}
					pl.Series = append(pl.Series, report.Series{Name: fmt.Sprintf("%s p=%d", s.name, p), X: c.N, Y: us})
				}
			}
		}
		if len(pl.Series) > 0 {
			rep.Plots = append(rep.Plots, pl)
		}
	}

	series := func(cc collCurves) map[string]any {
		out := map[string]any{}
		for op, byP := range cc {
			m := map[string]any{}
			for p, c := range byP {
				m[pkey(p)] = map[string]any{"size": c.N, "seconds": c.T}
			}
			out[op] = m
		}
		return out
	}
	rep.Set("implementation", r.impl)
	rep.Set("processes", r.procs)
	rep.Set("cpus", r.cpus)
	rep.Set("reps", r.cfg.reps)
	rep.Set("mpj", series(mine))
	rep.Set("fits", fitJSON)
	if haveMPI {
		rep.Set("openmpi", series(theirs))
		rep.Set("ratio_at_max_size", ratioJSON)
		rep.Set("mpirun", r.mpirun)
	}
	rep.Set("baseline", r.mpiNote)
	rep.Set("statistic", "lower sextile of the per-repetition max over ranks")
	rep.Set("measured_at", time.Now().UTC().Format(time.RFC3339))
	return rep, nil
}
