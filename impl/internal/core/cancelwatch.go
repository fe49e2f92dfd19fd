package core

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"
)

// cancelWatch ends the wait of a cancellable Receive on a direct connection: when the
// Receive's context ends while the Receive peeks at the next header, the stream's read
// deadline is set to now, and the Receive returns having consumed nothing.
//
// The registration with a context (context.AfterFunc) outlives the Receive once two
// Receives in a row passed contexts with the same Done channel, as a receive loop does:
// from then on such a Receive sets up nothing (no goroutine, timer, channel or
// allocation). A Receive with a context unlike the last one's registers for itself and
// ends its registration when it returns, as a context per Receive that is cancelled
// after it would otherwise run the callback for nothing. A callback that comes while no
// Receive peeks does nothing. close ends the registration when the connection ends.
//
// Locks: mu is a leaf; the callback takes it, so nothing holding it waits for one.
type cancelWatch struct {
	stream DirectStream

	mu      sync.Mutex
	done    <-chan struct{} // the Done channel of the registered context
	last    <-chan struct{} // the Done channel of the last Receive's context
	stop    func() bool     // ends the registration
	gen     uint64          // counts registrations: a callback of an earlier one does nothing
	peeking bool            // a Receive waits in Peek
	expired bool            // the callback set the read deadline of the Receive that peeks
	closed  bool            // the connection ended: nothing is registered any more
}

// peek waits for the next n bytes without consuming them, until they come or ctx
// ends; cancelled reports that ctx ended first (or had ended), the stream intact.
func (w *cancelWatch) peek(ctx context.Context, n int) (cancelled bool, err error) {
	done := ctx.Done()
	if done == nil {
		_, err = w.stream.Peek(n)
		return false, err
	}
	w.mu.Lock()
	if w.closed {
		// The connection is being closed, which ends the Peek.
		w.mu.Unlock()
		_, err = w.stream.Peek(n)
		return false, err
	}
	keep := true
	if done != w.done {
		keep = done == w.last
		w.register(ctx, done)
	}
	w.last = done
	w.peeking = true
	w.mu.Unlock()
	// Done is closed before the callback runs: a callback that found nobody peeking
	// came after done closed, which this sees.
	select {
	case <-done:
		w.endPeek(keep)
		return true, nil
	default:
	}
	_, err = w.stream.Peek(n)
	if w.endPeek(keep) && (err == nil || errors.Is(err, os.ErrDeadlineExceeded)) {
		return true, nil
	}
	return false, err
}

// endPeek ends the Receive's wait, clears the read deadline if the callback set it,
// and ends the registration unless it is kept; it reports whether the callback cut
// the wait.
func (w *cancelWatch) endPeek(keep bool) (expired bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.peeking = false
	expired = w.expired
	if expired {
		w.expired = false
		_ = w.stream.SetReadDeadline(time.Time{})
	}
	if !keep {
		w.unregister()
	}
	return expired
}

// register moves the registration to ctx, whose Done channel is done; the caller
// holds mu.
func (w *cancelWatch) register(ctx context.Context, done <-chan struct{}) {
	w.unregister()
	gen := w.gen
	w.done = done
	w.stop = context.AfterFunc(ctx, func() { w.fire(gen) })
}

// fire is the callback of registration gen: it cuts the wait of a Receive that peeks.
func (w *cancelWatch) fire(gen uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if gen != w.gen || !w.peeking || w.expired {
		return
	}
	_ = w.stream.SetReadDeadline(time.Now())
	w.expired = true
}

// unregister ends the registration, if any; a callback of it that is under way does
// nothing. The caller holds mu.
func (w *cancelWatch) unregister() {
	if w.stop != nil {
		w.stop()
		w.stop = nil
	}
	w.done = nil
	w.gen++
}

// close ends the registration for good: the connection ended.
func (w *cancelWatch) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	w.last = nil
	w.unregister()
}
