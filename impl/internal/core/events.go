package core

import (
	"sync"

	"github.com/ibisgo/ibis/ipl"
)

// eventQueue hands registry events to the program: to its handler, or to the channel
// of Registry().Events(). It never blocks the registry client: events wait in an
// unbounded in-order queue until the program takes them, so none is lost.
type eventQueue struct {
	in      *Instance
	handler func(ipl.Event)
	out     chan ipl.Event

	mu      sync.Mutex
	pending []ipl.Event
	wake    chan struct{}
	stop    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

func newEventQueue(in *Instance, handler func(ipl.Event)) *eventQueue {
	q := &eventQueue{
		in:      in,
		handler: handler,
		out:     make(chan ipl.Event),
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	go q.pump()
	return q
}

func (q *eventQueue) push(e ipl.Event) {
	q.mu.Lock()
	q.pending = append(q.pending, e)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *eventQueue) pump() {
	defer close(q.stopped)
	defer close(q.out)
	for {
		q.mu.Lock()
		var e ipl.Event
		have := len(q.pending) > 0
		if have {
			e = q.pending[0]
			q.pending[0] = ipl.Event{}
			q.pending = q.pending[1:]
		}
		q.mu.Unlock()
		if !have {
			select {
			case <-q.wake:
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
			q.in.callback(func() { q.handler(e) })
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
