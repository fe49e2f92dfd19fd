package registry

import (
	"sync"

	"github.com/ibisgo/ibis/internal/wake"
)

// fifo is an unbounded first-in first-out queue with a wake-up channel. The
// producer never blocks, which is what lets a connection's reader keep
// reading while a slow consumer (an event handler, a congested socket) falls
// behind. Where memory must stay bounded, the producer keeps count itself.
type fifo[T any] struct {
	mu     sync.Mutex
	items  []T
	closed bool
	wake   chan struct{} // capacity 1: "something changed"
}

func newFIFO[T any]() *fifo[T] {
	return &fifo[T]{wake: make(chan struct{}, 1)}
}

// push appends v; it reports false (and drops v) once the queue is closed.
func (q *fifo[T]) push(v T) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.signal()
	return true
}

// close marks the end of input: consumers drain what is queued, then stop.
func (q *fifo[T]) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *fifo[T]) signal() {
	wake.Poke(q.wake)
}

// take removes and returns everything queued (appended to dst), and whether
// the queue is closed. It does not block.
func (q *fifo[T]) take(dst []T) ([]T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	dst = append(dst, q.items...)
	clear(q.items)
	q.items = q.items[:0]
	return dst, q.closed
}

// pop blocks until an item is available and returns it. It returns false
// when stop is closed (queued items are abandoned) or when the queue is
// closed and empty.
func (q *fifo[T]) pop(stop <-chan struct{}) (T, bool) {
	var zero T
	for {
		select {
		case <-stop:
			return zero, false
		default:
		}
		q.mu.Lock()
		if len(q.items) > 0 {
			v := q.items[0]
			q.items[0] = zero
			q.items = q.items[1:]
			if len(q.items) == 0 {
				q.items = nil // let the backing array go
			}
			q.mu.Unlock()
			return v, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return zero, false
		}
		select {
		case <-q.wake:
		case <-stop:
			return zero, false
		}
	}
}
