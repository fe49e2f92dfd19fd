package core

import (
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/fifo"
	"github.com/ibisgo/ibis/ipl"
)

// eventQueue hands registry events to the program: to its handler, or to the channel
// of Registry().Events(). It never blocks the registry client: events wait in an
// in-order queue until the program takes them. The queue is bounded (maxPendingEvents):
// other members can send signals at will, and a program that never reads Events() must
// not hold them all; past the bound the oldest event is dropped and the drop logged.
type eventQueue struct {
	in      *Instance
	handler func(ipl.Event)
	out     chan ipl.Event

	pending *fifo.Queue[ipl.Event]
	dropped atomic.Int64 // events dropped because the queue was full
	// pushed and handed count events queued and given to the program (its handler
	// returned, or the channel took it), for settle.
	pushed, handed atomic.Int64
	stop           chan struct{}
	once           sync.Once
}

func newEventQueue(in *Instance, handler func(ipl.Event)) *eventQueue {
	q := &eventQueue{
		in:      in,
		handler: handler,
		out:     make(chan ipl.Event),
		pending: fifo.New[ipl.Event](),
		stop:    make(chan struct{}),
	}
	in.gs.spawn(runsEvents, "", q.pump)
	return q
}

// maxPendingEvents bounds the events waiting for the program: far more than the joins,
// leaves and deaths of a 1,000-member pool and its elections, a few MiB at most.
const maxPendingEvents = 1 << 16

func (q *eventQueue) push(e ipl.Event) {
	q.pushed.Add(1)
	if q.pending.PushBounded(e, maxPendingEvents) {
		if n := q.dropped.Add(1); n&(n-1) == 0 { // the 1st, 2nd, 4th, ... drop
			q.in.log.Warn("registry events nobody reads: dropping the oldest",
				zap.Int("waiting", maxPendingEvents), zap.Int64("dropped", n))
		}
	}
}

func (q *eventQueue) pump(t *tracked) {
	defer close(q.out)
	for {
		e, have := q.pending.TryPop()
		if !have {
			select {
			case <-q.pending.Wake():
				continue
			case <-q.stop:
				return
			}
		}
		select {
		case <-q.stop: // closed: what is still queued is dropped with the instance
			return
		default:
		}
		if q.handler != nil {
			t.call(func() { q.handler(e) })
			q.handed.Add(1)
			continue
		}
		select {
		case q.out <- e:
			q.handed.Add(1)
		case <-q.stop:
			return
		}
	}
}

// settle waits, at most for limit, until every event queued so far has been given to
// the program (or dropped), so that an instance that ends by itself can tell it why
// before Close stops delivery. A program that does not read Events() costs the limit.
func (q *eventQueue) settle(limit time.Duration) {
	target := q.pushed.Load()
	deadline := time.Now().Add(limit)
	for q.handed.Load()+q.dropped.Load() < target && time.Now().Before(deadline) {
		select {
		case <-q.stop:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// close stops delivery; events not yet taken are dropped with the instance, and a
// handler that runs goes on to its end.
func (q *eventQueue) close() {
	q.once.Do(func() { close(q.stop) })
}
