package core

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// What the instance's goroutines run, for the error of a wait that gave up.
const (
	runsUpcalls       = "message handler of receive port"
	runsGotConnection = "GotConnection of receive port"
	runsNotifier      = "lost-connection and disconnect handlers"
	runsEvents        = "event handler"
	runsInstance      = "instance goroutine"
	runsSelfClose     = "Close after the registry declared the instance dead"
)

// goroutines tracks every goroutine the instance starts and knows how many of them are
// inside a program callback right now. Close waits for the others only: a callback may
// call Close (it would otherwise wait for itself), and one that is not Ibis's to end
// must not hold Close. Wait waits for all of them. No goroutine is identified: each
// holds its own record and marks its callbacks on it.
type goroutines struct {
	mu      sync.Mutex
	live    map[*tracked]struct{} // started and not yet ended
	changed chan struct{}         // made by a wait, closed on the next change of live or inside
	// inside counts the live goroutines inside a program callback. It changes twice per
	// message upcall, so it is atomic and takes mu only while a wait is under way
	// (waiters): a wait counts itself before it reads inside, and a change reads waiters
	// after it wrote inside, so one of the two sees the other.
	inside  atomic.Int64
	waiters atomic.Int32
}

// tracked is one goroutine of the instance, held by that goroutine.
type tracked struct {
	g        *goroutines
	runs     string      // one of the runs* constants
	port     string      // the port it serves, or ""
	callback atomic.Bool // inside a program callback now
}

func (t *tracked) String() string {
	if t.port == "" {
		return t.runs
	}
	return t.runs + " " + strconv.Quote(t.port)
}

func newGoroutines() *goroutines {
	return &goroutines{live: map[*tracked]struct{}{}}
}

// spawn runs f on a new goroutine of the instance; f marks its program callbacks with
// t.call. The goroutine counts from before spawn returns, so a goroutine started by
// another one is never missed by a wait.
func (g *goroutines) spawn(runs, port string, f func(t *tracked)) {
	t := &tracked{g: g, runs: runs, port: port}
	g.mu.Lock()
	g.live[t] = struct{}{}
	g.signal()
	g.mu.Unlock()
	go func() {
		defer g.ended(t)
		f(t)
	}()
}

// call runs the program callback f, marked as one for the waits.
func (t *tracked) call(f func()) {
	t.mark(true)
	defer t.mark(false)
	f()
}

func (t *tracked) mark(inside bool) {
	g := t.g
	t.callback.Store(inside)
	if inside {
		g.inside.Add(1)
	} else {
		g.inside.Add(-1)
	}
	if g.waiters.Load() > 0 {
		g.mu.Lock()
		g.signal()
		g.mu.Unlock()
	}
}

func (g *goroutines) ended(t *tracked) {
	g.mu.Lock()
	delete(g.live, t)
	g.signal()
	g.mu.Unlock()
}

// signal wakes every wait; g.mu is held. With no wait there is nothing to close.
func (g *goroutines) signal() {
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

// wait waits until every goroutine of the instance has ended (all), or every one
// that is not inside a program callback (!all), ctx permitting. If ctx ends first,
// the error says what the goroutines still waited for run.
func (g *goroutines) wait(ctx context.Context, all bool, what string) error {
	g.waiters.Add(1)
	defer g.waiters.Add(-1)
	for {
		g.mu.Lock()
		left := len(g.live)
		if !all {
			left -= int(g.inside.Load())
		}
		if left == 0 {
			g.mu.Unlock()
			return nil
		}
		if g.changed == nil {
			g.changed = make(chan struct{})
		}
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctxError(ctx, fmt.Sprintf("%s: %d goroutines of the instance did not end (%s)",
				what, left, g.running(all)))
		}
	}
}

// running describes what the goroutines a wait still waits for run.
func (g *goroutines) running(all bool) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for t := range g.live {
		if all || !t.callback.Load() {
			out = append(out, t.String())
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// goCallback runs the program callback f on a goroutine of the instance.
func (in *Instance) goCallback(runs, port string, f func()) {
	in.gs.spawn(runs, port, func(t *tracked) { t.call(f) })
}

// ask runs a program callback that answers a question (GotConnection) on a goroutine
// of the instance and waits for the answer, or until closed is closed, which counts as
// no. The caller is a transport goroutine, which Close waits for; the callback, which
// may call Close, runs on a goroutine Close does not wait for.
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
