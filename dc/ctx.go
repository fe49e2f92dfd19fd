package dc

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// Ctx is a process's worker as a job sees it: the handle through which it spawns
// children (Kind.Spawn) and waits for them (Sync). Each process has one worker, which
// runs jobs one at a time; a Ctx must not be used from another goroutine, nor kept after
// its job returns.
type Ctx struct {
	rt *Runtime
	// ending is rt.ending, one load nearer for the checks of Spawn and Sync.
	ending *atomic.Bool
	dq     workQueue
	cur    *task
	stats  Stats
	// failures counts steal attempts in a row that brought nothing.
	failures int
	// slots[:sp] are the tasks of the jobs spawned and not yet given back (see
	// recycle.go); spares are tasks traded out of a slot, by kind number.
	slots  []*task
	sp     int
	spares []*task
}

// abortRun unwinds a job when the run has ended or failed under it (a panic the worker
// recovers, never seen by the program).
type abortRun struct{}

func (c *Ctx) check() {
	if c.ending.Load() {
		panic(abortRun{})
	}
}

// Sync waits until every child the current job spawned has finished: it runs the ones
// still in the local queue as plain calls, newest first, and while children run on
// other processes it steals and runs other work.
func (c *Ctx) Sync() {
	c.check()
	f := c.cur
	for f.pending() {
		if c.dq.height() > f.base {
			t := c.dq.popFast()
			if t == nil {
				t = c.dq.popSlow()
			}
			if t != nil {
				// c.runLocal(t), inlined by hand: this is the path of every spawn
				// that was not stolen.
				mark := c.sp
				c.cur = t
				t.base = c.dq.height()
				t.body.run(c)
				if t.pending() {
					c.returnedEarly(t)
				}
				if t.scrubKids {
					c.scrub(t, mark)
				}
				c.sp = mark
				c.cur = f
				c.stats.Executed++
				if c.stats.Executed&(progressBatch-1) == 0 {
					c.publish()
				}
				t.parent.open--
				continue
			}
		}
		c.idleStep()
		c.check()
	}
	f.syncs++
	if f.failed != nil {
		panic(jobFailed{*f.failed})
	}
}

// jobFailed carries the failure of a child that ran elsewhere up the stack.
type jobFailed struct{ why string }

// Ibis returns the Ibis the worker's process runs on (its registry, for instance). A
// job that calls it may wait for other processes, so the jobs this worker spawned and
// has not run yet become stealable first (see Done).
func (c *Ctx) Ibis() ipl.Ibis {
	c.dq.expose()
	return c.rt.ib
}

// Done is closed when the run has ended under the job: its result is in, it failed, or
// it was cancelled. A job that waits for something outside dc should give up then; one
// that computes is stopped at its next Spawn or Sync.
//
// The jobs a worker spawned lie where other processes can steal them from its next
// Spawn or Sync on (see the package doc); a job that is about to wait for other
// processes, or for anything that may take long, calls Done or Ibis first, which makes
// them stealable at once.
func (c *Ctx) Done() <-chan struct{} {
	c.dq.expose()
	return c.rt.ended
}

// Site returns the site of the worker's process: its identifier's tag (see IbisOptions).
func (c *Ctx) Site() string { return c.rt.site }

// runLocal runs a child of some job on this worker's stack as a plain call.
func (c *Ctx) runLocal(t *task) {
	saved, mark := c.cur, c.sp
	c.cur = t
	t.base = c.dq.height()
	t.body.run(c)
	if t.pending() {
		c.returnedEarly(t)
	}
	if t.scrubKids { // c.release, inlined by hand
		c.scrub(t, mark)
	}
	c.sp = mark
	c.cur = saved
	c.stats.Executed++
	if c.stats.Executed&(progressBatch-1) == 0 {
		c.publish()
	}
	// The parent is the job that syncs, or an ancestor of it when t is a child given up
	// on (its thief died) and run again here; either way only this worker counts it.
	t.parent.open--
}

// returnedEarly fails job t, which returned without Sync for its children.
func (c *Ctx) returnedEarly(t *task) {
	panic(jobFailed{fmt.Sprintf("job %q returned without Sync for its children", t.body.kindOf().kindName())})
}

// runStolen runs a job stolen from another process and sends its result back. A panic in
// the job fails only that job: its owner hears of it and fails the run.
func (c *Ctx) runStolen(t *task) {
	saved, savedBase, mark := c.cur, c.dq.height(), c.sp
	var why string
	func() {
		defer func() {
			if r := recover(); r != nil {
				why = c.unwound(r, savedBase, mark)
			}
		}()
		c.cur = t
		t.base = savedBase
		t.body.run(c)
		if t.pending() {
			why = fmt.Sprintf("job %q returned without Sync for its children", t.body.kindOf().kindName())
			c.abandon(mark)
			return
		}
		c.release(t, mark)
		c.trim()
	}()
	c.cur = saved
	c.stats.Executed++
	c.publish()
	if _, ok := c.rt.endedBy(); ok {
		return
	}
	c.rt.sendResult(t, why)
}

// unwound turns what a job's panic left into the failure it reports, and empties the
// work queue of the children the job left behind (they belong to no one any more), and
// the slots above mark (see abandon). An abort is re-raised: it ends the whole worker.
func (c *Ctx) unwound(r any, base int64, mark int) string {
	for c.dq.height() > base {
		if c.dq.pop() == nil {
			break
		}
	}
	c.abandon(mark)
	switch r := r.(type) {
	case abortRun:
		panic(r)
	case jobFailed:
		return r.why
	default:
		return fmt.Sprintf("panic: %v", r)
	}
}

// idleStep is one round of the worker while it has nothing of its own to run: a job
// from its inbox (stolen, or one to run again), else one steal attempt, else a wait
// for news.
func (c *Ctx) idleStep() {
	if t := c.rt.takeInbox(); t != nil {
		c.runAny(t)
		return
	}
	c.publish()
	start := time.Now()
	c.rt.steal(c)
	c.stats.Idle += time.Since(start)
}

// runAny runs a job from the inbox.
func (c *Ctx) runAny(t *task) {
	if t.from != nil {
		c.runStolen(t)
		return
	}
	c.runLocal(t)
}
