//go:build mpi

package mpi

// #include <stdlib.h>
// #include "glue.h"
import "C"

import (
	"fmt"
	"runtime"
	"sort"
	"sync"
	"time"
	"unsafe"

	"go.uber.org/zap"
)

// Defaults of the idle back-off (see Config).
const (
	DefaultSpin     = 10 * time.Millisecond
	DefaultMaxSleep = time.Millisecond
	minSleep        = 10 * time.Microsecond
)

// Config tunes an engine.
type Config struct {
	// Logger receives diagnostics; nil means none.
	Logger *zap.Logger
	// Spin is how long the engine keeps polling MPI (yielding the CPU between polls)
	// after its last piece of work before it starts to sleep. Messages that arrive
	// within it are seen at once; a program that communicates more often than that
	// keeps the engine in this phase. It is long enough that a loaded machine, where a
	// round trip can take a millisecond, does not push the engine into its sleeps
	// (which would make round trips slower still); 1ms gave round trips of 0.4ms
	// instead of 50µs on the loaded 2-core machine of docs/PERFORMANCE.md.
	Spin time.Duration
	// MaxSleep caps the sleeps of an idle engine, which grow from 10µs. It is the worst
	// extra delay of a message arriving at an idle process; work queued from Go wakes
	// the engine at once.
	MaxSleep time.Duration
}

// World describes MPI_COMM_WORLD as seen by this process.
type World struct {
	Rank, Size int
	// LocalSize is how many ranks share this node (MPI_COMM_TYPE_SHARED).
	LocalSize int
	// TagUB is the largest tag MPI allows (MPI_TAG_UB).
	TagUB int
	// Provided is the thread level MPI_Init_thread granted.
	Provided int
}

// Message is a matched incoming message (MPI_Improbe): nobody else can receive it, and
// it stays in MPI until the handler, now or later, receives or discards it with the
// Loop. Its Size is the byte count.
type Message struct {
	Src, Tag, Size int
	h              C.MPI_Message
}

// Handler takes each matched message, on the engine goroutine. It must not block.
type Handler func(l *Loop, m Message)

// Engine is the process's MPI engine (see the package doc).
type Engine struct {
	log      *zap.Logger
	spin     time.Duration
	maxSleep time.Duration
	world    World
	procs    int // GOMAXPROCS before Start added the engine's P

	mu      sync.Mutex
	queue   []func(*Loop)
	spare   []func(*Loop)
	stopReq bool
	stopped bool
	wake    chan struct{}

	started  chan error
	finished chan struct{}
	stopErr  error

	// Owned by the engine goroutine.
	handler   Handler
	creqs     *C.MPI_Request
	cidx      *C.int
	capReqs   int
	reqs      []request
	sends     int
	pinners   []*runtime.Pinner
	poll      *C.mp_poll_t
	stopping  bool
	deadline  time.Time
	barrier   int // 0 not posted, 1 posted, 2 done
	done      []int
	callbacks []func(error)
}

type request struct {
	pin  *runtime.Pinner
	done func(error)
	send bool
}

var (
	singletonMu sync.Mutex
	singleton   *Engine
	used        bool
)

// Start initialises MPI on a new engine goroutine and returns the running engine. It
// fails with ErrInUse while another engine runs, with ErrFinalized after one stopped.
func Start(cfg Config) (*Engine, error) {
	singletonMu.Lock()
	defer singletonMu.Unlock()
	switch {
	case singleton != nil:
		return nil, ErrInUse
	case used:
		return nil, ErrFinalized
	case C.mp_initialized() != 0:
		return nil, ErrForeign
	}
	e := &Engine{
		log:      cfg.Logger,
		spin:     cfg.Spin,
		maxSleep: cfg.MaxSleep,
		wake:     make(chan struct{}, 1),
		started:  make(chan error, 1),
		finished: make(chan struct{}),
	}
	if e.log == nil {
		e.log = zap.NewNop()
	}
	if e.spin <= 0 {
		e.spin = DefaultSpin
	}
	if e.maxSleep <= 0 {
		e.maxSleep = DefaultMaxSleep
	}
	used = true
	// The engine goroutine holds a P (a Go scheduler slot) while it polls, so it gets
	// one of its own: with GOMAXPROCS=1, which an MPI launcher binding each rank to
	// one core gives, the rest of the program would otherwise run only when the
	// engine sleeps or is preempted (a 24ms round trip instead of 30µs here).
	e.procs = runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(e.procs + 1)
	go e.run()
	if err := <-e.started; err != nil {
		<-e.finished
		e.restoreProcs()
		return nil, err
	}
	singleton = e
	return e, nil
}

// World returns the shape of MPI_COMM_WORLD.
func (e *Engine) World() World { return e.world }

// Do queues f to run on the engine goroutine, where it may use MPI through the Loop.
// It reports false, without queueing, once the engine has stopped. Closures queued as
// the engine stops still run, with a Loop on which every operation fails with
// ErrStopped, so callers waiting on them always hear back.
func (e *Engine) Do(f func(*Loop)) bool {
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		return false
	}
	e.queue = append(e.queue, f)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
	return true
}

// Stop ends the engine: it finishes outstanding sends, waits (at most timeout) in a
// barrier for every rank to stop too, receives what is still on its way, finalises
// MPI and returns when the engine goroutine has ended. Without the barrier, finalising
// could strand peers' messages; when it times out, MPI is left unfinalised and Stop
// returns ErrStopTimeout. Every rank must call Stop: it is collective.
func (e *Engine) Stop(timeout time.Duration) error {
	e.mu.Lock()
	first := !e.stopReq
	e.stopReq = true
	if first {
		e.queue = append(e.queue, func(*Loop) {
			e.stopping = true
			e.deadline = time.Now().Add(timeout)
		})
	}
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
	<-e.finished
	if first {
		e.restoreProcs()
		singletonMu.Lock()
		if singleton == e {
			singleton = nil
		}
		singletonMu.Unlock()
	}
	return e.stopErr
}

// restoreProcs gives back the P that Start added, unless the program has changed
// GOMAXPROCS since.
func (e *Engine) restoreProcs() {
	if runtime.GOMAXPROCS(0) == e.procs+1 {
		runtime.GOMAXPROCS(e.procs)
	}
}

// run is the engine goroutine.
func (e *Engine) run() {
	// Never unlocked: MPI's per-thread state dies with the thread when the goroutine ends.
	runtime.LockOSThread()
	defer close(e.finished)
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
		if now.Sub(last) < e.spin {
			yield = true
			continue
		}
		yield = false
		timer.Reset(sleep)
		select {
		case <-e.wake:
		case <-timer.C:
		}
		timer.Stop()
		sleep = min(2*sleep, e.maxSleep)
	}
}

// runQueued runs the closures queued by Do.
func (e *Engine) runQueued(l *Loop) bool {
	e.mu.Lock()
	q := e.queue
	e.queue = e.spare[:0]
	e.mu.Unlock()
	for i, f := range q {
		f(l)
		q[i] = nil
	}
	e.spare = q
	return len(q) > 0
}

// exit refuses further work and runs what is still queued with a dead Loop.
func (e *Engine) exit() {
	e.mu.Lock()
	e.stopped = true
	q := e.queue
	e.queue = nil
	e.mu.Unlock()
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
			zap.Int("outstanding_requests", len(e.reqs)), zap.Int("barrier_state", e.barrier))
		return true, ErrStopTimeout
	}
	switch {
	case e.barrier == 0 && e.sends == 0:
		e.barrier = 1
		req := e.slot(nil)
		if err := check("MPI_Ibarrier", C.mp_ibarrier(req)); err != nil {
			e.reqs = e.reqs[:len(e.reqs)-1]
			return true, err
		}
		e.reqs[len(e.reqs)-1].done = func(error) { e.barrier = 2 }
	case e.barrier == 2 && len(e.reqs) == 0:
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

// grow makes room for n requests in the C arrays MPI_Testsome works on.
func (e *Engine) grow(n int) {
	if n <= e.capReqs {
		return
	}
	size := C.size_t(n) * C.size_t(unsafe.Sizeof(C.MPI_Request(nil)))
	e.creqs = (*C.MPI_Request)(C.realloc(unsafe.Pointer(e.creqs), size))
	e.cidx = (*C.int)(C.realloc(unsafe.Pointer(e.cidx), C.size_t(n)*C.size_t(unsafe.Sizeof(C.int(0)))))
	if e.creqs == nil || e.cidx == nil {
		panic("mpi: out of C memory for the request table")
	}
	e.capReqs = n
}

// slot appends a request entry and returns where MPI writes its handle; pinned is the
// Pinner for memory the request uses (nil for none).
func (e *Engine) slot(pinned *runtime.Pinner) *C.MPI_Request {
	if len(e.reqs) == e.capReqs {
		e.grow(2 * e.capReqs)
	}
	e.reqs = append(e.reqs, request{pin: pinned})
	return (*C.MPI_Request)(unsafe.Add(unsafe.Pointer(e.creqs), uintptr(len(e.reqs)-1)*unsafe.Sizeof(C.MPI_Request(nil))))
}

func (e *Engine) freeC() {
	C.free(unsafe.Pointer(e.creqs))
	C.free(unsafe.Pointer(e.cidx))
	C.free(unsafe.Pointer(e.poll))
	e.creqs, e.cidx, e.poll = nil, nil, nil
}

// Current returns the running engine of the process, if any; the benchmark uses it to
// run its direct-MPI baseline on the engine goroutine of an open mp instance.
func Current() (*Engine, bool) {
	singletonMu.Lock()
	defer singletonMu.Unlock()
	return singleton, singleton != nil
}
