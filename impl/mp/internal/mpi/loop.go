//go:build mpi

package mpi

// #include <stdlib.h>
// #include "glue.h"
import "C"

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"
)

// Loop is the handle through which closures given to Do, the handler and completion
// callbacks use MPI, while they hold the engine's progress lock. It must not be kept
// or used anywhere else.
type Loop struct {
	e    *Engine
	dead bool // the engine has stopped: every operation fails with ErrStopped
}

// World returns the shape of MPI_COMM_WORLD.
func (l *Loop) World() World { return l.e.world }

// SetHandler installs the handler of matched messages. Until one is installed the
// engine does not probe, so messages that arrive early wait in MPI instead of being
// dropped.
func (l *Loop) SetHandler(h Handler) {
	if !l.e.stopping {
		l.e.handler = h
	}
}

// pin pins buf's memory for a non-blocking call (cgo forbids C keeping a pointer to
// unpinned Go memory after the call returns); nil for an empty buffer.
func (l *Loop) pin(buf []byte) *runtime.Pinner {
	if len(buf) == 0 {
		return nil
	}
	e := l.e
	var p *runtime.Pinner
	if n := len(e.pinners); n > 0 {
		p = e.pinners[n-1]
		e.pinners = e.pinners[:n-1]
	} else {
		p = new(runtime.Pinner)
	}
	p.Pin(&buf[0])
	return p
}

// Completion is told, under the progress lock, that a request ended: with nil, or the
// error. A pointer to a value that knows what to do next makes a completion without
// the allocation of a closure.
type Completion interface{ Complete(err error) }

// Func makes a function a Completion.
type Func func(error)

// Complete calls f.
func (f Func) Complete(err error) { f(err) }

// asCompletion is done as a Completion, nil for none.
func asCompletion(done func(error)) Completion {
	if done == nil {
		return nil
	}
	return Func(done)
}

// fail retires the last slot, after its MPI call refused to start (err) or finished
// at once (nil), and tells done.
func (l *Loop) fail(err error, done Completion) {
	e := l.e
	last := len(e.reqs) - 1
	if r := e.reqs[last]; r.pin != nil {
		r.pin.Unpin()
		e.pinners = append(e.pinners, r.pin)
	}
	e.reqs[last] = request{}
	e.reqs = e.reqs[:last]
	if done != nil {
		done.Complete(err)
	}
}

// Send starts MPI_Isend of buf to rank dest with tag. buf stays pinned, and must not
// change, until done is called (under the progress lock, with nil or the error).
// Messages to one rank are matched there in the order they were started.
func (l *Loop) Send(dest, tag int, buf []byte, done func(error)) {
	l.SendTo(dest, tag, buf, asCompletion(done))
}

// SendTo is Send telling a Completion.
func (l *Loop) SendTo(dest, tag int, buf []byte, done Completion) {
	if l.dead {
		if done != nil {
			done.Complete(ErrStopped)
		}
		return
	}
	e := l.e
	req := e.slot(l.pin(buf))
	if err := check("MPI_Isend", C.mp_isend(ptr(buf), C.int(len(buf)), C.int(dest), C.int(tag), req)); err != nil {
		l.fail(fmt.Errorf("sending %d bytes to rank %d: %w", len(buf), dest, err), done)
		return
	}
	if C.mp_done != 0 {
		l.fail(nil, done) // done already: retire the slot and report success
		return
	}
	r := &e.reqs[len(e.reqs)-1]
	r.done, r.send = done, true
	e.sends++
}

// Recv starts MPI_Imrecv of the matched message m into buf (at least m.Size bytes),
// pinned until done is called under the progress lock.
func (l *Loop) Recv(m Message, buf []byte, done func(error)) {
	l.RecvTo(m, buf, asCompletion(done))
}

// RecvTo is Recv telling a Completion.
func (l *Loop) RecvTo(m Message, buf []byte, done Completion) {
	if l.dead {
		if done != nil {
			done.Complete(ErrStopped)
		}
		return
	}
	if len(buf) < m.Size {
		if done != nil {
			done.Complete(fmt.Errorf("%w: a %d-byte buffer for a %d-byte message", ErrMPI, len(buf), m.Size))
		}
		return
	}
	if m.got != nil {
		copy(buf, m.got)
		if done != nil {
			done.Complete(nil)
		}
		return
	}
	e := l.e
	req := e.slot(l.pin(buf))
	if err := check("MPI_Imrecv", C.mp_imrecv(ptr(buf), C.int(m.Size), m.h, req)); err != nil {
		l.fail(fmt.Errorf("receiving %d bytes from rank %d: %w", m.Size, m.Src, err), done)
		return
	}
	if C.mp_done != 0 {
		l.fail(nil, done)
		return
	}
	e.reqs[len(e.reqs)-1].done = done
}

// Discard receives m and throws it away, so that its sender's request completes.
func (l *Loop) Discard(m Message) {
	if m.got != nil {
		return
	}
	l.Recv(m, make([]byte, m.Size), nil)
}

// Bcast starts MPI_Ibcast of buf from rank 0 to every rank (collective: every rank
// must call it with a buffer of the same size); done is called on completion.
func (l *Loop) Bcast(buf []byte, done func(error)) {
	if l.dead {
		done(ErrStopped)
		return
	}
	e := l.e
	req := e.slot(l.pin(buf))
	if err := check("MPI_Ibcast", C.mp_ibcast(ptr(buf), C.int(len(buf)), req)); err != nil {
		l.fail(err, asCompletion(done))
		return
	}
	e.reqs[len(e.reqs)-1].done = asCompletion(done)
}

// BenchPingPong runs the benchmark's baseline: iters round trips of size bytes with
// peer, as blocking MPI_Send and MPI_Recv called from Go on a communicator of their
// own, after an MPI_Barrier there. The initiator sends first. It blocks the engine for
// its duration, which is what a direct MPI program does; every rank of that
// communicator must take part (ranks without a peer pass peer < 0 and only join the
// barrier).
func (l *Loop) BenchPingPong(peer, size, iters int, initiator bool) (time.Duration, error) {
	if l.dead {
		return 0, ErrStopped
	}
	if err := check("MPI_Comm_dup", C.mp_bench_setup()); err != nil {
		return 0, err
	}
	if err := check("MPI_Barrier", C.mp_bench_barrier()); err != nil {
		return 0, err
	}
	if peer < 0 {
		return 0, nil
	}
	buf := make([]byte, max(size, 1))
	p, n, dst := unsafe.Pointer(unsafe.SliceData(buf)), C.int(size), C.int(peer)
	start := time.Now()
	for range iters {
		if initiator {
			if rc := C.mp_bench_send(p, n, dst); rc != C.MPI_SUCCESS {
				return 0, check("MPI_Send", rc)
			}
			if rc := C.mp_bench_recv(p, n, dst); rc != C.MPI_SUCCESS {
				return 0, check("MPI_Recv", rc)
			}
		} else {
			if rc := C.mp_bench_recv(p, n, dst); rc != C.MPI_SUCCESS {
				return 0, check("MPI_Recv", rc)
			}
			if rc := C.mp_bench_send(p, n, dst); rc != C.MPI_SUCCESS {
				return 0, check("MPI_Send", rc)
			}
		}
	}
	return time.Since(start), nil
}

// BenchFree frees the baseline's communicator (collective).
func (l *Loop) BenchFree() {
	if !l.dead {
		C.mp_bench_free()
	}
}

// LibraryVersion returns the MPI library's version string (MPI_Get_library_version).
func (l *Loop) LibraryVersion() string {
	buf := (*C.char)(C.malloc(C.MPI_MAX_LIBRARY_VERSION_STRING + 1))
	defer C.free(unsafe.Pointer(buf))
	C.mp_library_version(buf, C.MPI_MAX_LIBRARY_VERSION_STRING+1)
	return C.GoString(buf)
}
