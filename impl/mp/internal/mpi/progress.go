//go:build mpi

package mpi

import (
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/wake"
)

// Who makes progress. MPI moves messages only while somebody calls it, and every call
// is made by a holder of the engine's progress lock (MPI is initialised with
// MPI_THREAD_SERIALIZED). A goroutine that waits for MPI (a receive, an in-place send,
// credit) polls itself, in Await: it takes the lock when it is free, probes, receives
// and completes requests, and so finds its own message without waiting for another
// thread to be scheduled. Do runs its closure (a send, a receive posted) on the
// caller. A message therefore crosses no thread on its way out, nor on its way in
// while its receiver waits for it, where with one MPI thread it crossed two per side.
// The engine goroutine polls when nobody else does: it stands by while goroutines
// are in Await and for the spin time after one last found its answer (the next wait
// of a ping-pong comes within microseconds), unless a goroutine is blocked waiting
// for MPI (after its Await gave up, or where it does not poll at all): Blocking
// wakes the engine, which then polls as after work of its own (for the spin time, then
// in growing sleeps) while any goroutine is blocked.
//
// When MPI grants only MPI_THREAD_FUNNELED, every call stays on the engine goroutine:
// Do queues and Await only polls its channel.

// Await waits up to d for a value on ch, making MPI progress meanwhile, and reports
// whether one came. A goroutine that expects an answer from MPI within microseconds
// waits this way before it blocks on ch: blocked, it would be woken through the Go
// scheduler and the kernel, which on a loaded machine costs tens of microseconds.
//
// A caller that then blocks on ch calls Blocking for the time it blocks.
func (e *Engine) Await(ch <-chan struct{}, d time.Duration) bool {
	if !e.serialized || e.ended.Load() {
		return pollChan(ch, d)
	}
	e.drivers.Add(1)
	ok := pollWith(ch, d, e.step, e.yieldIdle)
	if ok {
		e.drives.Add(1)
	}
	e.drivers.Add(-1)
	return ok
}

// Blocking marks the caller as blocked waiting for MPI (an answer, a completion) until
// the returned function is called: the engine goroutine polls for it at once, and
// while it is blocked keeps polling as after work of its own (for the spin time, then
// in growing sleeps up to the maximum), whatever goroutines in Await do. Use it around
// a blocking wait that follows an Await that gave up, or a wait without Await.
func (e *Engine) Blocking() (unblock func()) {
	if !e.serialized {
		return func() {} // the engine goroutine makes all progress anyway
	}
	e.blocked.Add(1)
	e.activeAt.Store(time.Now().UnixNano())
	wake.Poke(e.undriven)
	return func() { e.blocked.Add(-1) }
}

// awaitTurns is how many empty polls a goroutine in Await makes in one cgo call
// (mp_poll) before it looks at its channel and the clock again. The call ends at the
// first message or completion, and when a Do waits for the progress lock.
const awaitTurns = 64

// step polls MPI, up to awaitTurns times until something happens, if nobody else is
// (probes, completions), and reports whether it did any work. (Nothing is queued for a
// serialized engine.)
func (e *Engine) step() bool {
	if !e.progress.TryLock() {
		return false
	}
	defer e.progress.Unlock()
	if e.ended.Load() {
		yieldCPU() // nothing to poll any more: do not spin hot until the caller's deadline
		return false
	}
	found, completed, err := e.pollOnce(e.loop, awaitTurns)
	if err != nil {
		e.log.Error("MPI progress failed", zap.Error(err))
	}
	return found || completed
}
