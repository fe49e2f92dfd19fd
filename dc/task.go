package dc

import (
	"sync/atomic"

	"github.com/ibisgo/ibis/ipl"
)

// task is one job as the scheduler sees it, whatever its kind; it is also the frame of
// the job while it runs: the children it spawned and how many of them have finished.
type task struct {
	body body
	// parent is the job that spawned this one here; nil for a job stolen from another
	// process (its result goes back over the network) and for the root.
	parent *task

	spawned    int64        // children spawned (the worker only)
	localDone  int64        // children finished here (the worker only)
	remoteDone atomic.Int64 // children finished elsewhere or given up on (the dispatcher)
	base       int64        // the deque's bottom when the job started: its children lie above
	finished   atomic.Bool  // the result is in place

	// A job stolen from another process: whom the result goes back to.
	owner ipl.IbisIdentifier
	stamp int64
	// failed says why a child stolen from us did not come back with a result (its
	// thief's job panicked); the run fails with it.
	failed string
}

// body is the typed part of a task: its kind, argument and result.
type body interface {
	run(c *Ctx)
	kindOf() kindInfo
	writeArg(m writer) error
	writeResult(m writer) error
	readResult(m reader) error
	result() any
}

// pending reports whether some child of t has not finished yet.
func (t *task) pending() bool { return t.localDone+t.remoteDone.Load() < t.spawned }
