package core

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/ipl"
)

// EnableMessageUpcalls starts delivering messages to the port's handler.
func (p *ReceivePort) EnableMessageUpcalls() error {
	if p.cfg.MessageHandler == nil {
		return fmt.Errorf("enable upcalls at %s: %w: the port has no message handler (ipl.WithMessageHandler)", p.id, ipl.ErrUnsupported)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.isClosed() {
		return fmt.Errorf("enable upcalls at %s: %w", p.id, ipl.ErrClosed)
	}
	if p.upcallStop != nil {
		return nil
	}
	stop := make(chan struct{})
	p.upcallStop = stop
	if p.pt.Has(ipl.ReceiveAutoUpcalls) {
		for range p.slots {
			p.startDispatcher(stop)
		}
	}
	return nil
}

// DisableMessageUpcalls stops delivering to the handler (every dispatcher of a port
// with concurrent upcalls); upcalls in progress run on.
func (p *ReceivePort) DisableMessageUpcalls() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.upcallStop != nil {
		close(p.upcallStop)
		p.upcallStop = nil
	}
}

// startDispatcher runs a dispatcher on a goroutine of the instance.
func (p *ReceivePort) startDispatcher(stop chan struct{}) {
	if stop == nil {
		return
	}
	p.in.gs.spawn(runsUpcalls, p.name, func(t *tracked) { p.dispatch(stop, t) })
}

// dispatch delivers messages to the handler one at a time until upcalls are disabled,
// the port closes, or a handler finishes its message early (a new dispatcher then
// carries on while that handler runs to its end). A port with n concurrent upcalls runs
// n dispatchers, each holding one slot of the token for its message.
func (p *ReceivePort) dispatch(stop chan struct{}, t *tracked) {
	for {
		if !p.token.take(stop, p.closed) {
			return
		}
		// Disabling wins over a waiting message: select picks at random among ready
		// cases, so stop is checked on its own first.
		select {
		case <-stop:
			p.token.release()
			return
		default:
		}
		m, why := p.next(context.Background(), stop, true)
		if why != gotMessage {
			p.token.release()
			return
		}
		select {
		case <-stop:
			// Disabled while the message arrived: keep it for whoever receives next.
			p.stashMessage(m)
			p.token.release()
			return
		default:
		}
		if p.upcall(m, stop, t) {
			return
		}
	}
}

// upcall runs the handler on m and finishes m if the handler did not. It reports
// whether the handler finished m early, handing the port to a new dispatcher.
// stop and t are the dispatcher's stop channel and goroutine, nil for an upcall from
// Poll (the program's own goroutine, which the instance does not track).
func (p *ReceivePort) upcall(m *readMessage, stop chan struct{}, t *tracked) (handedOff bool) {
	m.mu.Lock()
	m.inUpcall = stop != nil
	m.stop = stop
	m.mu.Unlock()
	if t != nil {
		t.mark(true)
	}
	err := p.cfg.MessageHandler(m)
	if t != nil {
		t.mark(false)
	}
	if err != nil {
		p.log.Warn("message handler failed", zap.Stringer("from", m.ic.from), zap.Error(err))
	}
	m.mu.Lock()
	m.inUpcall = false
	handedOff = m.handedOff
	done := m.finished
	m.mu.Unlock()
	if !done {
		if _, ferr := m.Finish(); ferr != nil {
			p.log.Debug("finishing upcall message", zap.Error(ferr))
		}
	}
	return handedOff
}

// takeStash returns a message a dispatcher took just as upcalls were disabled (the
// oldest, when several dispatchers did), or nil.
func (p *ReceivePort) takeStash() *readMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.stash) == 0 {
		return nil
	}
	m := p.stash[0]
	p.stash[0] = nil
	p.stash = p.stash[1:]
	if len(p.stash) == 0 {
		p.stash = nil
	}
	return m
}

func (p *ReceivePort) stashMessage(m *readMessage) {
	p.mu.Lock()
	p.stash = append(p.stash, m)
	p.mu.Unlock()
}
