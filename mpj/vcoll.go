package mpj

import (
	"context"
	"fmt"

	"github.com/ibisgo/ibis/ipl"
)

// Gatherv is Gather with a count per rank (MPI_Gatherv): rank r sends len(sendbuf)
// elements, which land at recvbuf[displs[r]:displs[r]+counts[r]] on root; counts
// (which must say what each rank sends) and displs are read at the root only, nil
// displs packs the blocks in rank order. It is Gather's binomial tree: a rank learns
// the size of its children's subtree blocks from the messages themselves (a probe),
// so only the root needs the counts, and the root receives log2 p messages.
func (c *Comm) Gatherv(ctx context.Context, sendbuf, recvbuf any, counts, displs []int, root int) error {
	c.begin()
	if err := c.gatherv(ctx, sendbuf, recvbuf, counts, displs, root); err != nil {
		return fmt.Errorf("mpj: Gatherv: %w", err)
	}
	return nil
}

func (c *Comm) gatherv(ctx context.Context, sendbuf, recvbuf any, counts, displs []int, root int) error {
	if err := c.checkRoot(root); err != nil {
		return err
	}
	dt, cnt, err := bufInfo(sendbuf)
	if err != nil {
		return err
	}
	p := c.Size()
	if c.rank == root {
		if displs, err = layout(recvbuf, dt, counts, displs, p, recvBuffer); err != nil {
			return err
		}
		if counts[root] != cnt {
			return fmt.Errorf("%w: counts[%d] is %d, the send buffer holds %d", ErrCount, root, counts[root], cnt)
		}
	}
	vr := (c.rank - root + p) % p
	parts := []any{sendbuf} // this subtree's blocks in relative rank order
	for mask := 1; mask < p; mask <<= 1 {
		if vr&mask != 0 {
			return c.csend(ctx, concatBufs(dt, parts), (vr-mask+root)%p, tagGatherv)
		}
		if child := vr | mask; child < p {
			src := (child + root) % p
			st, _, err := c.w.eng.probe(ctx, c.ctx+1, src, c.ctag(tagGatherv), c.slots[src], true)
			if err != nil {
				return err
			}
			if st.Datatype != dt {
				return fmt.Errorf("%w: rank %d sent %s, this rank %s", ErrTypeMismatch, src, st.Datatype, dt)
			}
			buf := makeBuf(dt, st.Count)
			if err := c.crecv(ctx, buf, src, tagGatherv); err != nil {
				return err
			}
			parts = append(parts, buf)
		}
	}
	all := concatBufs(dt, parts)
	_, total, _ := bufInfo(all)
	off := 0
	for i := range p {
		r := (i + root) % p
		if off+counts[r] > total {
			break
		}
		copyBuf(sliceBuf(recvbuf, displs[r], displs[r]+counts[r]), sliceBuf(all, off, off+counts[r]))
		off += counts[r]
	}
	if off != total {
		return fmt.Errorf("%w: the ranks sent %d elements in all, the counts say %d", ErrCount, total, sumInts(counts))
	}
	return nil
}

// Scatterv is Scatter with a count per rank (MPI_Scatterv): rank r receives the
// counts[r] elements at root's sendbuf[displs[r]:], into recvbuf, which must hold
// exactly counts[r] elements. sendbuf, counts and displs are read at the root only
// (nil displs: packed in rank order). It is Scatter's binomial tree; each rank gets
// its subtree's counts from its parent with the blocks, so only the root needs them.
func (c *Comm) Scatterv(ctx context.Context, sendbuf, recvbuf any, counts, displs []int, root int) error {
	c.begin()
	if err := c.scatterv(ctx, sendbuf, recvbuf, counts, displs, root); err != nil {
		return fmt.Errorf("mpj: Scatterv: %w", err)
	}
	return nil
}

func (c *Comm) scatterv(ctx context.Context, sendbuf, recvbuf any, counts, displs []int, root int) error {
	if err := c.checkRoot(root); err != nil {
		return err
	}
	dt, cnt, err := bufInfo(recvbuf)
	if err != nil {
		return err
	}
	p := c.Size()
	vr := (c.rank - root + p) % p
	sub := subtree(vr, p)
	rc := make([]int64, sub) // the subtree's counts in relative rank order
	var data any             // the subtree's blocks, concatenated in that order
	mask := topMask(p) << 1
	if vr == 0 {
		if displs, err = layout(sendbuf, dt, counts, displs, p, sendBuffer); err != nil {
			return err
		}
		parts := make([]any, p)
		for i := range p {
			r := (i + root) % p
			rc[i] = int64(counts[r])
			parts[i] = sliceBuf(sendbuf, displs[r], displs[r]+counts[r])
		}
		data = concatBufs(dt, parts)
	} else {
		mask = lowbit(vr)
		parent := (vr - mask + root) % p
		if err := c.crecv(ctx, rc, parent, tagScatterv); err != nil {
			return err
		}
		data = makeBuf(dt, int(sumInt64(rc)))
		if err := c.crecv(ctx, data, parent, tagScatterv); err != nil {
			return err
		}
	}
	offs := make([]int, sub+1)
	for i, n := range rc {
		offs[i+1] = offs[i] + int(n)
	}
	for mask >>= 1; mask > 0; mask >>= 1 {
		if child := vr + mask; child < p {
			k := min(mask, p-child)
			dst := (child + root) % p
			if err := c.csend(ctx, rc[mask:mask+k], dst, tagScatterv); err != nil {
				return err
			}
			if err := c.csend(ctx, sliceBuf(data, offs[mask], offs[mask+k]), dst, tagScatterv); err != nil {
				return err
			}
		}
	}
	if int(rc[0]) != cnt {
		return fmt.Errorf("%w: rank %d's count is %d, its receive buffer holds %d", ErrCount, c.rank, rc[0], cnt)
	}
	copyBuf(recvbuf, sliceBuf(data, 0, cnt))
	return nil
}

// Alltoall sends block j of every rank's sendbuf to rank j, where it lands as block i
// of recvbuf when it came from rank i (MPI_Alltoall); both buffers hold p blocks of
// one length. It is the pairwise exchange: in step s = 1..p-1 every rank sends to
// rank+s and receives from rank-s, so each pair of ranks meets exactly once and no
// rank receives from two at a time.
func (c *Comm) Alltoall(ctx context.Context, sendbuf, recvbuf any) error {
	c.begin()
	_, n, err := bufInfo(sendbuf)
	if err != nil {
		return fmt.Errorf("mpj: Alltoall: %w", err)
	}
	p := c.Size()
	if n%p != 0 {
		return fmt.Errorf("mpj: Alltoall: %w: the send buffer's %d elements are not %d equal blocks", ErrCount, n, p)
	}
	counts := make([]int, p)
	for i := range counts {
		counts[i] = n / p
	}
	if err := c.alltoallv(ctx, sendbuf, counts, nil, recvbuf, counts, nil); err != nil {
		return fmt.Errorf("mpj: Alltoall: %w", err)
	}
	return nil
}

// Alltoallv is Alltoall with counts and displacements per rank (MPI_Alltoallv): the
// sendcounts[j] elements at sendbuf[sdispls[j]:] go to rank j, the recvcounts[i] from
// rank i land at recvbuf[rdispls[i]:]; nil displacements pack the blocks in rank
// order. recvcounts[i] must be what rank i sends here. It is the pairwise exchange,
// as Alltoall.
func (c *Comm) Alltoallv(ctx context.Context, sendbuf any, sendcounts, sdispls []int, recvbuf any, recvcounts, rdispls []int) error {
	c.begin()
	if err := c.alltoallv(ctx, sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls); err != nil {
		return fmt.Errorf("mpj: Alltoallv: %w", err)
	}
	return nil
}

func (c *Comm) alltoallv(ctx context.Context, sendbuf any, sendcounts, sdispls []int, recvbuf any, recvcounts, rdispls []int) error {
	p := c.Size()
	dt, _, err := bufInfo(sendbuf)
	if err != nil {
		return err
	}
	if sdispls, err = layout(sendbuf, dt, sendcounts, sdispls, p, sendBuffer); err != nil {
		return fmt.Errorf("send side: %w", err)
	}
	if rdispls, err = layout(recvbuf, dt, recvcounts, rdispls, p, recvBuffer); err != nil {
		return fmt.Errorf("receive side: %w", err)
	}
	me := c.rank
	if sendcounts[me] != recvcounts[me] {
		return fmt.Errorf("%w: this rank sends itself %d elements and expects %d", ErrCount, sendcounts[me], recvcounts[me])
	}
	copyBuf(sliceBuf(recvbuf, rdispls[me], rdispls[me]+recvcounts[me]), sliceBuf(sendbuf, sdispls[me], sdispls[me]+sendcounts[me]))
	for s := 1; s < p; s++ {
		dst, src := (me+s)%p, (me-s+p)%p
		out := sliceBuf(sendbuf, sdispls[dst], sdispls[dst]+sendcounts[dst])
		in := sliceBuf(recvbuf, rdispls[src], rdispls[src]+recvcounts[src])
		if err := c.csendrecv(ctx, out, dst, in, src, tagAlltoall); err != nil {
			return err
		}
	}
	return nil
}

// layout checks counts and displacements for p ranks over buf, the send or the receive
// buffer (which), of element type dt, and returns the displacements, packed in rank
// order when displs is nil.
func layout(buf any, dt Datatype, counts, displs []int, p int, which string) ([]int, error) {
	switch {
	case len(counts) != p:
		return nil, fmt.Errorf("%w: %d counts (%s) for %d ranks", ipl.ErrInvalidArgument, len(counts), which, p)
	case displs != nil && len(displs) != p:
		return nil, fmt.Errorf("%w: %d displacements (%s) for %d ranks", ipl.ErrInvalidArgument, len(displs), which, p)
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
			return nil, fmt.Errorf("%w: counts[%d] = %d, displs[%d] = %d", ipl.ErrInvalidArgument, r, counts[r], r, displs[r])
		}
		need = max(need, displs[r]+counts[r])
	}
	return displs, blocksFit(buf, dt, need, which)
}

// concatBufs returns the buffers of type dt one after the other in a new buffer (the
// only one, without a copy, when there is one).
func concatBufs(dt Datatype, parts []any) any {
	if len(parts) == 1 {
		return parts[0]
	}
	n := 0
	for _, b := range parts {
		_, k, _ := bufInfo(b)
		n += k
	}
	all := makeBuf(dt, n)
	off := 0
	for _, b := range parts {
		_, k, _ := bufInfo(b)
		copyBuf(sliceBuf(all, off, off+k), b)
		off += k
	}
	return all
}

func sumInts(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}

func sumInt64(v []int64) int64 {
	var s int64
	for _, x := range v {
		s += x
	}
	return s
}
