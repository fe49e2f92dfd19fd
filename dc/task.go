package dc

import (
	"sync/atomic"

	"github.com/ibisgo/ibis/ipl"
)

// task is one job as the scheduler sees it, whatever its kind; it is also the frame of
// the job while it runs: the children it spawned and how many of them have finished.
// Tasks of jobs spawned here are recycled (see release), so spawning allocates nothing
// in the steady state.
type task struct {
	body body
	// parent is the job that spawned this one here; nil for a job stolen from another
	// process (its result goes back over the network) and for the root.
	parent *task
	// next links the children of one frame (newest first), kids is a frame's newest.
	next, kids *task

	spawned    int64        // children spawned (the worker only)
	localDone  int64        // children finished here (the worker only)
	remoteDone atomic.Int64 // children finished elsewhere (the dispatcher)
	remoteBase int64        // remoteDone when the task was recycled (saves an atomic store)
	base       int64        // the deque's bottom when the job started: its children lie above
	epoch      int64        // the parent's syncs when this job was spawned
	syncs      int64        // Syncs this frame has completed

	// from is set for a job stolen from another process: whom the result goes back to.
	from *origin
	// failed says why a child that ran elsewhere did not come back with a result (its
	// job panicked there); the frame's Sync fails with it. Written by the dispatcher
	// before it counts the child as finished.
	failed *string
}

// origin is where a stolen job came from.
type origin struct {
	owner ipl.IbisIdentifier
	stamp int64
}

// body is the typed part of a task: its kind, argument and result.
type body interface {
	run(c *Ctx)
	kindOf() kindInfo
	writeArg(m writer) error
	writeResult(m writer) error
	readResult(m reader) error
	// release gives the task back to its kind's free list on worker c.
	release(c *Ctx)
}

// pending reports whether some child of t has not finished yet.
func (t *task) pending() bool { return t.localDone+t.remoteDone.Load()-t.remoteBase < t.spawned }

// releaseKids recycles the tasks of t's children, once t has returned: their futures
// are not to be used after that.
func (t *task) releaseKids(c *Ctx) {
	for k := t.kids; k != nil; {
		next := k.next
		k.body.release(c)
		k = next
	}
	t.kids = nil
}
