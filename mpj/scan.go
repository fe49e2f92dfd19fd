package mpj

import (
	"context"
	"fmt"
)

// Scan is the inclusive prefix reduction (MPI_Scan): rank r's recvbuf gets
// a0 o a1 o ... o ar of the ranks' sendbufs, elementwise; recvbuf may be sendbuf. It
// is recursive doubling: in round k every rank exchanges the reduction of its aligned
// block of 2^k ranks with the rank 2^k away, so it takes ceil(log2 p) rounds. Operands
// are combined in rank order (the lower ranks' on the left), so it is right for
// operators that are not commutative, and the same in every run.
func (c *Comm) Scan(ctx context.Context, sendbuf, recvbuf any, op Op) error {
	c.begin()
	if err := c.scan(ctx, sendbuf, recvbuf, op, false); err != nil {
		return fmt.Errorf("mpj: Scan(%s): %w", op, err)
	}
	return nil
}

// Exscan is the exclusive prefix reduction (MPI_Exscan): rank r's recvbuf gets
// a0 o ... o a(r-1); rank 0's recvbuf is left as it was (MPI leaves it undefined).
// It is recursive doubling, as Scan.
func (c *Comm) Exscan(ctx context.Context, sendbuf, recvbuf any, op Op) error {
	c.begin()
	if err := c.scan(ctx, sendbuf, recvbuf, op, true); err != nil {
		return fmt.Errorf("mpj: Exscan(%s): %w", op, err)
	}
	return nil
}

func (c *Comm) scan(ctx context.Context, sendbuf, recvbuf any, op Op, exclusive bool) error {
	dt, cnt, err := reduceArgs(sendbuf, recvbuf, op, true)
	if err != nil {
		return err
	}
	p, me := c.Size(), c.rank
	partial := cloneBuf(sendbuf) // the reduction of my aligned block so far
	var prefix any               // the reduction of the ranks below me so far
	tmp := makeBuf(dt, cnt)
	for mask := 1; mask < p; mask <<= 1 {
		dst := me ^ mask
		if dst >= p {
			continue
		}
		if err := c.csendrecv(ctx, partial, dst, tmp, dst, tagScan); err != nil {
			return err
		}
		if dst < me { // tmp covers the ranks just below my block
			combine(op, partial, tmp, partial)
			if prefix == nil {
				prefix = cloneBuf(tmp)
			} else {
				combine(op, prefix, tmp, prefix)
			}
		} else {
			combine(op, partial, partial, tmp)
		}
	}
	switch {
	case !exclusive && prefix != nil:
		combine(op, prefix, prefix, sendbuf)
		copyBuf(recvbuf, prefix)
	case !exclusive:
		copyBuf(recvbuf, sendbuf)
	case prefix != nil:
		copyBuf(recvbuf, prefix)
	}
	return nil
}

// Reduce_scatter reduces the ranks' sendbufs elementwise with op and scatters the
// result (MPI_Reduce_scatter): sendbuf holds counts[0] + ... + counts[p-1] elements
// on every rank, and rank r's recvbuf (at least counts[r] elements) gets the reduced
// elements of block r. It is the pairwise exchange: every rank sends block j of its
// sendbuf to rank j (each block crosses the network once, the least data any
// algorithm moves), and each rank folds the p contributions to its block in rank
// order, a0 o a1 o ... o a(p-1), so the result is the same in every run and right for
// operators that are not commutative.
func (c *Comm) Reduce_scatter(ctx context.Context, sendbuf, recvbuf any, counts []int, op Op) error {
	c.begin()
	if err := c.reduceScatter(ctx, sendbuf, recvbuf, counts, op); err != nil {
		return fmt.Errorf("mpj: Reduce_scatter(%s): %w", op, err)
	}
	return nil
}

// Reduce_scatter_block is Reduce_scatter with every block of len(recvbuf) elements
// (MPI_Reduce_scatter_block): sendbuf holds p of them.
func (c *Comm) Reduce_scatter_block(ctx context.Context, sendbuf, recvbuf any, op Op) error {
	c.begin()
	_, n, err := bufInfo(recvbuf)
	if err != nil {
		return fmt.Errorf("mpj: Reduce_scatter_block(%s): %w", op, err)
	}
	counts := make([]int, c.Size())
	for i := range counts {
		counts[i] = n
	}
	if err := c.reduceScatter(ctx, sendbuf, recvbuf, counts, op); err != nil {
		return fmt.Errorf("mpj: Reduce_scatter_block(%s): %w", op, err)
	}
	return nil
}

func (c *Comm) reduceScatter(ctx context.Context, sendbuf, recvbuf any, counts []int, op Op) error {
	dt, n, err := reduceArgs(sendbuf, nil, op, false)
	if err != nil {
		return err
	}
	p, me := c.Size(), c.rank
	displs, err := layout(sendbuf, dt, counts, nil, p, sendBuffer)
	if err != nil {
		return err
	}
	if total := displs[p-1] + counts[p-1]; total != n {
		return fmt.Errorf("%w: the counts add up to %d, the send buffer holds %d", ErrCount, total, n)
	}
	if op.pairs() {
		for r, k := range counts {
			if k%2 != 0 {
				return fmt.Errorf("%w: counts[%d] = %d splits a (value, index) pair of %s", ErrCount, r, k, op)
			}
		}
	}
	if err := blocksFit(recvbuf, dt, counts[me], recvBuffer); err != nil {
		return err
	}
	block := func(r int) any { return sliceBuf(sendbuf, displs[r], displs[r]+counts[r]) }
	for s := 1; s < p; s++ { // sends never wait for their receives
		dst := (me + s) % p
		if err := c.csend(ctx, block(dst), dst, tagReduceScatter); err != nil {
			return err
		}
	}
	acc := makeBuf(dt, counts[me])
	tmp := makeBuf(dt, counts[me])
	for r := range p {
		in := tmp
		if r == me {
			in = block(me)
		} else if err := c.crecv(ctx, tmp, r, tagReduceScatter); err != nil {
			return err
		}
		if r == 0 {
			copyBuf(acc, in)
		} else {
			combine(op, acc, acc, in)
		}
	}
	copyBuf(recvbuf, acc)
	return nil
}
