package dc

// Progress is a snapshot of a run as one process sees it while it goes on, for progress
// lines (the applications print the root's): its own jobs, counted in batches by its
// worker so that the count costs the spawn path nothing (a little behind), and the
// pool's live processes. The whole run's figures come at the end, in Report.
type Progress struct {
	Spawned   int64 // jobs this process spawned
	Executed  int64 // jobs this process ran
	Given     int64 // jobs other processes stole from this one
	Requeued  int64 // jobs run again here because their thief died
	Processes int   // live processes of the pool, this one included
}

// progressBatch is how many jobs the worker runs between publishing its counts (a
// power of two, for a mask).
const progressBatch = 1024

// publish makes the worker's counts visible to Progress (the worker's goroutine only).
func (c *Ctx) publish() {
	c.rt.pubSpawned.Store(c.stats.Spawned)
	c.rt.pubExecuted.Store(c.stats.Executed)
}

// Progress returns the run's progress as this process sees it; any goroutine may call
// it, at any time.
func (rt *Runtime) Progress() Progress {
	rt.mu.Lock()
	n := len(rt.members) + 1
	rt.mu.Unlock()
	return Progress{Spawned: rt.pubSpawned.Load(), Executed: rt.pubExecuted.Load(), Given: rt.given.Load(),
		Requeued: rt.requeued.Load(), Processes: n}
}
