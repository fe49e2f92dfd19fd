package mpj

import (
	"context"
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/ibisgo/ibis/ipl"
)

// Comm is a communicator (MPI_Comm): a group of processes, each with a rank 0..Size-1,
// and a context that keeps its traffic apart from every other communicator's. A Comm
// is safe for concurrent use by several goroutines, but as in MPI the collectives of
// one communicator must be called in the same order on every rank, one at a time: the
// calls are numbered (coll.go), and a call that ended early on a rank (its context
// ended) still counts there, so it cannot be tried again; its data stays queued, never
// taken, until the World closes.
type Comm struct {
	w *World
	// ctx is the point-to-point context id; ctx+1 carries the collectives.
	ctx  uint32
	rank int
	// slots maps a rank in this communicator to the process's slot in the world.
	slots []int
	// colls counts the collective calls made on the communicator (coll.go).
	colls atomic.Uint64
}

// Rank returns this process's rank in the communicator.
func (c *Comm) Rank() int { return c.rank }

// Size returns the number of processes in the communicator.
func (c *Comm) Size() int { return len(c.slots) }

// Undefined, as the colour given to Split, leaves the process out of every new
// communicator (MPI_UNDEFINED); Split then returns nil.
const Undefined = -1

// agreeContext returns a context id that is free on every rank of c (the maximum of
// their lowest free ids, gathered with an Allreduce) and marks it used. Two
// communicators that share a process therefore never share an id, and neither do
// their messages.
func (c *Comm) agreeContext(ctx context.Context, mine uint32) (uint32, error) {
	v := []uint32{mine}
	if err := c.Allreduce(ctx, v, v, Max); err != nil {
		return 0, err
	}
	c.w.useContext(v[0])
	return v[0], nil
}

// Dup returns a communicator with the same processes and ranks and a new context
// (MPI_Comm_dup), so that a library can talk among the same ranks without its messages
// ever matching the program's. It is collective over c.
func (c *Comm) Dup(ctx context.Context) (*Comm, error) {
	id, err := c.agreeContext(ctx, c.w.peekContext())
	if err != nil {
		return nil, fmt.Errorf("mpj: Dup: %w", err)
	}
	return &Comm{w: c.w, ctx: id, rank: c.rank, slots: c.slots}, nil
}

// Split partitions c by colour (MPI_Comm_split): the processes that give the same
// colour form a new communicator, ranked by key and then by their rank in c. A
// process that gives Undefined gets nil. It is collective over c: every rank gathers
// every (colour, key) pair, so all decide the same groups, and all groups take the
// same new context id, which is free on every process of c (groups are disjoint, so
// their messages cannot meet).
func (c *Comm) Split(ctx context.Context, colour, key int) (*Comm, error) {
	if colour < 0 && colour != Undefined {
		return nil, fmt.Errorf("%w: mpj: Split: colour %d (want >= 0 or Undefined)", ipl.ErrInvalidArgument, colour)
	}
	mine := []int64{int64(colour), int64(key), int64(c.w.peekContext())}
	all := make([]int64, 3*c.Size())
	if err := c.Allgather(ctx, mine, all); err != nil {
		return nil, fmt.Errorf("mpj: Split: %w", err)
	}
	id := uint32(0)
	for r := range c.Size() {
		id = max(id, uint32(all[3*r+2]))
	}
	c.w.useContext(id)
	if colour == Undefined {
		return nil, nil
	}
	var group []int // ranks in c of the processes with my colour
	for r := range c.Size() {
		if all[3*r] == int64(colour) {
			group = append(group, r)
		}
	}
	sort.SliceStable(group, func(i, j int) bool { return all[3*group[i]+1] < all[3*group[j]+1] })
	nc := &Comm{w: c.w, ctx: id, slots: make([]int, len(group))}
	for i, r := range group {
		nc.slots[i] = c.slots[r]
		if r == c.rank {
			nc.rank = i
		}
	}
	return nc, nil
}

// World returns the world the communicator belongs to.
func (c *Comm) World() *World { return c.w }
