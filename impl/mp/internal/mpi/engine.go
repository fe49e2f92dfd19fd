//go:build mpi

package mpi

// #include <stdlib.h>
// #include "glue.h"
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/fifo"
	"github.com/ibisgo/ibis/internal/wake"
)

// Defaults of the idle back-off (see Config).
const (
	DefaultSpin     = 10 * time.Millisecond
	DefaultMaxSleep = time.Millisecond
	minSleep        = 10 * time.Microsecond
	// activeSpin is how long the engine keeps polling without progress while
	// requests are outstanding, before it falls back to its idle sleeps.
	activeSpin = time.Second
)

// Config tunes an engine.
type Config struct {
	// Logger receives diagnostics; nil means none.
	Logger *zap.Logger
	// Spin is how long the engine keeps polling MPI (yielding the CPU between polls)
	// after its last piece of work before it starts to sleep, and how long it stands
	// by after a goroutine in Await found its answer (progress.go). Messages that
	// arrive within it are seen at once; a program that communicates more often than
	// that keeps the engine in this phase. It is long enough that a loaded machine, where a
	// round trip can take a millisecond, does not push the engine into its sleeps
	// (which would make round trips slower still).
	Spin time.Duration
	// MaxSleep caps the sleeps of an idle engine, which grow from 10µs. It is the worst
	// extra delay of a message arriving at an idle process where nobody waits for it;
	// a goroutine that blocks waiting for MPI (Blocking) or, funneled, work queued
	// from Go wakes the engine at once.
	MaxSleep time.Duration
	// Funneled asks MPI for MPI_THREAD_FUNNELED only: every MPI call is made on the
	// engine goroutine and the rest of Go queues closures for it, each message
	// crossing threads (progress.go). For an MPI library whose serialized mode is
	// missing, slow or broken; an engine falls back to it by itself when MPI does not
	// grant MPI_THREAD_SERIALIZED.
	Funneled bool
}

// World describes MPI_COMM_WORLD as seen by this process.
type World struct {
	Rank, Size int
	// LocalSize is how many ranks share this node (MPI_COMM_TYPE_SHARED).
	LocalSize int
	// CPUs is how many processors the node has online, whatever this rank is
	// bound to.
	CPUs int
	// TagUB is the largest tag MPI allows (MPI_TAG_UB).
	TagUB int
	// Provided is the thread level MPI_Init_thread granted.
	Provided int
}

// InlineMax is the size up to which a poll receives a matched message itself, in the
// same C call that found it (glue.c, mp_poll).
const InlineMax = C.MP_SMALL

// Message is a matched incoming message (MPI_Improbe): nobody else can receive it, and
// it stays in MPI until the handler, now or later, receives or discards it with the
// Loop. Its Size is the byte count.
type Message struct {
	Src, Tag, Size int
	h              C.MPI_Message
	// got holds the bytes of a small message that the poll received already
	// (mp_poll): a view of C memory that the next poll overwrites, so valid only
	// while the handler runs. Recv copies them out and completes at once.
	got []byte
}

// Handler takes each matched message, under the progress lock. It must not block nor
// call Do. A message of at most InlineMax bytes may come received already (its bytes
// held in C memory until the next poll): the handler receives or discards such a
// message before it returns; only larger ones may stay matched for later.
type Handler func(l *Loop, m Message)

// Engine is the process's MPI engine (see the package doc).
type Engine struct {
	log      *zap.Logger
	funneled bool
	spin     time.Duration
	maxSleep time.Duration
	world    World
	procs    int // GOMAXPROCS before Start added the engine's P

	// queue holds the closures Do hands to a funneled engine; its Wake wakes the
	// sleeping engine, and exit closes it. spare is the slice they are taken into.
	queue *fifo.Queue[func(*Loop)]
	spare []func(*Loop)
	// mu guards stopReq. Lock order: mu is a leaf, as is the queue's; mu and singletonMu
	// never nest (Start holds singletonMu while MPI initialises on the engine
	// goroutine, which never takes singletonMu).
	mu      sync.Mutex
	stopReq bool

	// progress is the right to call MPI (progress.go): whoever holds it makes the
	// calls, runs the handler and the completion callbacks, and owns the fields below.
	// Lock order: taken first or alone; the handler and callbacks it runs take stream
	// locks inside it (leaves), and nobody takes it while holding another lock (Do
	// waits for it, briefly, since holders never block; Await only tries it).
	progress sync.Mutex
	// serialized: MPI granted MPI_THREAD_SERIALIZED, so any goroutine holding progress
	// may call it; otherwise only the engine goroutine does (funneled).
	serialized bool
	// drivers counts the goroutines in Await, and drives the times one found what it
	// waited for (a count, not a clock: reading the clock costs more than the rest of
	// an Await that succeeds at once; the engine goroutine notes when drives changed,
	// in drivenSeen). While there are drivers, and for the spin time after one
	// succeeded, the engine goroutine stands by, unless a goroutine is
	// blocked waiting for MPI (blocked, counted by Blocking, which pokes undriven so
	// that the engine polls at once). activeAt (Unix nanoseconds) is when a Do last
	// left requests outstanding or a goroutine last began to block, which the engine's
	// idle clock counts as work of its own: it keeps polling for the spin time after.
	drivers  atomic.Int32
	drives   atomic.Uint64
	blocked  atomic.Int32
	activeAt atomic.Int64
	undriven chan struct{}

	// yieldIdle: a goroutine in Await yields the CPU after each poll that found
	// nothing (an oversubscribed node); set before Start returns.
	yieldIdle bool

	loop  *Loop
	ended atomic.Bool // MPI is finalised or never will be: nobody calls it any more (set under progress)

	started  chan error
	finished chan struct{}
	stopErr  error

	// Owned by the engine goroutine: the count of drives it saw last, and when it saw
	// it change.
	drivesSeen uint64
	drivenSeen time.Time

	// Owned by the holder of progress.
	handler   Handler
	capReqs   int // room in the C request table (glue.c)
	reqs      []request
	sends     int
	pinners   []*runtime.Pinner
	stopping  bool
	deadline  time.Time
	barrier   barrierState
	done      []int
	callbacks []Completion
}

// barrierState is where the stop sequence's final MPI_Ibarrier is (stopStep):
// barrierUnposted --(no sends left)--> barrierPosted --(it completed)--> barrierDone.
type barrierState uint8

const (
	barrierUnposted barrierState = iota // outstanding sends come first
	barrierPosted                       // posted, waiting for every rank to post it
	barrierDone                         // every rank posted it: receive what is left, then finalise
)

var barrierNames = [...]string{barrierUnposted: "unposted", barrierPosted: "posted", barrierDone: "done"}

// String names the barrier's state for the log of a stop that timed out.
func (b barrierState) String() string {
	if int(b) < len(barrierNames) {
		return barrierNames[b]
	}
	return fmt.Sprintf("barrierState(%d)", uint8(b))
}

type request struct {
	pin  *runtime.Pinner
	done Completion
	send bool
}

var (
	singletonMu sync.Mutex
	singleton   *Engine
	used        bool
	initErr     error // why MPI could not be initialised, once that happened
)

// Start initialises MPI on a new engine goroutine and returns the running engine. It
// fails with ErrInUse while another engine runs, with ErrFinalized after one stopped.
func Start(cfg Config) (*Engine, error) {
	singletonMu.Lock()
	defer singletonMu.Unlock()
	switch {
	case singleton != nil:
		return nil, ErrInUse
	case initErr != nil:
		return nil, fmt.Errorf("MPI failed to initialise earlier in this process: %w", initErr)
	case used:
		return nil, ErrFinalized
	}
	e := &Engine{
		log:      cfg.Logger,
		funneled: cfg.Funneled,
		spin:     cfg.Spin,
		maxSleep: cfg.MaxSleep,
		queue:    fifo.New[func(*Loop)](),
		started:  make(chan error, 1),
		finished: make(chan struct{}),
		undriven: make(chan struct{}, 1),
	}
	e.loop = &Loop{e: e}
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
	// engine sleeps or is preempted.
	e.procs = runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(e.procs + 1)
	go e.run()
	if err := <-e.started; err != nil {
		<-e.finished
		e.restoreProcs()
		initErr = err
		return nil, err
	}
	singleton = e
	return e, nil
}

// World returns the shape of MPI_COMM_WORLD.
func (e *Engine) World() World { return e.world }

// Serialized reports whether goroutines make their own MPI calls in turn
// (MPI_THREAD_SERIALIZED) rather than handing them to the engine goroutine
// (funneled); see progress.go.
func (e *Engine) Serialized() bool { return e.serialized }

// Do runs f with the right to call MPI, where it may use MPI through the Loop. When MPI
// is serialized, f runs at once on the calling goroutine, which waits for the right
// if another goroutine holds it (never for long: holders only poll once or run
// closures like f); otherwise (funneled) f is queued for the engine goroutine, the
// only user of the queue. f must not block, and must not call Do. Do reports false, without
// running f, once the engine has stopped. Closures queued as the engine stops still
// run, with a Loop on which every operation fails with ErrStopped, so callers waiting
// on them always hear back.
func (e *Engine) Do(f func(*Loop)) bool {
	if !e.serialized {
		return e.queue.Push(f)
	}
	e.lockProgress()
	defer e.progress.Unlock()
	if e.ended.Load() {
		return false
	}
	f(e.loop)
	if len(e.reqs) > 0 {
		e.activeAt.Store(time.Now().UnixNano())
	}
	return true
}

// Send starts MPI_Isend of buf to rank dest with tag, as Loop.SendTo in a Do, without
// the closure a Do needs; it reports false once the engine has stopped. buf stays
// pinned, and must not change, until done is told.
func (e *Engine) Send(dest, tag int, buf []byte, done Completion) bool {
	if !e.serialized {
		return e.queue.Push(func(l *Loop) { l.SendTo(dest, tag, buf, done) })
	}
	e.lockProgress()
	defer e.progress.Unlock()
	if e.ended.Load() {
		return false
	}
	e.loop.SendTo(dest, tag, buf, done)
	if len(e.reqs) > 0 {
		e.activeAt.Store(time.Now().UnixNano())
	}
	return true
}

// SendSmall sends buf, at most InlineMax bytes, to rank dest with tag and reports how
// it went; when MPI is serialized only (ok false otherwise, or for a larger buf: use
// Send). It starts MPI_Isend and tests it once: a message this small goes under the
// eager protocol on the usual transports, so MPI is done with it at once (by Open
// MPI's shortest path, the same as MPI_Send's) and nothing is left to complete. Where
// it is not (a rank's own self transport, whose 1 KiB eager limit counts the header;
// an eager limit set lower; no send buffers), the request stays for the progress
// loop, pending reports it, buf must not change until late is told (under the
// progress lock), and the caller goes on: a blocking send would hold the progress
// lock until the receiver had received, which on this rank needs the lock, and on
// another may be blocked in a send to this one. Messages to one rank are matched
// there in the order they were sent, whatever the call.
func (e *Engine) SendSmall(dest, tag int, buf []byte, late Completion) (ok, pending bool, err error) {
	if !e.serialized || len(buf) > InlineMax {
		return false, false, nil
	}
	e.lockProgress()
	defer e.progress.Unlock()
	if e.ended.Load() {
		return true, false, ErrStopped
	}
	if len(e.reqs) == e.capReqs {
		e.grow(2 * e.capReqs)
	}
	slot := len(e.reqs) // taken only if the send is not done at once
	rc := C.mp_isend(ptr(buf), C.int(len(buf)), C.int(dest), C.int(tag), C.int(slot))
	runtime.KeepAlive(buf) // passed as an address
	if err := check("MPI_Isend", rc); err != nil {
		return true, false, fmt.Errorf("sending %d bytes to rank %d: %w", len(buf), dest, err)
	}
	if C.mp_done != 0 {
		return true, false, nil
	}
	// MPI holds on to buf: pinned for the request, which the progress loop completes.
	e.reqs = append(e.reqs, request{pin: e.loop.pin(buf), done: late, send: true})
	e.sends++
	e.activeAt.Store(time.Now().UnixNano())
	return true, true, nil
}

// lockProgress takes the progress lock for Do. When a goroutine in Await holds it in a
// bounded poll loop (mp_poll), raising mp_yielding makes that loop return at its next
// turn instead of finishing its turns.
func (e *Engine) lockProgress() {
	if e.progress.TryLock() {
		return
	}
	yielding := (*int32)(unsafe.Pointer(&C.mp_yielding))
	atomic.AddInt32(yielding, 1)
	e.progress.Lock()
	atomic.AddInt32(yielding, -1)
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
	e.mu.Unlock()
	if first {
		e.Do(func(*Loop) { // false only when the engine has ended already
			e.stopping = true
			e.deadline = time.Now().Add(timeout)
		})
		wake.Poke(e.undriven) // a serialized Do does not wake the engine goroutine
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

// Done is closed when the engine goroutine has ended: after Stop, or when MPI
// could not be initialised. Goroutines waiting for an answer from the engine also wait
// on it, since requests still in flight when a Stop times out are never answered.
func (e *Engine) Done() <-chan struct{} { return e.finished }

// Current returns the running engine of the process, if any; the benchmark uses it to
// run its direct-MPI baseline with the progress lock of an open mp instance.
func Current() (*Engine, bool) {
	singletonMu.Lock()
	defer singletonMu.Unlock()
	return singleton, singleton != nil
}
