package mpj

import (
	"context"
	"fmt"
)

// Gather collects every rank's sendbuf (all of one length n) into root's recvbuf, rank
// r's elements at recvbuf[r*n:(r+1)*n] (MPI_Gather); recvbuf is ignored (may be nil)
// on the other ranks. It is a binomial tree: each rank receives its subtree's blocks
// from its children, already contiguous, and sends them to its parent in one message,
// so it takes ceil(log2 p) steps and the root receives log2 p messages.
func (c *Comm) Gather(ctx context.Context, sendbuf, recvbuf any, root int) error {
	if err := c.gather(ctx, sendbuf, recvbuf, root); err != nil {
		return fmt.Errorf("mpj: Gather: %w", err)
	}
	return nil
}

func (c *Comm) gather(ctx context.Context, sendbuf, recvbuf any, root int) error {
	if err := c.checkRoot(root); err != nil {
		return err
	}
	dt, cnt, err := bufInfo(sendbuf)
	if err != nil {
		return err
	}
	p := c.Size()
	if c.rank == root {
		if err := blocksFit(recvbuf, dt, p*cnt); err != nil {
			return err
		}
	}
	vr := (c.rank - root + p) % p
	tmp := makeBuf(dt, subtree(vr, p)*cnt)
	copyBuf(tmp, sendbuf)
	have := 1
	for mask := 1; mask < p; mask <<= 1 {
		if vr&mask != 0 {
			return c.csend(ctx, sliceBuf(tmp, 0, have*cnt), (vr-mask+root)%p, tagGather)
		}
		if child := vr | mask; child < p {
			k := min(mask, p-child)
			if err := c.crecv(ctx, sliceBuf(tmp, have*cnt, (have+k)*cnt), (child+root)%p, tagGather); err != nil {
				return err
			}
			have += k
		}
	}
	for i := range p { // relative order back to rank order
		r := (i + root) % p
		copyBuf(sliceBuf(recvbuf, r*cnt, (r+1)*cnt), sliceBuf(tmp, i*cnt, (i+1)*cnt))
	}
	return nil
}

// Scatter hands root's sendbuf out in blocks of len(recvbuf) elements, block r to rank
// r's recvbuf (MPI_Scatter); sendbuf is ignored (may be nil) on the other ranks. It is
// the reverse of Gather's binomial tree: each rank receives its subtree's blocks from
// its parent in one message and passes its children theirs.
func (c *Comm) Scatter(ctx context.Context, sendbuf, recvbuf any, root int) error {
	if err := c.scatter(ctx, sendbuf, recvbuf, root); err != nil {
		return fmt.Errorf("mpj: Scatter: %w", err)
	}
	return nil
}

func (c *Comm) scatter(ctx context.Context, sendbuf, recvbuf any, root int) error {
	if err := c.checkRoot(root); err != nil {
		return err
	}
	dt, cnt, err := bufInfo(recvbuf)
	if err != nil {
		return err
	}
	p := c.Size()
	vr := (c.rank - root + p) % p
	tmp := makeBuf(dt, subtree(vr, p)*cnt)
	mask := topMask(p) << 1
	if vr == 0 {
		if err := blocksFit(sendbuf, dt, p*cnt); err != nil {
			return err
		}
		for i := range p {
			r := (i + root) % p
			copyBuf(sliceBuf(tmp, i*cnt, (i+1)*cnt), sliceBuf(sendbuf, r*cnt, (r+1)*cnt))
		}
	} else {
		mask = lowbit(vr)
		if err := c.crecv(ctx, tmp, (vr-mask+root)%p, tagScatter); err != nil {
			return err
		}
	}
	for mask >>= 1; mask > 0; mask >>= 1 {
		if child := vr + mask; child < p {
			k := min(mask, p-child)
			if err := c.csend(ctx, sliceBuf(tmp, mask*cnt, (mask+k)*cnt), (child+root)%p, tagScatter); err != nil {
				return err
			}
		}
	}
	copyBuf(recvbuf, sliceBuf(tmp, 0, cnt))
	return nil
}

// blocksFit checks that buf is a slice of type dt with room for n elements.
func blocksFit(buf any, dt Datatype, n int) error {
	bt, bn, err := bufInfo(buf)
	if err != nil {
		return err
	}
	if bt != dt {
		return fmt.Errorf("%w: the buffer is a []%s, the elements are %s", ErrTypeMismatch, bt, dt)
	}
	if bn < n {
		return fmt.Errorf("%w: the buffer holds %d elements, it needs %d", ErrTruncated, bn, n)
	}
	return nil
}
