package dc

import (
	"sync/atomic"

	"github.com/ibisgo/ibis/ipl"
)

// task is one job as the scheduler sees it, whatever its kind; it is also the frame of
// the job while it runs: how many of the children it spawned have finished. Tasks of
// jobs spawned here are recycled (see recycle.go), so spawning allocates nothing in the
// steady state.
type task struct {
	body body
	// parent is the job that spawned this one here; nil for a job stolen from another
	// process (its result goes back over the network) and for the root.
	parent *task
	// next links the worker's spare tasks of one kind.
	next   *task
	kindID int // its kind's number
	// scrubKids: a child's kind holds pointers, which its return drops.
	scrubKids bool

	// The children not finished here: spawned less finished here (the worker only),
	// and the children finished elsewhere (the dispatcher). Some are pending while the
	// first is larger. Both count on through the task's reuses, so a recycled task
	// needs neither reset.
	open       int64
	remoteDone atomic.Int64
	base       int64 // the work queue's height when the job started: its children lie above
	epoch      int64 // the parent's syncs when this job was spawned
	syncs      int64 // Syncs this frame has completed, through the task's reuses

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
	// clear drops the argument and the result, for a task whose slot is given back.
	clear()
}

// pending reports whether some child of t has not finished yet.
func (t *task) pending() bool { return t.open > t.remoteDone.Load() }
