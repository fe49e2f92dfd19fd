package core

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibisgo/ibis/internal/wake"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/serialization"
)

// directDelivery is the delivery of a connection that Receive reads itself
// (Acceptance.ServeDirect): on a one-to-one port with explicit receipt only, Receive
// reads the connection on the caller's goroutine, as the blocking flavour of NioIbis
// does, instead of taking a message from a reader goroutine. That saves a goroutine
// hand-off (and on a busy machine a wake-up of another thread) per message, which is
// most of the latency Ibis adds to a raw socket (docs/PERFORMANCE.md). The transport's
// stream must be peekable and take read deadlines (DirectStream): a cancelled context
// sets a read deadline, and the next header is first peeked, so a cancelled Receive
// consumes nothing and leaves the stream intact. The transport's goroutine parks in
// serve until the connection ends.
//
// The cost: nobody reads the connection while nobody receives. A sender that leaves
// cleanly is noticed at the next Receive (its lost-connection upcall comes then). A
// sender whose instance the registry reports dead is looked at then (checkDied; if the
// port is busy, as soon as it is let go, and again after each message) and retired once
// its end is next, so messages it finished before dying are still received. A new
// sender's connection request probes the old connection for its goodbye or its end
// (probeDirect), so a port whose sender left can be taken by the next one at once;
// while a Receive is reading the old sender, the request waits up to probeBusyWait for
// that Receive to meet the goodbye, and otherwise is told the port is taken.
type directDelivery struct {
	ic     *inConn
	stream DirectStream
	ended  chan struct{} // closed once the connection is retired
	once   sync.Once
	died   atomic.Pointer[error] // the registry reported the sender's instance dead
}

var _ delivery = (*directDelivery)(nil)

// errConnEnded tells Receive that the direct connection ended and it should wait for
// another sender.
var errConnEnded = errors.New("core: direct connection ended")

// directCapable reports whether the port's type allows direct receipt.
func (p *ReceivePort) directCapable() bool {
	return !p.pt.ManyToOne() && p.pt.Has(ipl.ReceiveExplicit) &&
		!p.pt.HasAny(ipl.ReceivePoll, ipl.ReceiveAutoUpcalls, ipl.ReceivePollUpcalls)
}

// serve makes the connection the port's direct connection and parks the transport's
// goroutine until it ends (or the port closes); then it closes the connection.
func (d *directDelivery) serve(s DirectStream) {
	ic, p := d.ic, d.ic.port
	defer ic.c.Close()
	ic.readFrom(s)
	p.mu.Lock()
	p.directConn = d
	p.mu.Unlock()
	if cause := p.in.deadCause(ic.from.Ibis); cause != nil {
		// Reported dead between the handshake and now: directPeerDied missed it.
		d.died.Store(&cause)
		p.checkDied()
	}
	wake.Poke(p.connArrived)
	select {
	case <-d.ended:
	case <-p.closed:
		p.connEnded(ic, nil)
	}
}

// retire takes the direct connection out of the port after a read error or a clean
// close.
func (d *directDelivery) retire(err error) {
	d.once.Do(func() {
		p := d.ic.port
		p.mu.Lock()
		if p.directConn == d {
			p.directConn = nil
		}
		p.mu.Unlock()
		p.connEnded(d.ic, err)
		close(d.ended)
	})
}

// finished retires the connection when m broke its stream, and otherwise, when its
// sender was reported dead, looks whether the sender's end is next (the caller holds
// the token, as probe needs).
func (d *directDelivery) finished(m *readMessage) {
	if m.fatal != nil {
		d.retire(m.fatal)
		_ = d.ic.c.Close()
		return
	}
	if cause := d.died.Load(); cause != nil {
		d.probe(*cause)
	}
}

// waiting reports the wait of the Receive reading the connection, if any.
func (d *directDelivery) waiting() (waiting, mid bool) { return d.ic.watchWaiting() }

// cut needs nothing more: closing the connection ends the Receive's read.
func (d *directDelivery) cut(error) {}

// receiveDirect is Receive for direct-capable ports; the caller holds the token.
func (p *ReceivePort) receiveDirect(ctx context.Context) (*readMessage, error) {
	for {
		p.mu.Lock()
		d := p.directConn
		p.mu.Unlock()
		if d == nil {
			if m := p.takePush(); m != nil {
				return m, nil
			}
			select {
			case <-p.connArrived:
				continue
			case m := <-p.ready:
				// A connection the transport cannot read directly delivers the usual way.
				return m, nil
			case <-p.push.pending.Wake():
				// So does a push-mode connection (an event loop reads it).
				if m := p.takePush(); m != nil {
					return m, nil
				}
				continue
			case <-ctx.Done():
				return nil, ctxError(ctx, p.what("receive"))
			case <-p.closed:
				return nil, fmt.Errorf("%s: %w", p.what("receive"), ipl.ErrClosed)
			}
		}
		m, err := d.next(ctx)
		if errors.Is(err, errConnEnded) {
			continue
		}
		return m, err
	}
}

// next starts the connection's next message on the caller's goroutine, waiting for
// it until ctx ends; errConnEnded when the connection ended instead.
func (d *directDelivery) next(ctx context.Context) (*readMessage, error) {
	ic, p := d.ic, d.ic.port
	var err error
	// Waiting for the next header is an idle connection's wait: only a sender declared
	// dead is cut there (stall.go).
	ic.watch.state.Store(waitStart)
	defer ic.watch.state.Store(waitNone)
	if ctx.Done() == nil {
		_, err = d.stream.Peek(serialization.HeaderSize)
	} else {
		fired := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			_ = d.stream.SetReadDeadline(time.Now())
			close(fired)
		})
		_, err = d.stream.Peek(serialization.HeaderSize)
		if !stop() {
			<-fired
			_ = d.stream.SetReadDeadline(time.Time{})
			if ctx.Err() != nil && (err == nil || errors.Is(err, os.ErrDeadlineExceeded)) {
				// Peek consumed nothing: the stream is intact for the next Receive.
				return nil, ctxError(ctx, p.what("receive"))
			}
		}
	}
	if err == nil {
		ic.guard.boundary()
		err = ic.rd.Next()
	}
	if cut := ic.watch.cutErr(); err != nil && cut != nil {
		err = cut
	}
	if err != nil {
		if p.isClosed() {
			return nil, fmt.Errorf("%s: %w", p.what("receive"), ipl.ErrClosed)
		}
		d.retire(err)
		return nil, errConnEnded
	}
	m := &readMessage{port: p, ic: ic, via: d, seq: -1}
	if p.numbered {
		if m.seq, err = ic.rd.ReadInt64(); err != nil {
			d.retire(err)
			return nil, errConnEnded
		}
	}
	return m, nil
}

// probeWait bounds how long a probe waits for bytes that are on their way, and
// probeBusyWait how long a new sender's request waits for a Receive in progress to
// retire the old sender. Neither decides wrongly when it runs out: the old connection
// is then taken to be alive, and the new sender is told the port is taken.
const (
	probeWait     = time.Millisecond
	probeBusyWait = 20 * time.Millisecond
	// diedProbeWait bounds how long a probe of a sender reported dead waits for the
	// connection's end to arrive (the registry may hear of a death before this
	// connection's end has crossed the network). It holds the port meanwhile, which
	// costs nothing: the port's only sender is the dead one.
	diedProbeWait = 250 * time.Millisecond
)

// probeDirect answers, for a new sender, whether the port's direct connection has
// ended while nobody was receiving (a direct connection is only read by Receive). It
// returns false when it cannot tell because a Receive is in progress (or a message is
// live): that Receive sees the end itself, and accept waits a little for it.
func (p *ReceivePort) probeDirect() (decided bool) {
	if !p.token.tryTake() {
		return false
	}
	defer p.token.release()
	p.mu.Lock()
	d := p.directConn
	p.mu.Unlock()
	if d == nil {
		return true
	}
	var died error
	if cause := d.died.Load(); cause != nil {
		died = *cause
	}
	d.probe(died)
	return true
}

// probe looks at what the connection holds, without consuming a message, and retires
// it when it has ended: the sender's goodbye, the end of the stream or a read error is
// next. A message waiting, or nothing within probeWait (diedProbeWait for a dead
// sender), leaves it alone: the sender is alive, or (dead) its end has not arrived
// yet, or what it sent before it died is still to be received. died, when the
// registry reported the sender's instance dead, is the cause the retirement reports.
// The caller holds the port's token.
func (d *directDelivery) probe(died error) {
	wait := probeWait
	if died != nil {
		wait = diedProbeWait
	}
	_ = d.stream.SetReadDeadline(time.Now().Add(wait))
	hdr, err := d.stream.Peek(serialization.HeaderSize)
	_ = d.stream.SetReadDeadline(time.Time{})
	switch {
	case err == nil && hdr[2]&serialization.FlagClose != 0:
		d.retire(d.ic.rd.Next()) // consumes the Close packet: a clean end
	case err == nil, errors.Is(err, os.ErrDeadlineExceeded):
	case died != nil:
		d.retire(died)
	default:
		d.retire(err)
	}
}

// directPeerDied marks the port's direct connection from the instance id, which the
// registry reported dead, and looks at it at once if the port is idle (checkDied). A
// direct connection is read only by Receive, so without this an idle port would list a
// dead sender until the next Receive or the next sender's request. When the port is
// busy, whoever holds it looks when it lets go (a finished message, a Receive that
// ends without one), and a Receive in progress meets the end itself.
func (p *ReceivePort) directPeerDied(id ipl.IbisIdentifier, cause error) {
	p.mu.Lock()
	d := p.directConn
	p.mu.Unlock()
	if d == nil || !sameIbis(d.ic.from.Ibis, id) {
		return
	}
	d.died.Store(&cause)
	p.checkDied()
}

// checkDied probes the direct connection of a sender reported dead, if the port is idle
// (it takes the token without waiting). Messages the sender finished before it died are
// still delivered: the connection is retired only once its end is next, so each
// finished message looks again.
func (p *ReceivePort) checkDied() {
	if !p.token.tryTake() {
		return
	}
	defer p.token.release()
	p.mu.Lock()
	d := p.directConn
	p.mu.Unlock()
	if d == nil {
		return
	}
	if cause := d.died.Load(); cause != nil {
		d.probe(*cause)
	}
}

// awaitDirectEnd waits up to wait for the port's direct connection to end.
func (p *ReceivePort) awaitDirectEnd(wait time.Duration) {
	p.mu.Lock()
	d := p.directConn
	p.mu.Unlock()
	if d == nil {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-d.ended:
	case <-t.C:
	case <-p.closed:
	}
}
