package core

import (
	"fmt"

	"github.com/ibisgo/ibis/ipl"
)

// Concurrent upcalls (ipl.WithConcurrentUpcalls): a receive port's token has one slot
// per upcall that may hold a message at the same time. Each dispatcher takes one slot
// for its message; an explicit Receive or a Poll takes them all, so that its message
// is the port's only live one, as on any other port. A connection's next message
// starts only once its last one is finished (every message source keeps that), so each
// connection stays FIFO however many slots the port has. With one slot (the default)
// every take below is the plain token's.

// maxConcurrentUpcalls bounds the option, catching a count that is no count of
// handlers (a size in bytes, a negative number cast).
const maxConcurrentUpcalls = 1 << 16

// checkConcurrentUpcalls refuses a concurrency the port cannot have.
func checkConcurrentUpcalls(pt ipl.PortType, pc ipl.ReceivePortConfig) error {
	n := pc.ConcurrentUpcalls
	switch {
	case n < 0 || n > maxConcurrentUpcalls:
		return fmt.Errorf("%w: %d concurrent upcalls: want 0 to %d", ipl.ErrInvalidArgument, n, maxConcurrentUpcalls)
	case n <= 1:
		return nil
	case pc.MessageHandler == nil:
		return fmt.Errorf("%w: %d concurrent upcalls need a message handler (ipl.WithMessageHandler)", ipl.ErrUnsupported, n)
	case !pt.Has(ipl.ReceiveAutoUpcalls):
		return fmt.Errorf("%w: %d concurrent upcalls need %s in the port type", ipl.ErrUnsupported, n, ipl.ReceiveAutoUpcalls)
	}
	return nil
}

// upcallSlots is how many messages of the port may live at once.
func upcallSlots(cfg ipl.ReceivePortConfig) int { return max(cfg.ConcurrentUpcalls, 1) }

// takeAll waits for every slot of the token until a or b closes, and reports whether
// it got them. Takers of all slots go one at a time (gather), so two of them never
// hold part of the slots each and wait for each other.
func (p *ReceivePort) takeAll(a, b <-chan struct{}) bool {
	if p.slots == 1 {
		return p.token.take(a, b)
	}
	if !p.gather.take(a, b) {
		return false
	}
	defer p.gather.release()
	for i := range p.slots {
		if !p.token.take(a, b) {
			p.releaseN(i)
			return false
		}
	}
	return true
}

// tryTakeAll takes every slot if all are free, else none.
func (p *ReceivePort) tryTakeAll() bool {
	if p.slots == 1 {
		return p.token.tryTake()
	}
	if !p.gather.tryTake() {
		return false
	}
	defer p.gather.release()
	for i := range p.slots {
		if !p.token.tryTake() {
			p.releaseN(i)
			return false
		}
	}
	return true
}

// releaseAll gives back every slot; only their holder calls it.
func (p *ReceivePort) releaseAll() { p.releaseN(p.slots) }

func (p *ReceivePort) releaseN(n int) {
	for range n {
		p.token.release()
	}
}

// release gives back what the holder of message m holds: one slot for an upcall's
// dispatcher, all of them for a Receive or a Poll.
func (p *ReceivePort) release(m *readMessage) {
	if m.whole {
		p.releaseAll()
		return
	}
	p.token.release()
}
