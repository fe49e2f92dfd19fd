package core

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibisgo/ibis/internal/wake"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/serialization"
)

// directSource is the source of a one-to-one port with explicit receipt only, over a
// transport that declares DirectReads: Receive reads the port's connection on the
// caller's goroutine (Acceptance.ServeDirect) instead of taking a message from a reader
// goroutine, which saves a goroutine hand-off per message. The stream must be peekable
// and take read deadlines (DirectStream): a cancelled Receive sets a read deadline, and
// the next header is first peeked, so a cancelled Receive consumes nothing.
//
// Nobody reads the connection while nobody receives. A sender that leaves cleanly is
// noticed at the next Receive. A sender whose instance the registry reports dead is
// looked at then (checkDied, also whenever the port is let go) and retired once its
// end is next, so messages it finished before dying are still received. A new sender's
// connection request probes the old connection for its goodbye or its end (admit).
//
// conn is atomic, so a Receive takes no lock to find the connection.
type directSource struct {
	port    *ReceivePort
	conn    atomic.Pointer[directDelivery] // the connection Receive reads, nil between senders
	arrived chan struct{}                  // signals a new connection to a waiting Receive
}

// directDelivery is the delivery of the connection a directSource reads. The
// transport's goroutine parks in serve until the connection ends.
type directDelivery struct {
	ic     *inConn
	src    *directSource
	stream DirectStream
	ended  chan struct{} // closed once the connection is retired
	once   sync.Once
	died   atomic.Pointer[error] // the registry reported the sender's instance dead
	cancel cancelWatch           // ends a cancellable Receive's wait (cancelwatch.go)
	// msgs are the connection's message objects, used in turn by its Receives (only
	// the token holder touches them): no message is allocated, and one used after its
	// Finish (a second Finish, a late read) is still refused until the next but one.
	msgs [2]readMessage
	turn uint8
}

var _ Delivery = (*directDelivery)(nil)

// directCapable reports whether a port of type pt may be read directly.
func directCapable(pt ipl.PortType) bool {
	return !pt.ManyToOne() && pt.Has(ipl.ReceiveExplicit) &&
		!pt.HasAny(ipl.ReceivePoll, ipl.ReceiveAutoUpcalls, ipl.ReceivePollUpcalls)
}

// current returns the connection Receive reads, or nil.
func (s *directSource) current() *directDelivery { return s.conn.Load() }

// serve makes the connection the port's direct connection and parks the transport's
// goroutine until it ends (or the port closes); then it closes the connection.
func (d *directDelivery) serve(s DirectStream) {
	ic, p := d.ic, d.ic.port
	defer ic.c.Close()
	defer d.cancel.close()
	d.cancel.stream = s
	ic.readFrom(s)
	d.src.conn.Store(d)
	if cause := p.in.deadCause(ic.from.Ibis); cause != nil {
		// Reported dead between the handshake and now: peerDied missed it.
		d.died.Store(&cause)
		d.src.checkDied()
	}
	wake.Poke(d.src.arrived)
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
		d.src.conn.CompareAndSwap(d, nil)
		d.ic.port.connEnded(d.ic, err)
		close(d.ended)
	})
}

// Finished retires the connection when the message broke its stream, and otherwise,
// when its sender was reported dead, looks whether the sender's end is next (the
// caller holds the token, as probe needs).
func (d *directDelivery) Finished(fatal error) {
	if fatal != nil {
		d.retire(fatal)
		_ = d.ic.c.Close()
		return
	}
	if cause := d.died.Load(); cause != nil {
		d.probe(*cause)
	}
}

// Waiting reports the wait of the Receive reading the connection, if any.
func (d *directDelivery) Waiting() (waiting, mid bool) { return d.ic.watchWaiting() }

// Holds is false: nothing is read ahead of Receive.
func (d *directDelivery) Holds() bool { return false }

// Cut needs nothing more: closing the connection ends the Receive's read.
func (d *directDelivery) Cut(error) {}

// next is Receive's wait; only Receive takes from a direct port (its type has no poll
// and no upcalls), so wait is always set.
func (s *directSource) next(ctx context.Context, stop <-chan struct{}, wait bool) (*readMessage, waitResult) {
	for {
		d := s.current()
		if d == nil {
			if !wait {
				return nil, nothingYet
			}
			select {
			case <-s.arrived:
				continue
			case <-ctx.Done():
				return nil, waitDone
			case <-stop:
				return nil, waitDone
			case <-s.port.closed:
				return nil, waitClosed
			}
		}
		m, why, ended := d.next(ctx)
		if !ended {
			return m, why
		}
	}
}

// next starts the connection's next message on the caller's goroutine, waiting for
// it until ctx ends; ended when the connection ended instead.
func (d *directDelivery) next(ctx context.Context) (m *readMessage, why waitResult, ended bool) {
	ic, p := d.ic, d.ic.port
	// Waiting for the next header is an idle connection's wait: only a sender declared
	// dead is cut there (stall.go).
	ic.watch.state.Store(waitStart)
	defer ic.watch.state.Store(waitNone)
	cancelled, err := d.cancel.peek(ctx, serialization.HeaderSize)
	if cancelled {
		// Peek consumed nothing: the stream is intact for the next Receive.
		return nil, waitDone, false
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
			return nil, waitClosed, false
		}
		d.retire(err)
		return nil, 0, true
	}
	m = d.message()
	if p.numbered {
		if m.seq, err = ic.rd.ReadInt64(); err != nil {
			d.retire(err)
			return nil, 0, true
		}
	}
	return m, gotMessage, false
}

// message readies the connection's next message object (the two are used in turn);
// the caller holds the port's token, so the one from the message before last is
// finished.
func (d *directDelivery) message() *readMessage {
	m := &d.msgs[d.turn]
	d.turn ^= 1
	*m = readMessage{port: d.ic.port, ic: d.ic, via: d, seq: -1, direct: true}
	return m
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

// admit looks, for a new sender, whether the port's connection has ended while nobody
// was receiving. When a Receive is in progress (or a message is live) it cannot look:
// that Receive may be reading the old sender's goodbye right now, so it waits up to
// probeBusyWait for the connection to end.
func (s *directSource) admit() {
	if !s.port.token.tryTake() {
		s.awaitEnd(probeBusyWait)
		return
	}
	defer s.port.token.release()
	d := s.current()
	if d == nil {
		return
	}
	var died error
	if cause := d.died.Load(); cause != nil {
		died = *cause
	}
	d.probe(died)
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

// peerDied marks the port's connection from the instance id, which the registry
// reported dead, and looks at it at once if the port is idle (checkDied): the
// connection is read only by Receive, so an idle port would otherwise list a dead
// sender until the next Receive or the next sender's request. When the port is busy,
// whoever holds it looks when it lets go (Finished, idle).
func (s *directSource) peerDied(id ipl.IbisIdentifier, cause error) {
	d := s.current()
	if d == nil || !sameIbis(d.ic.from.Ibis, id) {
		return
	}
	d.died.Store(&cause)
	s.checkDied()
}

// idle looks at a dead sender's connection once a Receive let the port go.
func (s *directSource) idle() { s.checkDied() }

// checkDied probes the connection of a sender reported dead, if the port is idle (it
// takes the token without waiting). Messages the sender finished before it died are
// still delivered: the connection is retired only once its end is next, so each
// finished message looks again.
func (s *directSource) checkDied() {
	if !s.port.token.tryTake() {
		return
	}
	defer s.port.token.release()
	d := s.current()
	if d == nil {
		return
	}
	if cause := d.died.Load(); cause != nil {
		d.probe(*cause)
	}
}

// awaitEnd waits up to wait for the port's connection to end.
func (s *directSource) awaitEnd(wait time.Duration) {
	d := s.current()
	if d == nil {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-d.ended:
	case <-t.C:
	case <-s.port.closed:
	}
}
