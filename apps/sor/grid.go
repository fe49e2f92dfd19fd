package main

import "math"

// The fixed borders of the grid (issue 12): row 0, row N+1, then column 0 and column N+1 on
// the other rows.
const (
	borderTop    = 4.56
	borderBottom = 9.85
	borderLeft   = 7.32
	borderRight  = 6.88
)

// params are the relaxation factor and the convergence bound of an N x N interior.
type params struct {
	omega    float64 // 0.8 * w_opt
	stopdiff float64 // 0.00001 / (2 - w_opt)
}

func newParams(n int) params {
	c := math.Cos(math.Pi / float64(n+2))
	r := (c + c) / 2
	// float64(...) rounds the product: no fused multiply-add, on any architecture.
	wopt := 2 / (1 + math.Sqrt(1-float64(r*r)))
	return params{omega: 0.8 * wopt, stopdiff: 0.00001 / (2 - wopt)}
}

// block is the part of the (N+2) x (N+2) grid that one process holds: its rows lo..lo+rows-1
// of the interior and one row on each side (a ghost row copied from a neighbour, or a fixed
// border row), row-major, N+2 values per row. Local row r is global row lo-1+r.
type block struct {
	n, lo, rows int
	g           []float64
}

// partition returns the first interior row and the number of rows of rank of p: contiguous
// blocks, as even as possible (the first n mod p ranks have one row more).
func partition(n, p, rank int) (lo, rows int) {
	q, rem := n/p, n%p
	rows = q
	if rank < rem {
		rows++
	}
	return 1 + rank*q + min(rank, rem), rows
}

// newBlock returns rank's block of the initial grid: the borders set, the interior 0.
func newBlock(n, p, rank int) *block {
	lo, rows := partition(n, p, rank)
	w := n + 2
	b := &block{n: n, lo: lo, rows: rows, g: make([]float64, (rows+2)*w)}
	for r := 0; r < rows+2; r++ {
		row := b.row(r)
		switch i := lo - 1 + r; i {
		case 0:
			fill(row, borderTop)
		case n + 1:
			fill(row, borderBottom)
		default:
			row[0], row[w-1] = borderLeft, borderRight
		}
	}
	return b
}

func fill(s []float64, v float64) {
	for i := range s {
		s[i] = v
	}
}

// row returns local row r (0..rows+1), N+2 values.
func (b *block) row(r int) []float64 {
	w := b.n + 2
	return b.g[r*w:][:w]
}

// sweep updates colour c (the cells (i, j) with i+j+c odd) of local rows from..to, inclusive,
// and returns the largest |gNew - g| among them (0 for an empty range). Within a colour every
// update reads only cells of the other colour, so the order of the updates does not matter:
// any split into blocks gives the same bits.
//
// Two tricks keep it near a C loop without changing a bit: the right neighbour of one cell is
// the left neighbour of the next (same colour, so not updated in between) and stays in a
// register; and the largest |d| is kept as bits, since the bits of non-negative floats order
// as their values, so that the maximum is an integer max (a conditional move, not a branch
// that mispredicts while the change is still growing).
func (b *block) sweep(from, to, c int, omega float64) float64 {
	w := b.n + 2
	var maxBits uint64
	for r := from; r <= to; r++ {
		up, row, dn := b.g[(r-1)*w:][:w], b.g[r*w:][:w], b.g[(r+1)*w:][:w]
		j := 1 + (b.lo-1+r+c)&1
		left := row[j-1]
		for ; j < w-1; j += 2 {
			old, right := row[j], row[j+1]
			gNew := (((up[j] + dn[j]) + left) + right) / 4
			left = right
			d := gNew - old
			maxBits = max(maxBits, math.Float64bits(d)&^(1<<63)) // |d|
			// The explicit conversion rounds the product before the addition (Go spec,
			// "Floating-point operators"): never a fused multiply-add.
			row[j] = old + float64(omega*d)
		}
	}
	return math.Float64frombits(maxBits)
}

// wavefront updates colour 0 of local rows from..to and colour 1 of the rows of lagFrom..lagTo
// among them, in one pass over the rows: colour 1 of row r-1 right after colour 0 of row r,
// while rows r-1 and r are still in the cache, so that an iteration streams the grid through
// memory once instead of twice. That changes no bit: colour 1 of a row reads only colour 0
// cells of it and of the rows next to it, which are all updated by then (the caller has
// updated colour 0 of any row next to lagFrom..lagTo outside from..to), and colour 0 of row r
// reads colour 1 of rows r-1 and r+1 before either is updated. It returns the largest change
// of each colour.
func (b *block) wavefront(from, to, lagFrom, lagTo int, omega float64) (d0, d1 float64) {
	for r := from; r <= to; r++ {
		d0 = max(d0, b.sweep(r, r, 0, omega))
		if q := r - 1; q >= lagFrom && q <= lagTo && q >= from {
			d1 = max(d1, b.sweep(q, q, 1, omega))
		}
	}
	if to >= lagFrom && to <= lagTo && to >= from {
		d1 = max(d1, b.sweep(to, to, 1, omega))
	}
	return d0, d1
}

// exchanger moves the first and last rows of a block to its neighbours and theirs into its
// ghost rows: start sends and posts the receives, wait waits for them.
type exchanger interface {
	start() error
	wait() error
}

// iterate does one iteration: colour 0, then colour 1, each after an exchange of the first
// and last rows with the neighbours (ex); it returns the block's largest change. The rows in
// between are relaxed in one wavefront pass while an exchange travels: without async the
// second one (colour 0 of the first and last rows goes first, so that they can be sent); with
// async the first one too (colour 0 of the inner rows and colour 1 of the rows not next to the
// first and last go first, the rest after the neighbours' rows have come).
func (b *block) iterate(omega float64, async bool, ex exchanger) (float64, error) {
	rows := b.rows
	edges := func(c int) float64 { // colour c of the first and last rows
		d := b.sweep(1, 1, c, omega)
		if rows > 1 {
			d = max(d, b.sweep(rows, rows, c, omega))
		}
		return d
	}
	var inner0, inner1 float64
	if err := ex.start(); err != nil {
		return 0, err
	}
	if async {
		inner0, inner1 = b.wavefront(2, rows-1, 3, rows-2, omega)
	}
	if err := ex.wait(); err != nil {
		return 0, err
	}
	d := edges(0)
	if err := ex.start(); err != nil {
		return 0, err
	}
	if !async {
		inner0, inner1 = b.wavefront(2, rows-1, 2, rows-1, omega)
	} else if rows >= 3 { // colour 1 of the rows next to the first and last
		d = max(d, b.sweep(2, 2, 1, omega))
		if rows > 3 {
			d = max(d, b.sweep(rows-1, rows-1, 1, omega))
		}
	}
	if err := ex.wait(); err != nil {
		return 0, err
	}
	return max(d, inner0, inner1, edges(1)), nil
}

// checksum adds the interior cells of the block to sum in row-major order.
func (b *block) checksum(sum float64) float64 {
	for r := 1; r <= b.rows; r++ {
		row := b.row(r)
		for j := 1; j <= b.n; j++ {
			sum += row[j]
		}
	}
	return sum
}

// solveSeq runs the whole computation in this process: iterations until the change is at most
// stopdiff, or maxIters of them when maxIters > 0. It returns the grid (one block of all rows),
// the iterations done and the last iteration's change.
func solveSeq(n, maxIters int) (b *block, iters int, change float64) {
	b = newBlock(n, 1, 0)
	pr := newParams(n)
	for {
		d0 := b.sweep(1, b.rows, 0, pr.omega)
		d1 := b.sweep(1, b.rows, 1, pr.omega)
		change = d0
		if d1 > change {
			change = d1
		}
		iters++
		if change <= pr.stopdiff || iters == maxIters {
			return b, iters, change
		}
	}
}
