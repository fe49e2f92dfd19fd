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
	c.begin()
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
	vr := (c.rank - root + p) % p
	if vr == 0 {
		if err := blocksFit(recvbuf, dt, p*cnt, recvBuffer); err != nil {
			return err
		}
		// The root receives each child's blocks straight into recvbuf.
		copyBuf(sliceBuf(recvbuf, root*cnt, (root+1)*cnt), sendbuf)
		for mask := 1; mask < p; mask <<= 1 {
			k := min(mask, p-mask)
			if err := c.recvBlocks(ctx, recvbuf, dt, cnt, mask, k, root, tagGather); err != nil {
				return err
			}
		}
		return nil
	}
	n := subtree(vr, p)
	parent := (vr - lowbit(vr) + root) % p
	if n == 1 { // a leaf sends its own buffer
		return c.csend(ctx, sendbuf, parent, tagGather)
	}
	tmp := makeBuf(dt, n*cnt)
	copyBuf(tmp, sendbuf)
	for mask := 1; mask < n; mask <<= 1 {
		child := vr | mask
		k := min(mask, p-child)
		if err := c.crecv(ctx, sliceBuf(tmp, mask*cnt, (mask+k)*cnt), (child+root)%p, tagGather); err != nil {
			return err
		}
	}
	return c.csend(ctx, tmp, parent, tagGather)
}

// recvBlocks receives, at the root, the k blocks of the subtree of relative rank vr
// (ranks vr+root .. vr+root+k-1, modulo p) from that child into their places in buf:
// directly when they do not wrap around the end of buf, else through a buffer of their
// own.
func (c *Comm) recvBlocks(ctx context.Context, buf any, dt Datatype, cnt, vr, k, root, tag int) error {
	p := c.Size()
	lo := (vr + root) % p
	if lo+k <= p {
		return c.crecv(ctx, sliceBuf(buf, lo*cnt, (lo+k)*cnt), lo, tag)
	}
	tmp := makeBuf(dt, k*cnt)
	if err := c.crecv(ctx, tmp, lo, tag); err != nil {
		return err
	}
	head := p - lo // blocks up to the end of buf; the rest wraps to its start
	copyBuf(sliceBuf(buf, lo*cnt, p*cnt), sliceBuf(tmp, 0, head*cnt))
	copyBuf(sliceBuf(buf, 0, (k-head)*cnt), sliceBuf(tmp, head*cnt, k*cnt))
	return nil
}

// sendBlocks sends, from the root, the k blocks of the subtree of relative rank vr to
// that child: straight from buf when they do not wrap around its end, else gathered
// into a buffer of their own.
func (c *Comm) sendBlocks(ctx context.Context, buf any, dt Datatype, cnt, vr, k, root, tag int) error {
	p := c.Size()
	lo := (vr + root) % p
	if lo+k <= p {
		return c.csend(ctx, sliceBuf(buf, lo*cnt, (lo+k)*cnt), lo, tag)
	}
	tmp := makeBuf(dt, k*cnt)
	head := p - lo
	copyBuf(sliceBuf(tmp, 0, head*cnt), sliceBuf(buf, lo*cnt, p*cnt))
	copyBuf(sliceBuf(tmp, head*cnt, k*cnt), sliceBuf(buf, 0, (k-head)*cnt))
	return c.csend(ctx, tmp, lo, tag)
}

// Scatter hands root's sendbuf out in blocks of len(recvbuf) elements, block r to rank
// r's recvbuf (MPI_Scatter); sendbuf is ignored (may be nil) on the other ranks. It is
// the reverse of Gather's binomial tree: each rank receives its subtree's blocks from
// its parent in one message and passes its children theirs. Blocks of up to 1 KiB
// among up to 8 ranks go from the root to each rank directly instead (small.go).
func (c *Comm) Scatter(ctx context.Context, sendbuf, recvbuf any, root int) error {
	c.begin()
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
	if c.rank == root {
		if err := blocksFit(sendbuf, dt, p*cnt, sendBuffer); err != nil {
			return err
		}
	}
	if c.flat(dt, cnt) {
		return c.scatterFlat(ctx, sendbuf, recvbuf, cnt, root)
	}
	vr := (c.rank - root + p) % p
	if vr == 0 {
		// The root sends each child its blocks straight from sendbuf, farthest first.
		for mask := topMask(p); mask > 0; mask >>= 1 {
			k := min(mask, p-mask)
			if err := c.sendBlocks(ctx, sendbuf, dt, cnt, mask, k, root, tagScatter); err != nil {
				return err
			}
		}
		copyBuf(recvbuf, sliceBuf(sendbuf, root*cnt, (root+1)*cnt))
		return nil
	}
	n := subtree(vr, p)
	parent := (vr - lowbit(vr) + root) % p
	if n == 1 { // a leaf receives its block in place
		return c.crecv(ctx, recvbuf, parent, tagScatter)
	}
	tmp := makeBuf(dt, n*cnt)
	if err := c.crecv(ctx, tmp, parent, tagScatter); err != nil {
		return err
	}
	for mask := topMask(n); mask > 0; mask >>= 1 {
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

// The buffers blocksFit and layout check.
const (
	recvBuffer = "receive buffer"
	sendBuffer = "send buffer"
)

// blocksFit checks that buf, the send or the receive buffer (which), is a slice of type
// dt with room for n elements: a receive buffer too short is ErrTruncated, a send buffer
// that holds fewer elements than the call sends is ErrCount.
func blocksFit(buf any, dt Datatype, n int, which string) error {
	bt, bn, err := bufInfo(buf)
	if err != nil {
		return err
	}
	if bt != dt {
		return fmt.Errorf("%w: the %s is a []%s, the elements are %s", ErrTypeMismatch, which, bt, dt)
	}
	if bn < n {
		short := ErrTruncated
		if which == sendBuffer {
			short = ErrCount
		}
		return fmt.Errorf("%w: the %s holds %d elements, it needs %d", short, which, bn, n)
	}
	return nil
}
