package core

import (
	"sync"
	"sync/atomic"
)

// pushQueue is a receive port's FIFO of inboxes with something to read, and the state
// of the one goroutine that serves them.
type pushQueue struct {
	once    sync.Once
	mu      sync.Mutex
	pending []*Inbox
	sig     chan struct{} // capacity 1: the list went from empty to non-empty
	// buffered counts the unread bytes of all the port's inboxes.
	buffered atomic.Int64
	parked   []*Inbox // paused for the port's budget (see PortHighWater)
}

// startPump starts the port's pump the first time a push-mode connection arrives.
func (p *ReceivePort) startPump() {
	p.push.once.Do(func() {
		p.push.sig = make(chan struct{}, 1)
		p.in.Go(p.pump)
	})
}

// enqueueInbox puts an inbox at the end of the pending list.
func (p *ReceivePort) enqueueInbox(b *Inbox) {
	q := &p.push
	q.mu.Lock()
	q.pending = append(q.pending, b)
	q.mu.Unlock()
	select {
	case q.sig <- struct{}{}:
	default:
	}
}

// park remembers an inbox paused for the port's budget.
func (p *ReceivePort) park(b *Inbox) {
	q := &p.push
	q.mu.Lock()
	q.parked = append(q.parked, b)
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
	room := int((PortHighWater - q.buffered.Load()) / unparkRead)
	q.mu.Lock()
	k := min(max(room, 1), len(q.parked))
	list := q.parked[:k:k]
	q.parked = q.parked[k:]
	if len(q.parked) == 0 {
		q.parked = nil
	}
	q.mu.Unlock()
	for _, b := range list {
		if resume := b.unparked(); resume != nil {
			resume()
		}
	}
}

// nextInbox takes the oldest pending inbox and marks it owned, waiting while there is
// none; it returns nil when the port closes.
func (p *ReceivePort) nextInbox() *Inbox {
	q := &p.push
	for {
		q.mu.Lock()
		if len(q.pending) > 0 {
			b := q.pending[0]
			q.pending[0] = nil
			q.pending = q.pending[1:]
			if len(q.pending) == 0 {
				q.pending = nil
			}
			q.mu.Unlock()
			b.mu.Lock()
			b.queued, b.owned = false, true
			b.mu.Unlock()
			return b
		}
		q.mu.Unlock()
		select {
		case <-q.sig:
		case <-p.closed:
			return nil
		}
	}
}

// pump delivers the messages of push-mode connections, one at a time, in the order
// their inboxes became ready; each connection stays FIFO because its inbox is on the
// list at most once and not while a message of it is live.
func (p *ReceivePort) pump() {
	for {
		b := p.nextInbox()
		if b == nil {
			return
		}
		if !p.serveInbox(b) {
			return
		}
	}
}

// serveInbox delivers the next message of b, or retires b's connection when it ended
// or broke. It returns false when the port closed.
func (p *ReceivePort) serveInbox(b *Inbox) bool {
	ic := b.ic
	m, err := p.startMessage(ic)
	if err != nil {
		p.connEnded(ic, err)
		_ = ic.c.Close()
		b.discard()
		return !p.isClosed()
	}
	select {
	case p.ready <- m:
	case <-p.closed:
		return false
	}
	select {
	case <-ic.done:
	case <-p.closed:
		return false
	}
	if m.fatal != nil {
		p.connEnded(ic, m.fatal)
		_ = ic.c.Close()
		b.discard()
		return true
	}
	b.released()
	return true
}
