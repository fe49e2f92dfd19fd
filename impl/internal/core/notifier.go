package core

import (
	"sync"
	"sync/atomic"
)

// notifier runs the program's connection callbacks (lost connections on both sides)
// in order on one goroutine of its own. Calling them from the goroutine that found the
// loss would run user code while that goroutine holds a port's token or is a
// transport goroutine that Close waits for; a callback that reconnects, sends, or
// closes the Ibis would then wait on itself.
type notifier struct {
	in *Instance

	mu      sync.Mutex
	pending []func()
	wake    chan struct{}
	stop    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

func newNotifier(in *Instance) *notifier {
	n := &notifier{
		in:      in,
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	go n.pump()
	return n
}

// push queues f; callbacks queued after close are dropped with the instance.
func (n *notifier) push(f func()) {
	n.mu.Lock()
	n.pending = append(n.pending, f)
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *notifier) pump() {
	defer close(n.stopped)
	for {
		n.mu.Lock()
		var f func()
		if len(n.pending) > 0 {
			f = n.pending[0]
			n.pending[0] = nil
			n.pending = n.pending[1:]
		}
		n.mu.Unlock()
		if f == nil {
			select {
			case <-n.wake:
				continue
			case <-n.stop:
				return
			}
		}
		select {
		case <-n.stop:
			return
		default:
		}
		n.in.callback(f)
	}
}

// close stops the pump and waits for it (Close decides whether it may wait: not from
// inside a callback).
func (n *notifier) close(wait bool) {
	n.once.Do(func() { close(n.stop) })
	if wait {
		<-n.stopped
	}
}

// callbacks counts program callbacks running right now. Close does not wait for the
// goroutines that run them while any runs (it may be running inside one of them); they
// end as soon as the callbacks return.
type callbacks struct{ running atomic.Int32 }

// callback runs a program callback, counted.
func (in *Instance) callback(f func()) {
	in.cb.running.Add(1)
	defer in.cb.running.Add(-1)
	f()
}
