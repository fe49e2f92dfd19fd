package dc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/ipl"
)

// peer is the send side towards one other process, connected when first needed.
//
// Lock order: mu before the Ibis's locks. sendNow holds it while it creates the send
// port (the instance's mu) and connects, writes and finishes the message, and close
// while it closes the port (the send port's locks, and through them the transport's).
// The runtime's mu is never held together with it: lost and Close take a peer out of
// the map under the runtime's mu and close it after releasing it, and sendLate calls
// sent only once sendNow has returned. The runtime's mu is a leaf.
type peer struct {
	id ipl.IbisIdentifier
	// ctx ends when the process is gone (lost closes the peer) or the runtime closes: it
	// cuts short a send in progress, which would otherwise hold mu for its whole timeout
	// (mp's connect to a process that has closed waits for an answer that never comes).
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex // one sender at a time, and the connect
	sp     ipl.SendPort
	closed bool
	// late holds the messages an emulated wide-area link delays (WithWideAreaDelay),
	// in order; a goroutine of the peer sends each when it is due.
	late chan delayed // guarded by the runtime's mu until made
}

// delayed is a message held back by an emulated wide-area link.
type delayed struct {
	due     time.Time
	h       header
	payload func(writer) error
}

// errPeerGone: the process died or left, or the runtime closed.
var errPeerGone = errors.New("dc: the process is gone")

// errStopped: a send given up because what it was for is over (a steal request after
// the end of the run).
var errStopped = errors.New("dc: no longer needed")

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
		p.ctx, p.cancel = context.WithCancel(rt.life)
		rt.peers[id.ID] = p
	}
	return p
}

// send writes one message to id: h, then what payload writes (nil: nothing). It connects
// first when needed; the whole send is bounded by the send timeout. A message to another
// site, when the runtime emulates a wide area, leaves after the emulated latency instead
// (and its failure is only logged).
func (rt *Runtime) send(id ipl.IbisIdentifier, h *header, payload func(writer) error) error {
	return rt.sendWithin(id, h, payload, rt.o.sendTimeout)
}

// sendSteal sends a steal request: bounded by the steal timeout, and cut short when the
// run ends (the answer would come too late to matter).
func (rt *Runtime) sendSteal(id ipl.IbisIdentifier, h *header) error {
	return rt.sendUntil(id, h, nil, rt.o.stealTimeout, rt.endCtx)
}

// sendWithin is send bounded by within instead of the send timeout: a steal request to a
// process that has no dc port (yet) is not worth the wait of a result.
func (rt *Runtime) sendWithin(id ipl.IbisIdentifier, h *header, payload func(writer) error, within time.Duration) error {
	return rt.sendUntil(id, h, payload, within, nil)
}

// sendUntil is sendWithin, also cut short when stop ends (nil: never).
func (rt *Runtime) sendUntil(id ipl.IbisIdentifier, h *header, payload func(writer) error, within time.Duration, stop context.Context) error {
	p := rt.peerFor(id)
	if p == nil {
		return fmt.Errorf("sending to %s: %w", id, errPeerGone)
	}
	if d := rt.o.wanDelay; d > 0 && id.Tag != rt.site && rt.startLate(p) {
		select {
		case p.late <- delayed{due: time.Now().Add(d), h: *h, payload: payload}:
			return nil
		case <-rt.life.Done():
			return fmt.Errorf("sending to %s: %w", id, errPeerGone)
		}
	}
	return rt.sendNow(p, h, payload, within, stop)
}

// startLate makes sure p's delayed messages have their goroutine; false once the runtime
// is closing (messages then go at once).
func (rt *Runtime) startLate(p *peer) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	select {
	case <-rt.flush:
		return false
	default:
	}
	if p.late == nil {
		p.late = make(chan delayed, 1024)
		rt.lateWG.Add(1)
		go func() {
			defer rt.lateWG.Done()
			rt.sendLate(p)
		}()
	}
	return true
}

// sendLate sends a peer's delayed messages in order, each when it is due; when the
// runtime closes it sends what is left at once (the statistics for the root, say).
func (rt *Runtime) sendLate(p *peer) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		var m delayed
		select {
		case <-rt.flush:
			for {
				select {
				case m := <-p.late:
					_ = rt.sendNow(p, &m.h, m.payload, rt.o.sendTimeout, nil)
					rt.sent()
				default:
					return
				}
			}
		case m = <-p.late:
		}
		timer.Reset(time.Until(m.due))
		select {
		case <-rt.flush:
		case <-timer.C:
		}
		if err := rt.sendNow(p, &m.h, m.payload, rt.o.sendTimeout, nil); err != nil {
			rt.log.Debug("a delayed message was not sent", zap.Stringer("to", p.id), zap.Error(err))
		}
		rt.sent()
	}
}

// sent orders a delayed send before whatever the dispatcher does next under the
// runtime's lock. The answer to a message (the result of a job whose argument it
// carried) reaches the dispatcher only after the message left, but through the network,
// which the race detector cannot see; without this it would take the reuse of the job's
// task after that answer for a race with the encoding of its argument.
func (rt *Runtime) sent() {
	rt.mu.Lock()
	//lint:ignore SA2001 an empty critical section, for its ordering alone
	rt.mu.Unlock()
}

// sendNow is send without the emulated delay, bounded by within and cut short when the
// peer is closed or stop ends (nil: never).
func (rt *Runtime) sendNow(p *peer, h *header, payload func(writer) error, within time.Duration, stop context.Context) (err error) {
	id := p.id
	defer func() {
		if err != nil && p.ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", errPeerGone, err) // lost, or the runtime closed
		}
		if err != nil {
			rt.unreachable(id, err)
		}
	}()
	ctx, cancel := context.WithTimeout(p.ctx, within)
	defer cancel()
	if stop != nil {
		if stop.Err() != nil {
			return fmt.Errorf("sending to %s: %w", id, errStopped)
		}
		defer context.AfterFunc(stop, cancel)()
	}
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
			if errors.Is(err, ipl.ErrDenied) {
				// dc's ports take every member: a denial means that the pool counts
				// this process dead.
				rt.cutOff(fmt.Errorf("%s refused it: %w", id, err))
			}
			return errors.Join(fmt.Errorf("dc: connecting to %s: %w", id, err), sp.Close())
		}
		p.sp = sp
		st := sp.Stats()
		rt.conns.Add(st.ConnectionsMade)
		rt.connsReversed.Add(st.ConnectionsReversed)
		rt.connsRelayed.Add(st.ConnectionsRelayed)
	}
	var m ipl.WriteMessage
	m, err = p.sp.NewMessage(ctx)
	if err != nil {
		return fmt.Errorf("dc: a message to %s: %w", id, err)
	}
	err = h.write(m)
	if err == nil && payload != nil {
		err = payload(m)
	}
	if err != nil {
		// A header without its payload would fail the receiver's read: the message
		// goes nowhere (Cancel), and only this send fails.
		err = errors.Join(err, m.Cancel())
	} else {
		_, err = m.Finish()
	}
	if err != nil {
		return fmt.Errorf("dc: sending to %s: %w", id, err)
	}
	if id.Tag != rt.site {
		rt.wideArea.Add(1)
	}
	return nil
}

// close closes the peer's send port; sends after it fail, and a send in progress is cut
// short first (it holds mu).
func (p *peer) close() error {
	p.cancel()
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
