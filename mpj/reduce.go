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
	if op.pairs() && n%2 != 0 {
		return 0, 0, fmt.Errorf("%w: %s needs (value, index) pairs, the buffer holds %d elements", ErrCount, op, n)
	}
	if needRecv {
		rt, rn, err := bufInfo(recvbuf)
		if err != nil {
			return 0, 0, err
		}
		if rt != dt {
			return 0, 0, fmt.Errorf("%w: the receive buffer is a []%s, the send buffer a []%s", ErrTypeMismatch, rt, dt)
		}
		if rn != n {
			return 0, 0, fmt.Errorf("%w: the receive buffer holds %d elements, the send buffer %d", ErrCount, rn, n)
		}
	}
	return dt, n, nil
}

// Reduce combines every rank's sendbuf elementwise with op into root's recvbuf
// (MPI_Reduce); recvbuf is ignored (may be nil) on the other ranks, and may be
// sendbuf itself at the root. It is a binomial tree over ranks relative to the root:
// each rank combines its subtree's partial results in a fixed order (lower relative
// rank on the left), so the result is the same in every run. For an operator that is
// not commutative (NewOp) the tree is rooted at rank 0, which keeps rank order, and
// rank 0 sends the result to root.
func (c *Comm) Reduce(ctx context.Context, sendbuf, recvbuf any, op Op, root int) error {
	c.begin()
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
	if !op.commutative() && root != 0 {
		// The tree below keeps rank order only when it is rooted at rank 0.
		var res any
		if c.rank == 0 {
			res = makeBuf(dt, cnt)
		}
		if err := c.reduceTree(ctx, sendbuf, res, op, 0, dt, cnt); err != nil {
			return err
		}
		switch c.rank {
		case 0:
			return c.csend(ctx, res, root, tagReduce)
		case root:
			return c.crecv(ctx, recvbuf, 0, tagReduce)
		}
		return nil
	}
	return c.reduceTree(ctx, sendbuf, recvbuf, op, root, dt, cnt)
}

// reduceTree is the binomial tree of Reduce over ranks relative to root: it combines
// in rank order when root is 0, in relative-rank order otherwise. A rank posts the
// receives of all its children's parts first, each into a buffer of its own, so that
// a part that comes early is read straight into place instead of being queued and
// copied.
func (c *Comm) reduceTree(ctx context.Context, sendbuf, recvbuf any, op Op, root int, dt Datatype, cnt int) error {
	n := c.Size()
	vr := (c.rank - root + n) % n
	var children []int // relative ranks, nearest first
	mask := 1
	for ; mask < n && vr&mask == 0; mask <<= 1 {
		if child := vr | mask; child < n {
			children = append(children, child)
		}
	}
	parent := -1
	if vr != 0 {
		parent = (vr - mask + root) % n // mask is vr's lowest set bit
	}
	if len(children) == 0 {
		if parent < 0 { // a root without children: P = 1
			copyBuf(recvbuf, sendbuf)
			return nil
		}
		return c.csend(ctx, sendbuf, parent, tagReduce) // a leaf sends its buffer untouched
	}
	parts := make([]any, len(children))
	reqs := make([]*Request, len(children))
	defer func() {
		for _, b := range parts {
			putScratch(dt, b)
		}
	}()
	for i, child := range children {
		parts[i] = getScratch(dt, cnt)
		r, err := c.irecv(c.ctx+1, parts[i], (child+root)%n, c.ctag(tagReduce))
		if err != nil {
			c.withdraw(reqs)
			return err
		}
		reqs[i] = r
	}
	// acc is the partial result: recvbuf at the root, which ends there anyway, else
	// memory of its own.
	acc := recvbuf
	if parent >= 0 {
		acc = getScratch(dt, cnt)
		defer putScratch(dt, acc)
	}
	for i, r := range reqs {
		st, err := c.wait(ctx, r)
		if err = exact(st, parts[i], err); err != nil {
			c.withdraw(reqs[i+1:])
			return err
		}
		if i == 0 {
			combine(op, acc, sendbuf, parts[0]) // may be in place: elementwise
		} else {
			combine(op, acc, acc, parts[i])
		}
	}
	if parent >= 0 {
		return c.csend(ctx, acc, parent, tagReduce)
	}
	return nil
}

// Allreduce combines every rank's sendbuf elementwise with op into every rank's
// recvbuf (MPI_Allreduce); recvbuf may be sendbuf (in place). It is recursive
// doubling (log2 p exchanges of the whole buffer), with the usual fold for a p that is
// not a power of two: the first 2r ranks (r = p - 2^k) pair up, the even one hands its
// data to the odd one, and gets the result back at the end. Partners combine with the
// lower rank's partial result on the left, so every rank evaluates the same expression
// tree and the results are bit-identical on every rank, floating point included.
//
// Above 64 KiB it is Rabenseifner's algorithm instead: the same fold, a reduce-scatter
// by recursive halving of the vector (each rank ends with 1/2^k of it reduced), then an
// allgather by recursive doubling, so each rank sends and receives about twice the
// vector in all instead of log2 p times. Its halving steps combine the same aligned
// blocks of ranks in the same order as recursive doubling, so both algorithms give
// the same bits: a result is identical on every rank of one run, and the same in every
// run with the same number of processes whatever the vector's length. With another
// number of processes the bracketing differs, and a floating-point sum may differ in
// its last bits, as in MPI.
func (c *Comm) Allreduce(ctx context.Context, sendbuf, recvbuf any, op Op) error {
	c.begin()
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
	if n > 1 && cnt*dt.size() > largeAllreduce {
		return c.allreduceLarge(ctx, sendbuf, recvbuf, op, dt, cnt)
	}
	copyBuf(recvbuf, sendbuf) // the partial result lives in recvbuf (a no-op in place)
	acc, tmp := recvbuf, makeBuf(dt, cnt)
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
	return nil
}

// largeAllreduce is the size in bytes above which Allreduce uses Rabenseifner's
// algorithm.
const largeAllreduce = 64 << 10

// allreduceLarge is Rabenseifner's Allreduce: fold to a power of two, reduce-scatter
// by recursive halving with the distance doubling (so partners always hold aligned,
// contiguous blocks of ranks and combine lower on the left, exactly as recursive
// doubling does), allgather retracing the halving steps, unfold.
func (c *Comm) allreduceLarge(ctx context.Context, sendbuf, recvbuf any, op Op, dt Datatype, cnt int) error {
	n, rank := c.Size(), c.rank
	// The partial result lives in recvbuf; src is this rank's operand until the first
	// combine, so sendbuf is never copied (in place, both are recvbuf).
	acc, src := recvbuf, sendbuf
	pof2 := topMask(n + 1)
	rem := n - pof2
	newrank := rank - rem
	if rank < 2*rem {
		if rank%2 == 0 {
			if err := c.csend(ctx, sendbuf, rank+1, tagAllreduceLarge); err != nil {
				return err
			}
			newrank = -1
		} else {
			tmp := getScratch(dt, cnt)
			err := c.crecv(ctx, tmp, rank-1, tagAllreduceLarge)
			if err == nil {
				combine(op, acc, tmp, sendbuf)
			}
			putScratch(dt, tmp)
			if err != nil {
				return err
			}
			src = acc
			newrank = rank / 2
		}
	}
	if newrank >= 0 {
		if err := c.rabenseifner(ctx, src, acc, op, dt, cnt, newrank, pof2, rem); err != nil {
			return err
		}
	}
	if rank < 2*rem {
		var err error
		if rank%2 == 1 {
			err = c.csend(ctx, acc, rank-1, tagAllreduceLarge)
		} else {
			err = c.crecv(ctx, acc, rank+1, tagAllreduceLarge)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// rabenseifner is the power-of-two part of allreduceLarge among the pof2 ranks left
// after the fold: src is this rank's partial result (sendbuf, or acc after the fold),
// acc where the result goes, and newrank its rank among them. Every receive of both halves is posted before the first send, each into a
// place of its own (the reduce-scatter's into consecutive parts of one scratch buffer,
// the allgather's straight into acc), so that no message arrives before its receive
// and none is copied twice. The allgather's receives land in the parts of acc this rank
// has sent away during the reduce-scatter: the partner of a step sends into them only
// after its own reduce-scatter, which needed this rank's send of that part.
func (c *Comm) rabenseifner(ctx context.Context, src, acc any, op Op, dt Datatype, cnt, newrank, pof2, rem int) error {
	rankOf := func(nr int) int { // a new rank's rank in c
		if nr < rem {
			return 2*nr + 1
		}
		return nr + rem
	}
	unit := 1
	if op.pairs() {
		unit = 2
	}
	type step struct {
		lo, hi, mid                    int // the segment split at this step
		keepLo, keepHi, sendLo, sendHi int
		dst, off                       int // the partner; where its part lands in tmp
	}
	var steps []step // by increasing mask
	lo, hi, off := 0, cnt, 0
	for mask := 1; mask < pof2; mask <<= 1 {
		s := step{lo: lo, hi: hi, mid: lo + (hi-lo)/unit/2*unit, dst: rankOf(newrank ^ mask), off: off}
		s.keepLo, s.keepHi, s.sendLo, s.sendHi = s.lo, s.mid, s.mid, s.hi
		if newrank&mask != 0 {
			s.keepLo, s.keepHi, s.sendLo, s.sendHi = s.mid, s.hi, s.lo, s.mid
		}
		steps = append(steps, s)
		off += s.keepHi - s.keepLo
		lo, hi = s.keepLo, s.keepHi
	}
	tmp := getScratch(dt, off)
	defer putScratch(dt, tmp)
	reqs := make([]*Request, 0, 2*len(steps)) // reduce-scatter's, then allgather's
	for _, s := range steps {
		r, err := c.irecv(c.ctx+1, sliceBuf(tmp, s.off, s.off+s.keepHi-s.keepLo), s.dst, c.ctag(tagAllreduceLarge))
		if err != nil {
			c.withdraw(reqs)
			return err
		}
		reqs = append(reqs, r)
	}
	for i := len(steps) - 1; i >= 0; i-- {
		s := steps[i]
		r, err := c.irecv(c.ctx+1, sliceBuf(acc, s.sendLo, s.sendHi), s.dst, c.ctag(tagAllreduceLarge))
		if err != nil {
			c.withdraw(reqs)
			return err
		}
		reqs = append(reqs, r)
	}
	for k := range reqs {
		var send any
		if k < len(steps) { // reduce-scatter: send the other half, combine into mine
			s := steps[k]
			send = sliceBuf(src, s.sendLo, s.sendHi)
		} else { // allgather: send what this rank holds, get the partner's half
			s := steps[2*len(steps)-1-k]
			send = sliceBuf(acc, s.keepLo, s.keepHi)
		}
		dst := steps[min(k, 2*len(steps)-1-k)].dst
		if err := c.csend(ctx, send, dst, tagAllreduceLarge); err != nil {
			c.withdraw(reqs[k:])
			return err
		}
		st, err := c.wait(ctx, reqs[k])
		if err := exact(st, reqs[k].op.buf.v, err); err != nil {
			c.withdraw(reqs[k+1:]) // wait took back reqs[k] if it could
			return err
		}
		if k < len(steps) {
			s := steps[k]
			in, mine := sliceBuf(tmp, s.off, s.off+s.keepHi-s.keepLo), sliceBuf(src, s.keepLo, s.keepHi)
			if newrank&(1<<k) != 0 { // the partner's ranks are below mine
				combine(op, sliceBuf(acc, s.keepLo, s.keepHi), in, mine)
			} else {
				combine(op, sliceBuf(acc, s.keepLo, s.keepHi), mine, in)
			}
			src = acc // from the first combine on, the partial result is in acc
		}
	}
	return nil
}
