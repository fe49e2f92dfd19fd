package core

import (
	"sync"

	"github.com/ibisgo/ibis/internal/fifo"
)

// notifier runs the program's connection callbacks (lost connections on both sides)
// in order on one goroutine of its own. Calling them from the goroutine that found the
// loss would run user code while that goroutine holds a port's token or is a
// transport goroutine that Close waits for; a callback that reconnects, sends, or
// closes the Ibis would then wait on itself.
type notifier struct {
	pending *fifo.Queue[func()]
	stop    chan struct{}
	once    sync.Once
}

func newNotifier(in *Instance) *notifier {
	n := &notifier{
		pending: fifo.New[func()](),
		stop:    make(chan struct{}),
	}
	in.goCallback(runsNotifier, "", n.pump)
	return n
}

// push queues f; callbacks queued after close are dropped with the instance.
func (n *notifier) push(f func()) { n.pending.Push(f) }

func (n *notifier) pump() {
	for {
		f, ok := n.pending.TryPop()
		if !ok {
			select {
			case <-n.pending.Wake():
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
		f()
	}
}

// close stops the pump; Close waits for its goroutine with the instance's others.
func (n *notifier) close() {
	n.once.Do(func() { close(n.stop) })
}
