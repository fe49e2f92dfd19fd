//go:build mpi

package mpi

// #include "glue.h"
import "C"

import "time"

// yieldCPU gives the CPU to another thread (sched_yield); not an MPI call, so any
// goroutine may use it.
func yieldCPU() { C.mp_yield() }

// pollChan waits up to d for a value on ch by polling it, yielding the CPU between
// polls, and reports whether one came: Await of a funneled engine, whose goroutine
// makes the progress the waiter looks for. A polling waiter sees the engine's answer
// at once, where a blocked one is woken through the Go scheduler and the kernel,
// which on a loaded machine costs tens of microseconds.
func pollChan(ch <-chan struct{}, d time.Duration) bool { return pollWith(ch, d, nil, true) }

// pollWith is pollChan calling step between looks at ch. It yields the CPU after each look
// when there is no step, and after a step that did no work when yield is set.
func pollWith(ch <-chan struct{}, d time.Duration, step func() bool, yield bool) bool {
	if d <= 0 {
		return false
	}
	var deadline time.Time
	for i := 0; ; i++ {
		select {
		case <-ch:
			return true
		default:
		}
		// The clock starts after the first look and step, which often find the
		// answer: reading it costs as much as they do. A step polls many times
		// (mp_poll), so the clock is read after each; without one, every 16 looks.
		if i > 0 && (step != nil || i&15 == 0) {
			now := time.Now()
			if deadline.IsZero() {
				deadline = now.Add(d)
			} else if now.After(deadline) {
				return false
			}
		}
		if step == nil || (!step() && yield) {
			C.mp_yield()
		}
	}
}
