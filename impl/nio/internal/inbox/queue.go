package inbox

import (
	"sync"
	"sync/atomic"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/internal/fifo"
	"github.com/ibisgo/ibis/ipl"
)

// Queue is a receive port's source (core.Source): the FIFO of its inboxes whose next
// message can start, and the port's budget of unread bytes.
//
// Locks: mu is a leaf, never held together with an inbox's mu.
type Queue struct {
	manyToOne bool                // whole messages first (core.WholeMessageLimit)
	pending   *fifo.Queue[*Inbox] // its Wake fires when an inbox was queued
	mu        sync.Mutex          // guards parked
	// buffered counts the unread bytes of all the port's inboxes.
	buffered atomic.Int64
	parked   []*Inbox     // paused for the port's budget (see PortHighWater)
	nParked  atomic.Int32 // len(parked), read without the lock on every Read
}

var _ core.Source = (*Queue)(nil)

// NewQueue makes the source of a receive port of type pt.
func NewQueue(pt ipl.PortType) *Queue {
	return &Queue{manyToOne: pt.ManyToOne(), pending: fifo.New[*Inbox]()}
}

// Take gives the caller the oldest queued connection, or nil (core.Source).
func (q *Queue) Take() *core.Acceptance {
	b := q.pop()
	if b == nil {
		return nil
	}
	return b.c.(*core.Acceptance)
}

// Wake fires after an inbox was queued (core.Source).
func (q *Queue) Wake() <-chan struct{} { return q.pending.Wake() }

// pop takes the oldest queued inbox and marks it owned, or returns nil.
func (q *Queue) pop() *Inbox {
	b, ok := q.pending.TryPop()
	if !ok {
		return nil
	}
	b.mu.Lock()
	b.to(inboxOwned)
	b.mu.Unlock()
	return b
}

// park remembers an inbox paused for the port's budget.
func (q *Queue) park(b *Inbox) {
	q.mu.Lock()
	q.parked = append(q.parked, b)
	q.nParked.Store(int32(len(q.parked)))
	q.mu.Unlock()
}

// unparkRead is what a resumed connection is assumed to bring in before it is parked
// again (one read of an event loop).
const unparkRead = 64 << 10

// unpark resumes parked inboxes, oldest first, as many as the port's budget has room
// for; the reader calls it once the port has drained below PortLowWater. Resuming
// them all at once would let each bring in a read's worth before it parks again.
func (q *Queue) unpark() {
	room := max(int((PortHighWater-q.buffered.Load())/unparkRead), 1)
	for room > 0 {
		q.mu.Lock()
		if len(q.parked) == 0 {
			q.parked = nil
			q.mu.Unlock()
			return
		}
		b := q.parked[0]
		q.parked[0] = nil
		q.parked = q.parked[1:]
		q.nParked.Store(int32(len(q.parked)))
		q.mu.Unlock()
		// An entry whose inbox was resumed by its reader, or retired, is skipped.
		if resume := b.unparked(); resume != nil {
			resume()
			room--
		}
	}
}
