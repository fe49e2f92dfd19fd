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
	// Even this question is asked on the engine's thread: no MPI call elsewhere.
	if C.mp_initialized() != 0 {
		e.started <- ErrForeign
		return
	}
	var w C.mp_world_t
	if err := check("MPI_Init_thread", C.mp_init(&w)); err != nil {
		e.started <- err
		return
	}
	e.world = World{Rank: int(w.rank), Size: int(w.size), LocalSize: int(w.local_size), TagUB: int(w.tag_ub), Provided: int(w.provided)}
	if w.provided < C.MPI_THREAD_FUNNELED {
		_ = C.mp_finalize()
		e.started <- fmt.Errorf("%w: MPI_Init_thread granted thread level %d, below MPI_THREAD_FUNNELED", ErrMPI, int(w.provided))
		return
	}
	e.poll = (*C.mp_poll_t)(C.calloc(1, C.size_t(unsafe.Sizeof(C.mp_poll_t{}))))
	e.grow(64)
	defer e.freeC()
	e.log.Debug("MPI initialised", zap.Int("rank", e.world.Rank), zap.Int("size", e.world.Size),
		zap.Int("thread_level", e.world.Provided), zap.Int("tag_ub", e.world.TagUB))
	e.started <- nil

	l := &Loop{e: e}
	last := time.Now()
	sleep := minSleep
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	yield := false
	for {
		worked := e.runQueued(l)
		if e.stopping {
			if fin, err := e.stopStep(l); fin {
				e.stopErr = err
				e.exit()
				return
			}
		}
		found, completed, err := e.pollOnce(l, yield)
		if err != nil {
			e.log.Error("MPI progress failed", zap.Error(err))
		}
		now := time.Now()
		if worked || found || completed {
			last, sleep, yield = now, minSleep, false
			continue
		}
		// Keep polling within the spin time after the last work, and while requests
		// are outstanding (a transport such as TCP moves a large message only as the
		// engine polls), but not forever: a send to a rank that does not read may
		// wait for hours.
		if idle := now.Sub(last); idle < e.spin || (len(e.reqs) > 0 && idle < activeSpin) {
			yield = true
			continue
		}
		yield = false
		timer.Reset(sleep)
		select {
		case <-e.queue.Wake():
		case <-timer.C:
		}
		timer.Stop()
		sleep = min(2*sleep, e.maxSleep)
	}
}

// runQueued runs the closures queued by Do.
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

// pollOnce takes one matched message and collects completed requests.
func (e *Engine) pollOnce(l *Loop, yield bool) (found, completed bool, err error) {
	p := e.poll
	probe := C.int(0)
	if e.handler != nil {
		probe = 1
	}
	y := C.int(0)
	if yield {
		y = 1
	}
	rc := C.mp_poll(p, probe, e.creqs, C.int(len(e.reqs)), e.cidx, y)
	if err := check("MPI_Improbe/MPI_Testsome", rc); err != nil {
		return false, false, err
	}
	// Completions first: the handler may add requests. Both in every turn, so that
	// neither a flood of messages nor of completions starves the other.
	found = p.found != 0
	m := Message{Src: int(p.src), Tag: int(p.tag), Size: int(p.count), h: p.msg}
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
	idx := unsafe.Slice(e.cidx, e.capReqs)[:n]
	e.done = e.done[:0]
	for _, i := range idx {
		e.done = append(e.done, int(i))
	}
	sort.Sort(sort.Reverse(sort.IntSlice(e.done)))
	creqs := unsafe.Slice(e.creqs, e.capReqs)
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
		callbacks[i](nil)
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
		e.reqs[len(e.reqs)-1].done = func(error) { e.barrier = barrierDone }
	case e.barrier == barrierDone && len(e.reqs) == 0:
		// Everyone has posted all it will send; take what is still on its way.
		for range 100 {
			if found, _, _ := e.pollOnce(l, false); !found && len(e.reqs) == 0 {
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
