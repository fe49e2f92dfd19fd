package mpj

import (
	"context"
	"fmt"
)

// reduceArgs checks the buffers of a reduction: sendbuf a numeric (or bool) slice that
// op applies to, recvbuf (where it matters) of the same type and length.
func reduceArgs(sendbuf, recvbuf any, op Op, needRecv bool) (Datatype, int, error) {
	dt, n, err := bufInfo(sendbuf)
	if err != nil {
		return 0, 0, err
	}
	if err := op.appliesTo(dt); err != nil {
		return 0, 0, err
	}
	if needRecv {
		rt, rn, err := bufInfo(recvbuf)
		if err != nil {
			return 0, 0, err
		}
		if rt != dt || rn != n {
			return 0, 0, fmt.Errorf("%w: the receive buffer is %d × %s, the send buffer %d × %s", ErrCount, rn, rt, n, dt)
		}
	}
	return dt, n, nil
}

// Reduce combines every rank's sendbuf elementwise with op into root's recvbuf
// (MPI_Reduce); recvbuf is ignored (may be nil) on the other ranks, and may be
// sendbuf itself at the root. It is a binomial tree over ranks relative to the root:
// each rank combines its subtree's partial results in a fixed order (lower relative
// rank on the left), so the result is the same in every run.
func (c *Comm) Reduce(ctx context.Context, sendbuf, recvbuf any, op Op, root int) error {
	if err := c.reduce(ctx, sendbuf, recvbuf, op, root); err != nil {
		return fmt.Errorf("mpj: Reduce(%s): %w", op, err)
	}
	return nil
}

func (c *Comm) reduce(ctx context.Context, sendbuf, recvbuf any, op Op, root int) error {
	if err := c.checkRoot(root); err != nil {
		return err
	}
	dt, cnt, err := reduceArgs(sendbuf, recvbuf, op, c.rank == root)
	if err != nil {
		return err
	}
	n := c.Size()
	vr := (c.rank - root + n) % n
	acc := cloneBuf(sendbuf)
	tmp := makeBuf(dt, cnt)
	for mask := 1; mask < n; mask <<= 1 {
		if vr&mask != 0 {
			return c.csend(ctx, acc, (vr-mask+root)%n, tagReduce)
		}
		if child := vr | mask; child < n {
			if err := c.crecv(ctx, tmp, (child+root)%n, tagReduce); err != nil {
				return err
			}
			combine(op, acc, acc, tmp)
		}
	}
	copyBuf(recvbuf, acc)
	return nil
}

// Allreduce combines every rank's sendbuf elementwise with op into every rank's
// recvbuf (MPI_Allreduce); recvbuf may be sendbuf (in place). It is recursive
// doubling (log2 p exchanges of the whole buffer), with the usual fold for a p that is
// not a power of two: the first 2r ranks (r = p - 2^k) pair up, the even one hands its
// data to the odd one, and gets the result back at the end. Partners combine with the
// lower rank's partial result on the left, so every rank evaluates the same expression
// tree and the results are bit-identical on every rank, floating point included.
func (c *Comm) Allreduce(ctx context.Context, sendbuf, recvbuf any, op Op) error {
	if err := c.allreduce(ctx, sendbuf, recvbuf, op); err != nil {
		return fmt.Errorf("mpj: Allreduce(%s): %w", op, err)
	}
	return nil
}

func (c *Comm) allreduce(ctx context.Context, sendbuf, recvbuf any, op Op) error {
	dt, cnt, err := reduceArgs(sendbuf, recvbuf, op, true)
	if err != nil {
		return err
	}
	n, rank := c.Size(), c.rank
	acc := cloneBuf(sendbuf)
	tmp := makeBuf(dt, cnt)
	pof2 := topMask(n + 1) // the largest power of two <= n
	rem := n - pof2
	newrank := rank - rem
	if rank < 2*rem {
		if rank%2 == 0 {
			if err := c.csend(ctx, acc, rank+1, tagAllreduce); err != nil {
				return err
			}
			newrank = -1
		} else {
			if err := c.crecv(ctx, tmp, rank-1, tagAllreduce); err != nil {
				return err
			}
			combine(op, acc, tmp, acc)
			newrank = rank / 2
		}
	}
	if newrank >= 0 {
		for mask := 1; mask < pof2; mask <<= 1 {
			partner := newrank ^ mask
			dst := partner + rem
			if partner < rem {
				dst = 2*partner + 1
			}
			if err := c.csendrecv(ctx, acc, dst, tmp, dst, tagAllreduce); err != nil {
				return err
			}
			if partner < newrank {
				combine(op, acc, tmp, acc)
			} else {
				combine(op, acc, acc, tmp)
			}
		}
	}
	if rank < 2*rem {
		if rank%2 == 1 {
			err = c.csend(ctx, acc, rank-1, tagAllreduce)
		} else {
			err = c.crecv(ctx, acc, rank+1, tagAllreduce)
		}
		if err != nil {
			return err
		}
	}
	copyBuf(recvbuf, acc)
	return nil
}
