package mpj

import (
	"context"
	"fmt"
	"math/bits"

	"github.com/ibisgo/ibis/ipl"
)

// Tags of the collectives on a communicator's collective context, one per operation,
// below collTags: with the call's number (ctag) they keep successive collectives
// apart, and distinct tags make a mismatch (one rank in Bcast, another in Reduce) hang
// on a recognisable receive instead of mixing data.
const (
	tagBarrier = iota + 1
	tagBcast
	tagReduce
	tagAllreduce
	tagGather
	tagScatter
	tagAllgather
	tagGatherv
	tagScatterv
	tagAlltoall
	tagScan
	tagReduceScatter
	tagAllreduceLarge
)

// Collective calls are numbered: every rank counts its calls on a communicator (begin,
// at the start of each), and all call them in the same order, so the count is the same
// for one call everywhere. Messages carry it in their tag (ctag): a message of a call
// that one rank gave up (its context ended, it failed) stays unmatched there, instead
// of being taken by that rank's next call of the same kind, which would return it as
// its own data. The tag is the operation's (below collTags) plus collTags times the
// count, modulo collCounts, within an int32.
const (
	collTags   = 16
	collCounts = 1 << 26
)

// begin counts a collective call; every exported collective calls it first.
func (c *Comm) begin() { c.colls.Add(1) }

// ctag is tag within the collective call under way.
func (c *Comm) ctag(tag int) int { return tag + collTags*int(c.colls.Load()%collCounts) }

// csend sends on the collective context.
func (c *Comm) csend(ctx context.Context, buf any, dest, tag int) error {
	return c.send(ctx, c.ctx+1, buf, dest, c.ctag(tag), false)
}

// crecv receives on the collective context exactly len(buf) elements: every
// collective knows how much it expects, and a different count means the ranks called
// it with different arguments.
func (c *Comm) crecv(ctx context.Context, buf any, src, tag int) error {
	st, err := c.recv(ctx, c.ctx+1, buf, src, c.ctag(tag))
	return exact(st, buf, err)
}

// csendrecv exchanges on the collective context, receiving exactly len(recvbuf).
func (c *Comm) csendrecv(ctx context.Context, sendbuf any, dest int, recvbuf any, src, tag int) error {
	tag = c.ctag(tag)
	st, err := c.sendrecv(ctx, c.ctx+1, sendbuf, dest, tag, recvbuf, src, tag)
	return exact(st, recvbuf, err)
}

func exact(st Status, buf any, err error) error {
	if err != nil {
		return err
	}
	if _, n, _ := bufInfo(buf); st.Count != n {
		return fmt.Errorf("%w: rank %d sent %d elements, this rank expects %d", ErrCount, st.Source, st.Count, n)
	}
	return nil
}

// checkRoot validates a root rank.
func (c *Comm) checkRoot(root int) error {
	if root < 0 || root >= c.Size() {
		return fmt.Errorf("%w: mpj: root %d of a communicator of %d", ipl.ErrInvalidArgument, root, c.Size())
	}
	return nil
}

// lowbit returns the lowest set bit of v (v > 0).
func lowbit(v int) int { return v & -v }

// subtree returns how many ranks the binomial subtree rooted at relative rank vr
// holds: vr and the ranks below it, which are vr..vr+subtree-1.
func subtree(vr, size int) int {
	if vr == 0 {
		return size
	}
	return min(lowbit(vr), size-vr)
}

// topMask is the highest power of two below size: the first child distance of the
// root of a binomial tree.
func topMask(size int) int {
	if size <= 1 {
		return 0
	}
	return 1 << (bits.Len(uint(size-1)) - 1)
}
