package core

import (
	"sync"

	"github.com/ibisgo/ibis/internal/fifo"
)

// notifier runs the program's connection callbacks (lost connections on both sides)
// in order on a goroutine of its own, so that the goroutine that found the loss (which
// may hold a port's token, or be a transport goroutine Close waits for) never runs
// program code: a callback may reconnect, send or close the Ibis.
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
	in.gs.spawn(runsNotifier, "", n.pump)
	return n
}

// push queues f; callbacks queued after close are dropped with the instance.
func (n *notifier) push(f func()) { n.pending.Push(f) }

func (n *notifier) pump(t *tracked) {
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
		t.call(f)
	}
}

// close stops the pump; a callback that runs goes on to its end.
func (n *notifier) close() {
	n.once.Do(func() { close(n.stop) })
}
