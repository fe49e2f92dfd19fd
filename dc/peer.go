package dc

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ibisgo/ibis/ipl"
)

// peer is the send side towards one other process, connected when first needed.
type peer struct {
	id     ipl.IbisIdentifier
	mu     sync.Mutex // one sender at a time, and the connect
	sp     ipl.SendPort
	closed bool
}

// errPeerGone: the process died or left, or the runtime closed.
var errPeerGone = errors.New("dc: the process is gone")

// peerFor returns the peer for id, making it when new; nil when it is known dead or the
// runtime is closing.
func (rt *Runtime) peerFor(id ipl.IbisIdentifier) *peer {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.dead[id.ID] || rt.life.Err() != nil {
		return nil
	}
	p := rt.peers[id.ID]
	if p == nil {
		p = &peer{id: id}
		rt.peers[id.ID] = p
	}
	return p
}

// send writes one message to id: h, then what payload writes (nil: nothing). It connects
// first when needed; the whole send is bounded by the send timeout.
func (rt *Runtime) send(id ipl.IbisIdentifier, h *header, payload func(writer) error) error {
	p := rt.peerFor(id)
	if p == nil {
		return fmt.Errorf("sending to %s: %w", id, errPeerGone)
	}
	ctx, cancel := context.WithTimeout(rt.life, rt.o.sendTimeout)
	defer cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return fmt.Errorf("sending to %s: %w", id, errPeerGone)
	}
	if p.sp == nil {
		sp, err := rt.ib.CreateSendPort(PortType, "")
		if err != nil {
			return fmt.Errorf("dc: a send port to %s: %w", id, err)
		}
		if err := sp.Connect(ctx, id, portName); err != nil {
			return errors.Join(fmt.Errorf("dc: connecting to %s: %w", id, err), sp.Close())
		}
		p.sp = sp
	}
	m, err := p.sp.NewMessage(ctx)
	if err != nil {
		return fmt.Errorf("dc: a message to %s: %w", id, err)
	}
	err = h.write(m)
	if err == nil && payload != nil {
		err = payload(m)
	}
	if _, ferr := m.Finish(); err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("dc: sending to %s: %w", id, err)
	}
	if id.Tag != rt.site {
		rt.wideArea.Add(1)
	}
	return nil
}

// close closes the peer's send port; sends after it fail.
func (p *peer) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.sp == nil {
		return nil
	}
	err := p.sp.Close()
	p.sp = nil
	return err
}
