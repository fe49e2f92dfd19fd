// Package fifo is the one first-in first-out queue of the module: unbounded (or
// bounded by dropping the oldest), safe for many producers, with a wake-up channel a
// consumer can select on beside its other channels. The registry's event and frame
// queues, and core's registry events, connection callbacks and push inboxes use it.
package fifo

import (
	"sync"

	"github.com/ibisgo/ibis/internal/wake"
)

// Queue is a FIFO of T. A producer never blocks, which is what lets a connection's
// reader keep reading while a slow consumer (an event handler, a congested socket)
// falls behind; where memory must stay bounded, PushBounded drops the oldest item.
// The zero Queue is not usable: make one with New.
//
// Lock order: mu is a leaf (the wake-up is poked after it is released), so a producer
// may push while it holds a lock of its own, as the registry server does under its mu.
type Queue[T any] struct {
	mu     sync.Mutex
	items  []T
	closed bool
	wake   chan struct{} // capacity 1: "something changed"
}

// New returns an empty, open queue.
func New[T any]() *Queue[T] {
	return &Queue[T]{wake: make(chan struct{}, 1)}
}

// Wake returns the channel that receives a token after a Push or Close; a consumer
// that found the queue empty selects on it, then looks again.
func (q *Queue[T]) Wake() <-chan struct{} { return q.wake }

// Push appends v; it reports false (and drops v) once the queue is closed.
func (q *Queue[T]) Push(v T) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, v)
	q.mu.Unlock()
	wake.Poke(q.wake)
	return true
}

// PushBounded appends v, first dropping the oldest item when max are queued; it
// reports whether it dropped one. A closed queue drops v and reports false.
func (q *Queue[T]) PushBounded(v T, max int) (dropped bool) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	if len(q.items) >= max {
		var zero T
		q.items[0] = zero
		q.items = q.items[1:]
		dropped = true
	}
	q.items = append(q.items, v)
	q.mu.Unlock()
	wake.Poke(q.wake)
	return dropped
}

// Close marks the end of input: consumers drain what is queued, then stop.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	wake.Poke(q.wake)
}

// TryPop removes and returns the oldest item, or reports false when there is none.
func (q *Queue[T]) TryPop() (T, bool) {
	var zero T
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return zero, false
	}
	v := q.items[0]
	q.items[0] = zero
	q.items = q.items[1:]
	if len(q.items) == 0 {
		q.items = nil // let the backing array go
	}
	return v, true
}

// Take removes and returns everything queued (appended to dst), and whether the
// queue is closed. It does not block.
func (q *Queue[T]) Take(dst []T) ([]T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	dst = append(dst, q.items...)
	clear(q.items)
	q.items = q.items[:0]
	return dst, q.closed
}

// Pop blocks until an item is available and returns it. It returns false when stop
// is closed (queued items are abandoned) or when the queue is closed and empty.
func (q *Queue[T]) Pop(stop <-chan struct{}) (T, bool) {
	var zero T
	for {
		select {
		case <-stop:
			return zero, false
		default:
		}
		if v, ok := q.TryPop(); ok {
			return v, true
		}
		q.mu.Lock()
		closed := q.closed && len(q.items) == 0
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
