package mpj

import (
	"context"
	"fmt"

	"github.com/ibisgo/ibis/ipl"
)

// Allgather collects every rank's sendbuf (all of one length n) into every rank's
// recvbuf, rank r's elements at recvbuf[r*n:(r+1)*n] (MPI_Allgather). It is the ring
// algorithm: in each of p-1 steps every rank passes the block it got last to its right
// neighbour while receiving the next from its left one, so every link carries each
// block once and the time is bandwidth-optimal for large blocks.
func (c *Comm) Allgather(ctx context.Context, sendbuf, recvbuf any) error {
	c.begin()
	_, cnt, err := bufInfo(sendbuf)
	if err != nil {
		return fmt.Errorf("mpj: Allgather: %w", err)
	}
	counts := make([]int, c.Size())
	for i := range counts {
		counts[i] = cnt
	}
	if err := c.allgatherv(ctx, sendbuf, recvbuf, counts, nil); err != nil {
		return fmt.Errorf("mpj: Allgather: %w", err)
	}
	return nil
}

// Allgatherv is Allgather with a count per rank (MPI_Allgatherv): rank r contributes
// counts[r] elements (len(sendbuf) must be counts[r] on rank r), which land at
// recvbuf[displs[r]:displs[r]+counts[r]] on every rank. A nil displs packs the blocks
// in rank order (displs[r] = counts[0] + ... + counts[r-1]). Every rank must pass the
// same counts. It is the ring algorithm, as Allgather.
func (c *Comm) Allgatherv(ctx context.Context, sendbuf, recvbuf any, counts, displs []int) error {
	c.begin()
	if err := c.allgatherv(ctx, sendbuf, recvbuf, counts, displs); err != nil {
		return fmt.Errorf("mpj: Allgatherv: %w", err)
	}
	return nil
}

func (c *Comm) allgatherv(ctx context.Context, sendbuf, recvbuf any, counts, displs []int) error {
	p := c.Size()
	dt, cnt, err := bufInfo(sendbuf)
	if err != nil {
		return err
	}
	if len(counts) != p || (displs != nil && len(displs) != p) {
		return fmt.Errorf("%w: %d counts and %d displacements for %d ranks", ipl.ErrInvalidArgument, len(counts), len(displs), p)
	}
	if counts[c.rank] != cnt {
		return fmt.Errorf("%w: counts[%d] is %d, the send buffer holds %d", ErrCount, c.rank, counts[c.rank], cnt)
	}
	if displs == nil {
		displs = make([]int, p)
		for r := 1; r < p; r++ {
			displs[r] = displs[r-1] + counts[r-1]
		}
	}
	need := 0
	for r := range p {
		if counts[r] < 0 || displs[r] < 0 {
			return fmt.Errorf("%w: counts[%d] = %d, displs[%d] = %d", ipl.ErrInvalidArgument, r, counts[r], r, displs[r])
		}
		need = max(need, displs[r]+counts[r])
	}
	if err := blocksFit(recvbuf, dt, need, recvBuffer); err != nil {
		return err
	}
	block := func(r int) any { return sliceBuf(recvbuf, displs[r], displs[r]+counts[r]) }
	copyBuf(block(c.rank), sendbuf)
	left, right := (c.rank-1+p)%p, (c.rank+1)%p
	for s := range p - 1 {
		out, in := (c.rank-s+p)%p, (c.rank-s-1+p)%p
		if err := c.csendrecv(ctx, block(out), right, block(in), left, tagAllgather); err != nil {
			return err
		}
	}
	return nil
}
