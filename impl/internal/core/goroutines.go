package core

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// What the instance's goroutines run, for the error of a Close that gave up waiting.
const (
	runsUpcalls       = "message handler of receive port"
	runsGotConnection = "GotConnection of receive port"
	runsNotifier      = "lost-connection and disconnect handlers"
	runsEvents        = "event handler"
	runsInstance      = "instance goroutine"
)

// workerIdle is how long a goroutine of the instance that has nothing to run waits for
// more before it ends. Message handlers that finish their messages early hand the port
// to a new goroutine per message; reusing idle ones spares the start (and the cost of
// learning its identity, about 3µs) on that path.
const workerIdle = 10 * time.Second

// goroutines keeps track of every goroutine the instance starts (message-upcall
// dispatchers, the notifier, the event goroutine, connection-handler questions, and
// what transports start with Go), so that Close can wait for all of them. Each one
// records its goroutine identity once, when it starts, so that Close knows exactly
// whether it was called from inside one of the instance's callbacks: such a Close must
// not wait for the goroutine it runs on. Nothing is recorded per callback or message.
type goroutines struct {
	idle chan task // idle goroutines take new work here

	mu      sync.Mutex
	n       int               // goroutines started and not yet ended
	byID    map[int64]*worker // the started ones that have recorded their identity
	closers map[int64]int     // tracked goroutines waiting in Close (not waited for by Closes)
	changed chan struct{}     // closed and replaced when a goroutine ends or closers change
}

// task is work for a goroutine of the instance: f, and what it is for Close's report.
type task struct {
	runs string // one of the runs* constants
	port string // the port it serves, or ""
	f    func()
}

func (t task) String() string {
	if t.port == "" {
		return t.runs
	}
	return t.runs + " " + strconv.Quote(t.port)
}

// worker is a tracked goroutine; cur is what it runs now (zero while idle).
type worker struct{ cur task }

func newGoroutines() *goroutines {
	return &goroutines{
		idle:    make(chan task),
		byID:    map[int64]*worker{},
		closers: map[int64]int{},
		changed: make(chan struct{}),
	}
}

// goCallback runs f on a goroutine of the instance: an idle one if there is one, else
// a new one. runs and port say what f is, should Close have to report it.
func (in *Instance) goCallback(runs, port string, f func()) {
	t := task{runs: runs, port: port, f: f}
	select {
	case in.gs.idle <- t:
		return
	default:
	}
	g := in.gs
	g.mu.Lock()
	g.n++
	g.mu.Unlock()
	go in.work(t)
}

// work runs t and then whatever else it is given, until it has been idle for
// workerIdle or the instance has ended.
func (in *Instance) work(t task) {
	g, id, w := in.gs, goid(), &worker{}
	g.mu.Lock()
	g.byID[id] = w
	g.mu.Unlock()
	defer g.ended(id)
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		g.mu.Lock()
		w.cur = t
		g.mu.Unlock()
		t.f()
		g.mu.Lock()
		w.cur = task{}
		g.mu.Unlock()
		idle.Reset(workerIdle)
		select {
		case t = <-g.idle:
		case <-idle.C:
			return
		case <-in.done:
			return
		}
	}
}

func (g *goroutines) ended(id int64) {
	g.mu.Lock()
	delete(g.byID, id)
	g.n--
	g.signal()
	g.mu.Unlock()
}

// signal wakes every wait; g.mu is held.
func (g *goroutines) signal() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// wait waits until every goroutine of the instance has ended, ctx permitting. Called
// on one of them (from inside a callback, self being the caller's identity), it does
// not wait for that one, nor for others waiting in a Close of their own (each waits
// for the rest; two handlers closing the Ibis at once must not wait for each other).
// Called from anywhere else it waits for all of them. If ctx ends first, the error
// lists what the goroutines still running run.
func (g *goroutines) wait(ctx context.Context, self int64, what string) error {
	g.mu.Lock()
	inside := g.byID[self] != nil
	if inside {
		g.closers[self]++
		g.signal()
		defer func() {
			g.mu.Lock()
			if g.closers[self]--; g.closers[self] == 0 {
				delete(g.closers, self)
			}
			g.signal()
			g.mu.Unlock()
		}()
	}
	for {
		left := g.n
		if inside {
			left -= len(g.closers)
		}
		if left == 0 {
			g.mu.Unlock()
			return nil
		}
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
			g.mu.Lock()
		case <-ctx.Done():
			return ctxError(ctx, fmt.Sprintf("%s: %d goroutines that run program callbacks did not end (%s)",
				what, left, g.running(inside)))
		}
	}
}

// running describes what the goroutines still waited for run.
func (g *goroutines) running(inside bool) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for id, w := range g.byID {
		if inside && g.closers[id] > 0 {
			continue
		}
		if w.cur.runs == "" {
			out = append(out, "idle")
		} else {
			out = append(out, w.cur.String())
		}
	}
	if k := g.n - len(g.byID); k > 0 {
		out = append(out, strconv.Itoa(k)+" starting")
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// ask runs a program callback that answers a question (GotConnection) on a goroutine
// of the instance and waits for the answer, or until closed is closed, which counts as
// no. The caller is a transport goroutine, which Close waits for; had it run the
// callback itself, a callback that closes the Ibis would wait for its own goroutine.
func (in *Instance) ask(runs, port string, closed <-chan struct{}, f func() bool) bool {
	answer := make(chan bool, 1)
	in.goCallback(runs, port, func() { answer <- f() })
	select {
	case ok := <-answer:
		return ok
	case <-closed:
		return false
	}
}

// goid returns the calling goroutine's identity, read from the header of its stack
// trace ("goroutine 42 [running]:"), the only place the runtime gives it. It costs a
// few microseconds, so it is read once per goroutine, when it starts, and once per
// Close. Should the header ever change, it returns 0 (no goroutine has that identity):
// a Close from inside a callback then waits for its own goroutine until its bound and
// reports it, which the tests of this package would show at once.
func goid() int64 {
	var buf [64]byte
	b, ok := bytes.CutPrefix(buf[:runtime.Stack(buf[:], false)], []byte("goroutine "))
	if !ok {
		return 0
	}
	var id int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return id
		}
		id = id*10 + int64(c-'0')
	}
	return 0
}
