package core

import (
	"context"
	"io"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/wake"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/serialization"
)

// Source is a transport's own message source for one receive port: the transport
// reads the port's connections itself (an event loop pushing into per-connection
// buffers, impl/nio) and queues each connection whose next message can be started
// without waiting. The port's token holder takes them in turn (Take) and starts the
// message on its own goroutine. A transport offers one through Capabilities.Source and
// hands each accepted connection of such a port over with Acceptance.Deliver.
type Source interface {
	// Take returns the oldest connection whose next message can start now and gives it
	// to the caller until it calls the connection's Delivery.Finished; nil when none
	// is queued. It does not wait.
	Take() *Acceptance
	// Wake fires after a connection was queued.
	Wake() <-chan struct{}
}

// pushedSource is the port's side of a transport's Source.
type pushedSource struct {
	port *ReceivePort
	src  Source
	// kick passes a wake-up on between the dispatchers of a port with concurrent
	// upcalls (nil otherwise): Wake holds one wake-up however many connections were
	// queued, so a waiter that took one pokes kick to make another look again.
	kick chan struct{}
}

func (s *pushedSource) next(ctx context.Context, stop <-chan struct{}, wait bool) (*readMessage, waitResult) {
	for {
		if m := s.take(); m != nil {
			if s.kick != nil {
				wake.Poke(s.kick)
			}
			return m, gotMessage
		}
		if !wait {
			return nil, nothingYet
		}
		select {
		case <-s.src.Wake():
		case <-s.kick:
		case <-ctx.Done():
			return nil, waitDone
		case <-stop:
			return nil, waitDone
		case <-s.port.closed:
			return nil, waitClosed
		}
	}
}

// take starts the next message of the oldest queued connection, handing back those
// whose message cannot start (they retire); nil when none is queued.
func (s *pushedSource) take() *readMessage {
	for {
		a := s.src.Take()
		if a == nil {
			return nil
		}
		via := a.ic.delivery()
		m, err := s.port.startMessage(a.ic, via)
		if err == nil {
			return m
		}
		via.Finished(err)
	}
}

func (*pushedSource) admit()                             {}
func (*pushedSource) peerDied(ipl.IbisIdentifier, error) {}
func (*pushedSource) idle()                              {}

// The hooks below are what a transport's own Source uses of an accepted connection.

// Source returns the port's Source when the transport made it one
// (Capabilities.Source), else nil.
func (a *Acceptance) Source() Source {
	if s, ok := a.port.src.(*pushedSource); ok {
		return s.src
	}
	return nil
}

// Deliver hands a connection of a port with the transport's own Source over: the port
// reads its messages from r, which must not wait longer than the connection lives
// (the port's Close ends the wait: Closed), and d is told what becomes of them.
func (a *Acceptance) Deliver(d Delivery, r io.Reader) {
	if a.Source() == nil {
		a.wrongHandOver("Deliver")
		return
	}
	a.ic.rd = serialization.NewReader(a.port.kind, r, serialization.WithReaderMaxMessageSize(a.MaxMessageSize()))
	a.ic.setDelivery(d)
}

// MaxMessageSize is the largest message the port accepts, for a scan that must stop
// where the port's reader stops.
func (a *Acceptance) MaxMessageSize() int64 { return a.port.in.cfg.MaxMessageSize }

// Progress tells the stall watchdog that bytes of the connection arrived.
func (a *Acceptance) Progress() { a.ic.watch.progress.Add(1) }

// CutErr returns why the stall watchdog cut the connection, or nil: the reason its
// reader gets instead of the socket's end.
func (a *Acceptance) CutErr() error { return a.ic.watch.cutErr() }

// Retire drops the connection from the port and closes it: err is nil or wraps
// serialization.ErrClosedByPeer for a clean end, anything else is a lost connection.
func (a *Acceptance) Retire(err error) {
	a.port.connEnded(a.ic, err)
	_ = a.conn.Close()
}

// Closed is closed when the port closes.
func (a *Acceptance) Closed() <-chan struct{} { return a.port.closed }

// Port names the receive port, for errors.
func (a *Acceptance) Port() ipl.ReceivePortIdentifier { return a.port.id }

// From names the sender.
func (a *Acceptance) From() ipl.SendPortIdentifier { return a.ic.from }

// Logger is the port's logger.
func (a *Acceptance) Logger() *zap.Logger { return a.port.log }
