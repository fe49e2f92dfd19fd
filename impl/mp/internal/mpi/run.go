//go:build mpi

package mpi

// #include <stdlib.h>
// #include "glue.h"
import "C"

import (
	"fmt"
	"runtime"
	"sort"
	"time"
	"unsafe"

	"go.uber.org/zap"
)

// run is the engine goroutine.
func (e *Engine) run() {
	// Never unlocked: MPI's per-thread state dies with the thread when the goroutine ends.
	runtime.LockOSThread()
	defer close(e.finished)
	// Even this question is asked on the engine's thread, the one that initialises
	// and finalises MPI.
	if C.mp_initialized() != 0 {
		e.started <- ErrForeign
		return
	}
	var w C.mp_world_t
	serialized := C.int(1)
	if e.funneled {
		serialized = 0
	}
	if err := check("MPI_Init_thread", C.mp_init(&w, serialized)); err != nil {
		e.started <- err
		return
	}
	e.world = World{Rank: int(w.rank), Size: int(w.size), LocalSize: int(w.local_size), TagUB: int(w.tag_ub), Provided: int(w.provided), CPUs: int(w.cpus)}
	if w.provided < C.MPI_THREAD_FUNNELED {
		_ = C.mp_finalize()
		e.started <- fmt.Errorf("%w: MPI_Init_thread granted thread level %d, below MPI_THREAD_FUNNELED", ErrMPI, int(w.provided))
		return
	}
	e.serialized = !e.funneled && w.provided >= C.MPI_THREAD_SERIALIZED
	// Ranks that wait for MPI yield the CPU between polls only on an oversubscribed
	// node (as Open MPI's mpi_yield_when_idle does): there the rank they wait for may
	// need it, while elsewhere a yield only delays the poll that keeps a transfer
	// going (docs/PERFORMANCE.md, "mp: callers make their own MPI calls").
	e.yieldIdle = e.world.LocalSize > e.world.CPUs
	e.grow(64)
	defer e.freeC()
	e.log.Debug("MPI initialised", zap.Int("rank", e.world.Rank), zap.Int("size", e.world.Size),
		zap.Int("thread_level", e.world.Provided), zap.Bool("serialized", e.serialized), zap.Bool("yield_when_idle", e.yieldIdle), zap.Int("tag_ub", e.world.TagUB))
	e.started <- nil

	last := time.Now()
	sleep := minSleep
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		e.progress.Lock()
		worked := false
		if !e.serialized { // a serialized engine's queue stays empty (Do runs on its caller)
			worked = e.runQueued(e.loop)
		}
		if e.stopping {
			if fin, err := e.stopStep(e.loop); fin {
				e.stopErr = err
				e.exit()
				e.ended.Store(true)
				e.progress.Unlock()
				return
			}
		}
		found, completed, err := e.pollOnce(e.loop, 1)
		outstanding := len(e.reqs) > 0
		stopping := e.stopping
		e.progress.Unlock()
		if err != nil {
			e.log.Error("MPI progress failed", zap.Error(err))
		}
		now := time.Now()
		busy := worked || found || completed
		if busy {
			last, sleep = now, minSleep
		} else if w := e.activeAt.Load(); w > last.UnixNano() {
			last = time.Unix(0, w) // a Do's requests, a blocked goroutine
		}
		// While goroutines in Await make progress themselves the engine stands by,
		// so as not to take the CPU and the lock from them, and looks in now and then.
		// Otherwise it keeps polling within the spin time after its last work, and
		// while requests are outstanding (a transport such as TCP moves a large
		// message only as somebody polls), but not forever: a send to a rank that
		// does not read may wait for hours. The CPU is yielded between polls, outside
		// the lock.
		if !e.driven(now) || stopping {
			if busy {
				continue
			}
			if idle := now.Sub(last); idle < e.spin || (outstanding && idle < activeSpin) {
				C.mp_yield()
				continue
			}
		}
		timer.Reset(sleep)
		select {
		case <-e.queue.Wake():
		case <-e.undriven:
		case <-timer.C:
		}
		timer.Stop()
		sleep = min(2*sleep, e.maxSleep)
	}
}

// driven reports whether goroutines in Await are making progress, or did within the
// spin time (as the engine goroutine, the only caller, saw it), and no goroutine is
// blocked waiting for MPI.
func (e *Engine) driven(now time.Time) bool {
	if d := e.drives.Load(); d != e.drivesSeen {
		e.drivesSeen, e.drivenSeen = d, now
	}
	if e.blocked.Load() > 0 {
		return false
	}
	if e.drivers.Load() > 0 {
		return true
	}
	return !e.drivenSeen.IsZero() && now.Sub(e.drivenSeen) < e.spin
}

// runQueued runs the closures queued by Do; progress is held.
func (e *Engine) runQueued(l *Loop) bool {
	q, _ := e.queue.Take(e.spare[:0])
	for i, f := range q {
		f(l)
		q[i] = nil
	}
	e.spare = q
	return len(q) > 0
}

// exit refuses further work and runs what is still queued with a dead Loop.
func (e *Engine) exit() {
	e.queue.Close() // Do fails from now on; what it queued before is taken below
	q, _ := e.queue.Take(nil)
	dead := &Loop{e: e, dead: true}
	for _, f := range q {
		f(dead)
	}
}

// pollOnce polls MPI up to turns times in one cgo call (mp_poll), until it takes one
// matched message or collects completed requests; progress is held.
func (e *Engine) pollOnce(l *Loop, turns int) (found, completed bool, err error) {
	probe := C.int(0)
	if e.handler != nil {
		probe = 1
	}
	rc := C.mp_poll(probe, C.int(len(e.reqs)), C.int(turns), 1)
	if err := check("MPI_Improbe/MPI_Testsome", rc); err != nil {
		return false, false, err
	}
	p := &C.mp_last
	// Completions first: the handler may add requests. Both in every turn, so that
	// neither a flood of messages nor of completions starves the other.
	found = p.found != 0
	m := Message{Src: int(p.src), Tag: int(p.tag), Size: int(p.count), h: p.msg}
	if p.received != 0 {
		m.got = unsafe.Slice((*byte)(unsafe.Pointer(&C.mp_small[0])), m.Size)
		if m.got == nil {
			m.got = []byte{} // an empty message, received
		}
	}
	if n := int(p.outcount); n > 0 {
		e.complete(n)
		completed = true
	}
	if found {
		e.handler(l, m)
	}
	return found, completed, nil
}

// complete retires the n requests MPI_Testsome reported and runs their callbacks.
func (e *Engine) complete(n int) {
	idx := unsafe.Slice(C.mp_idx, e.capReqs)[:n]
	e.done = e.done[:0]
	for _, i := range idx {
		e.done = append(e.done, int(i))
	}
	sort.Sort(sort.Reverse(sort.IntSlice(e.done)))
	creqs := unsafe.Slice(C.mp_reqs, e.capReqs)
	callbacks := e.callbacks[:0]
	for _, i := range e.done {
		r := e.reqs[i]
		if r.pin != nil {
			r.pin.Unpin()
			e.pinners = append(e.pinners, r.pin)
		}
		if r.send {
			e.sends--
		}
		if r.done != nil {
			callbacks = append(callbacks, r.done)
		}
		last := len(e.reqs) - 1
		creqs[i] = creqs[last]
		e.reqs[i] = e.reqs[last]
		e.reqs[last] = request{}
		e.reqs = e.reqs[:last]
	}
	// Completion callbacks run once the table is consistent, since they may post new
	// requests.
	for i := len(callbacks) - 1; i >= 0; i-- {
		callbacks[i].Complete(nil)
		callbacks[i] = nil
	}
	e.callbacks = callbacks[:0]
}

// stopStep advances the stop sequence; fin reports that the engine may exit.
func (e *Engine) stopStep(l *Loop) (fin bool, err error) {
	e.handler = discardAll
	if time.Now().After(e.deadline) {
		e.log.Error("MPI not finalised: not every rank stopped in time",
			zap.Int("outstanding_requests", len(e.reqs)), zap.Stringer("barrier_state", e.barrier))
		return true, ErrStopTimeout
	}
	switch {
	case e.barrier == barrierUnposted && e.sends == 0:
		e.barrier = barrierPosted
		req := e.slot(nil)
		if err := check("MPI_Ibarrier", C.mp_ibarrier(req)); err != nil {
			e.reqs = e.reqs[:len(e.reqs)-1]
			return true, err
		}
		e.reqs[len(e.reqs)-1].done = Func(func(error) { e.barrier = barrierDone })
	case e.barrier == barrierDone && len(e.reqs) == 0:
		// Everyone has posted all it will send; take what is still on its way.
		for range 100 {
			if found, _, _ := e.pollOnce(l, 1); !found && len(e.reqs) == 0 {
				break
			}
		}
		if err := check("MPI_Finalize", C.mp_finalize()); err != nil {
			return true, err
		}
		e.log.Debug("MPI finalised")
		return true, nil
	}
	return false, nil
}

func discardAll(l *Loop, m Message) { l.Discard(m) }
