package core

import (
	"sync"
	"sync/atomic"

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
	stop    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

func newEventQueue(in *Instance, handler func(ipl.Event)) *eventQueue {
	q := &eventQueue{
		in:      in,
		handler: handler,
		out:     make(chan ipl.Event),
		pending: fifo.New[ipl.Event](),
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	in.goCallback(runsEvents, "", q.pump)
	return q
}

// maxPendingEvents bounds the events waiting for the program: far more than the joins,
// leaves and deaths of a 1,000-member pool and its elections, a few MiB at most.
const maxPendingEvents = 1 << 16

func (q *eventQueue) push(e ipl.Event) {
	if q.pending.PushBounded(e, maxPendingEvents) {
		if n := q.dropped.Add(1); n&(n-1) == 0 { // the 1st, 2nd, 4th, ... drop
			q.in.log.Warn("registry events nobody reads: dropping the oldest",
				zap.Int("waiting", maxPendingEvents), zap.Int64("dropped", n))
		}
	}
}

func (q *eventQueue) pump() {
	defer close(q.stopped)
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
			q.handler(e)
			continue
		}
		select {
		case q.out <- e:
		case <-q.stop:
			return
		}
	}
}

// close stops delivery, waiting for the pump when wait is set; events not yet taken
// are dropped with the instance.
func (q *eventQueue) close(wait bool) {
	q.once.Do(func() { close(q.stop) })
	if wait {
		<-q.stopped
	}
}
