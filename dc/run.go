package dc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/ipl"
)

// rootElection names the election that picks the process running the root job.
const rootElection = "dc-root"

// Run runs the computation k(arg) on the whole pool and returns its result on every
// process. Every process calls it (with the same kind; only the root's argument
// counts): the winner of an election runs the root job, the others start idle and
// steal, and processes that join the pool later join the run. When the root job
// returns, the root sends the result to every process, collects their statistics
// (Report) and ends the pool's run (ipl Terminate).
//
// In a closed-world pool a member that calls Run after the root's end has reached it (a
// slow start) did no work, and Run returns the root's result there too.
//
// Run fails with ErrJobFailed when a job panicked, ErrRootDied when the root process
// died, ErrRunStopped when the root stopped the run (its context ended, it closed),
// ErrRunEnded when this process joined after the run ended, ErrCutOff when this
// process is out of the pool (declared dead, say after it was stopped, or its registry
// lost for good and another process unreachable), and the context's error when ctx
// ended first. A Runtime runs once.
func Run[A, R any](ctx context.Context, rt *Runtime, k *Kind[A, R], arg A) (R, error) {
	var zero R
	if !rt.ran.CompareAndSwap(false, true) {
		return zero, ErrRunOnce
	}
	res := &job[A, R]{kind: k, arg: arg}
	res.body = res
	rt.mu.Lock()
	rt.rootRes = res
	early := rt.doneEarly
	rt.mu.Unlock()
	close(rt.runStarted)
	stop := context.AfterFunc(ctx, func() { rt.end(fmt.Errorf("dc: %w", context.Cause(ctx))) })
	defer stop()
	if early {
		// The root's end came before this call (doneBeforeRun): this process did no
		// work and has sent its statistics; the dispatcher puts the result in res.
		<-rt.ended
		if err, _ := rt.endedBy(); err != nil {
			return zero, err
		}
		return res.res, nil
	}
	reg := rt.ib.Registry()
	if reg.PoolSize() > 0 {
		// A closed-world pool runs with all its members: none may arrive after the end.
		if err := reg.WaitUntilPoolClosed(ctx); err != nil {
			return zero, fmt.Errorf("dc: waiting for the pool's %d members: %w", reg.PoolSize(), err)
		}
	}
	rt.learnMembers()
	root, err := reg.Elect(ctx, rootElection)
	if err != nil {
		return zero, fmt.Errorf("dc: electing the root: %w", err)
	}
	if root.ID == rt.self.ID && rt.terminated() {
		// The election went with the root that ended the run and left before this
		// process stood: this process came too late.
		rt.end(ErrRunEnded)
		return zero, ErrRunEnded
	}
	rt.mu.Lock()
	rt.rootID = root
	rootDead := rt.dead[root.ID]
	rt.mu.Unlock()
	if rootDead {
		rt.end(fmt.Errorf("%w: %s", ErrRootDied, root))
	}
	start := time.Now()
	if root.ID == rt.self.ID {
		rt.log.Debug("running the root job", zap.String("kind", k.name))
		why := rt.runRoot(&res.task)
		err := rt.conclude(ctx, why, res, start)
		if err != nil {
			return zero, err
		}
		return res.res, nil
	}
	rt.work()
	err, _ = rt.endedBy()
	if !errors.Is(err, ErrRootDied) && !errors.Is(err, ErrRunEnded) && !errors.Is(err, ErrCutOff) && !rt.endedEarly() {
		if serr := rt.send(root, &header{typ: msgStats}, func(m writer) error { return m.WriteObject(rt.ownStats()) }); serr != nil {
			rt.log.Warn("statistics did not reach the root", zap.Error(serr))
		}
	}
	if err != nil {
		return zero, err
	}
	return res.res, nil
}

// runRoot runs the root job on this process's worker and returns why it failed ("" when
// it did not).
func (rt *Runtime) runRoot(t *task) (why string) {
	c := rt.w
	if err, over := rt.endedBy(); over && err != nil {
		return err.Error()
	}
	mark := c.sp
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(abortRun); ok {
				err, _ := rt.endedBy()
				why = fmt.Sprint(err)
				return
			}
			why = c.unwound(r, t.base, mark)
		}
	}()
	c.cur = t
	t.base = c.dq.height()
	t.body.run(c)
	c.cur = nil
	if t.pending() {
		return fmt.Sprintf("job %q returned without Sync for its children", t.body.kindOf().kindName())
	}
	c.release(t, mark)
	c.trim()
	return ""
}

// conclude ends the run on the root: it sends the outcome to every process, gathers
// their statistics and terminates the pool's run.
func (rt *Runtime) conclude(ctx context.Context, why string, res body, start time.Time) error {
	var runErr error
	done := &header{typ: msgDone}
	if why != "" {
		runErr = fmt.Errorf("%w: %s", ErrJobFailed, why)
		if prior, over := rt.endedBy(); over && prior != nil {
			runErr = prior // cancelled, closed: say that, not the unwinding it caused
			why = prior.Error()
			done.flags |= flagStopped
		}
	}
	rt.end(runErr)
	elapsed := time.Since(start)
	if errors.Is(runErr, ErrCutOff) {
		// The pool has gone on without this process (the others heard of the root's
		// death): nobody waits for its end or would send it statistics.
		rt.report = newReport(rt.o.algo, elapsed, []Stats{rt.ownStats()})
		return runErr
	}
	rt.learnMembers()
	rt.mu.Lock()
	members := make([]ipl.IbisIdentifier, 0, len(rt.members))
	for _, m := range rt.members {
		members = append(members, m)
	}
	rt.mu.Unlock()
	var payload func(writer) error
	if why != "" {
		done.fail = why
		if len(done.fail) > maxFailure {
			done.fail = done.fail[:maxFailure]
		}
	} else {
		payload = res.writeResult
	}
	sent := make([]bool, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Go(func() {
			if err := rt.send(m, done, payload); err != nil {
				rt.log.Warn("the end of the run did not reach a process", zap.Stringer("member", m), zap.Error(err))
				return
			}
			sent[i] = true
		})
	}
	wg.Wait()
	all := rt.gatherStats(ctx, members, sent)
	rt.report = newReport(rt.o.algo, elapsed, all)
	if err := rt.ib.Registry().Terminate(ctx); err != nil && !errors.Is(err, ipl.ErrUnsupported) {
		rt.log.Warn("terminating the pool's run", zap.Error(err))
	}
	return runErr
}

// gatherStats waits (at most the send timeout) for the statistics of every process the
// end reached, or its death, and returns them with the root's own. A process that left
// is still waited for: it sent its statistics before it left, and the registry's news of
// its leaving may overtake them.
func (rt *Runtime) gatherStats(ctx context.Context, members []ipl.IbisIdentifier, sent []bool) []Stats {
	timer := time.NewTimer(rt.o.sendTimeout)
	defer timer.Stop()
	for {
		rt.mu.Lock()
		missing := 0
		for i, m := range members {
			if _, ok := rt.statsIn[m.ID]; sent[i] && !ok && !rt.died[m.ID] {
				missing++
			}
		}
		rt.mu.Unlock()
		if missing == 0 {
			break
		}
		select {
		case <-rt.statsWake:
			continue
		case <-ctx.Done():
		case <-rt.life.Done():
		case <-timer.C:
			rt.log.Warn("statistics missing", zap.Int("processes", missing))
		}
		break
	}
	all := []Stats{rt.ownStats()}
	rt.mu.Lock()
	for _, s := range rt.statsIn {
		all = append(all, s)
	}
	rt.mu.Unlock()
	return all
}

// work is the worker of a process without the root job: it steals and runs jobs until
// the run ends.
func (rt *Runtime) work() {
	for {
		if _, over := rt.endedBy(); over {
			return
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(abortRun); !ok {
						panic(r)
					}
				}
			}()
			rt.w.idleStep()
		}()
	}
}

// ownStats is this process's statistics so far (the worker's goroutine only).
func (rt *Runtime) ownStats() Stats {
	s := rt.w.stats
	s.Steals += rt.asyncSteals.Load()
	s.Given = rt.given.Load()
	s.Forwarded = rt.forwarded.Load()
	s.Requeued = rt.requeued.Load()
	s.WideAreaMessages = rt.wideArea.Load()
	s.Connections = rt.conns.Load()
	s.ConnectionsReversed = rt.connsReversed.Load()
	s.ConnectionsRelayed = rt.connsRelayed.Load()
	return s
}

// Report returns the statistics of the run: on the root every process's, elsewhere this
// process's own. Call it after Run.
func (rt *Runtime) Report() Report {
	if rt.report.Processes != nil {
		return rt.report
	}
	return newReport(rt.o.algo, 0, []Stats{rt.ownStats()})
}

// Root reports whether this process ran the root job (after Run; the statistics of
// every process are in its Report).
func (rt *Runtime) Root() bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.rootID.ID != "" && rt.rootID.ID == rt.self.ID
}

// learnMembers adds the members the registry knows of that the membership watcher has
// not heard of yet (its events may lag behind the registry's own view).
func (rt *Runtime) learnMembers() {
	ms := rt.ib.Registry().Members()
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, m := range ms {
		if m.ID != rt.self.ID && !rt.dead[m.ID] {
			rt.members[m.ID] = m
		}
	}
}

// terminated reports whether the pool's run has been terminated, without waiting: the
// registry client has seen the Terminated event before any reply that follows it.
func (rt *Runtime) terminated() bool {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return rt.ib.Registry().WaitUntilTerminated(ctx) == nil
}
