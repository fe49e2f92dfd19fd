package core

import (
	"sync"
	"sync/atomic"

	"github.com/ibisgo/ibis/internal/fifo"
)

// pushQueue is a receive port's FIFO of inboxes whose next message can start. Whoever
// holds the port's token (a Receive, a Poll, the upcall dispatcher) takes the oldest
// and starts its message on its own goroutine: no goroutine sits between the event
// loop and the receiver.
//
// Lock order: mu is a leaf, never held together with an inbox's mu: park is called
// after Push released the inbox's, and unpark releases mu before it takes an inbox's
// (unparked) and resumes it. A reader takes it under its message's mu (Finish reads
// through Inbox.Read, which may unpark).
type pushQueue struct {
	pending *fifo.Queue[*Inbox] // its Wake fires when an inbox was queued
	mu      sync.Mutex          // guards parked
	// buffered counts the unread bytes of all the port's inboxes.
	buffered atomic.Int64
	parked   []*Inbox     // paused for the port's budget (see PortHighWater)
	nParked  atomic.Int32 // len(parked), read without the lock on every Read
}

// enqueueInbox puts an inbox at the end of the pending list.
func (p *ReceivePort) enqueueInbox(b *Inbox) { p.push.pending.Push(b) }

// park remembers an inbox paused for the port's budget.
func (p *ReceivePort) park(b *Inbox) {
	q := &p.push
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
func (p *ReceivePort) unpark() {
	q := &p.push
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

// popInbox takes the oldest pending inbox and marks it owned, or returns nil.
func (p *ReceivePort) popInbox() *Inbox {
	b, ok := p.push.pending.TryPop()
	if !ok {
		return nil
	}
	b.mu.Lock()
	b.to(inboxOwned)
	b.mu.Unlock()
	return b
}

// takePush starts the next message of the oldest pending inbox, retiring connections
// that ended or broke on the way; it returns nil when none is pending. The caller
// holds the token. It does not wait: a pending inbox holds its next message's first
// packet, or ended.
func (p *ReceivePort) takePush() *readMessage {
	for {
		b := p.popInbox()
		if b == nil {
			return nil
		}
		m, err := p.startMessage(b.ic, b)
		if err == nil {
			return m
		}
		p.retireInbox(b, err)
	}
}

// retireInbox drops a push-mode connection that ended or broke.
func (p *ReceivePort) retireInbox(b *Inbox, err error) {
	b.mu.Lock()
	b.to(inboxRetired)
	if b.flow == flowParked {
		b.flowTo(flowPaused) // its entry in the parked list is skipped
	}
	b.mu.Unlock()
	p.connEnded(b.ic, err)
	_ = b.ic.c.Close()
	b.discard()
}
