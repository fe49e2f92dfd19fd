package dc

import (
	"go.uber.org/zap"

	"github.com/ibisgo/ibis/ipl"
)

// doneBeforeRun takes the root's end on a process that has not called Run yet: it
// started slowly and the root job was short. The root counted this process in the run
// and waits for its statistics, so it answers at once, with no work done (from here,
// not from a goroutine that closing the Runtime would cut short).
//
// In a closed world every member calls Run, and the run ended with this process in it:
// the dispatcher then holds the message until Run gives the result its place, which it
// returns, so that Run returns the root's result. It returns nil for a failed run, in an
// open pool (the process joined too late for the run: ErrRunEnded) and when the runtime
// closes first.
func (rt *Runtime) doneBeforeRun(root ipl.IbisIdentifier, failed bool) body {
	closed := rt.ib.Registry().PoolSize() > 0
	rt.mu.Lock()
	rt.doneEarly = true
	res := rt.rootRes
	rt.mu.Unlock()
	none := Stats{Process: rt.self.ID, Rank: ipl.LaunchRank(), Site: rt.self.Tag}
	if err := rt.send(root, &header{typ: msgStats}, func(m writer) error { return m.WriteObject(none) }); err != nil {
		rt.log.Warn("statistics did not reach the root", zap.Error(err))
	}
	if res != nil || failed || !closed {
		return res // Run may have come meanwhile
	}
	rt.log.Debug("the run ended before Run: holding its result for Run")
	select {
	case <-rt.runStarted:
	case <-rt.life.Done():
		return nil
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.rootRes
}

// endedEarly reports whether the root's end came before Run (doneBeforeRun): the
// statistics went then, and the dispatcher ends the run.
func (rt *Runtime) endedEarly() bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.doneEarly
}
