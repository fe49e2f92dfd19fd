package core

import (
	"io"
	"time"

	"github.com/ibisgo/ibis/serialization"
)

// How a connection's messages reach its receive port. Every accepted connection has
// one delivery, fixed when the transport hands the connection over, and a message
// follows the same four steps whichever it is: the connection's serialization reader
// (inConn.rd) is positioned at a message's first packet (startMessage); the holder of
// the port's token takes the message (ReceivePort.next, or receiveDirect); the program
// reads it; Finish hands it back to the delivery, which moves the connection on.
//
//   - readerDelivery (deliver_reader.go), from Acceptance.Serve: the transport's
//     goroutine reads the connection, starts each message and offers it on the port's
//     ready channel, then waits until it is finished. Blocking transports, every port
//     type.
//   - directDelivery (deliver_direct.go), from Acceptance.ServeDirect on a port that is
//     one-to-one with explicit receipt only: Receive reads the connection itself on the
//     caller's goroutine; the transport's goroutine only waits for the end. No
//     hand-off between goroutines per message.
//   - *Inbox (deliver_inbox.go; inbox.go; the port's queue in pending.go), from
//     Acceptance.Inbox: an event loop pushes the bytes it read; a connection whose
//     next message can start joins the port's FIFO of pending inboxes, and the token
//     holder starts it on its own goroutine. No goroutine per connection.
//
// On a many-to-one port the first two steps wait for a message of up to
// WholeMessageLimit to be whole, so that a sender stopped in the middle of one holds
// up no other sender (readahead.go has the rule).
//
// A transport chooses by what it can offer: a byte stream it reads on a goroutine of its
// own (Serve), a stream it can also peek and cut short with a deadline (ServeDirect,
// which falls back to Serve where the port's type does not allow direct receipt), or
// bytes pushed from an event loop (Inbox).
type delivery interface {
	// finished moves the connection past its message m, which the program (or Close)
	// just finished; m.fatal is set when the stream broke and the connection must go.
	// The caller holds the port's token and releases it afterwards.
	finished(m *readMessage)
	// waiting answers the stall watchdog (stall.go): whether the connection's reader
	// waits for bytes that do not come, and whether it waits inside a message.
	waiting() (waiting, mid bool)
	// cut tells the delivery that the watchdog gave up on the connection for why,
	// before the connection is closed.
	cut(why error)
}

// DirectStream is the byte stream of an incoming connection that a Receive may read on
// its own goroutine (direct receipt, deliver_direct.go). A transport that can offer one
// passes it to Acceptance.ServeDirect; that is the whole of its opting in.
type DirectStream interface {
	io.Reader
	// Peek returns the next n bytes without consuming them. A Receive waits for the
	// next message's header with it, so one cancelled meanwhile has taken nothing
	// from the stream.
	Peek(n int) ([]byte, error)
	// SetReadDeadline makes a waiting Peek or Read return os.ErrDeadlineExceeded at t
	// (the zero time: never), as net.Conn's does; a cancelled Receive uses it.
	SetReadDeadline(t time.Time) error
}

// Serve reads messages from r (the connection's buffered byte stream) on the calling
// goroutine and delivers them to the receive port until the connection ends or the
// port closes; then it closes the connection. The transport calls it on a goroutine of
// its own (for blocking transports: the connection's goroutine).
func (a *Acceptance) Serve(r io.Reader) {
	d := &readerDelivery{ic: a.ic, done: make(chan struct{}, 1)}
	a.ic.setDelivery(d)
	d.serve(r)
}

// ServeDirect is Serve for a stream that Receive can read itself: on a port that allows
// it (one-to-one, explicit receipt only), the calling goroutine only waits for the
// connection's end while each Receive reads the next message from s; on any other port
// it is Serve(s).
func (a *Acceptance) ServeDirect(s DirectStream) {
	if !a.port.direct {
		a.Serve(s)
		return
	}
	d := &directDelivery{ic: a.ic, stream: s, ended: make(chan struct{})}
	a.ic.setDelivery(d)
	d.serve(s)
}

// setDelivery fixes the connection's delivery; the stall watchdog may look at it
// from another goroutine at any time.
func (ic *inConn) setDelivery(d delivery) { ic.via.Store(&d) }

// delivery returns the connection's delivery, nil before the transport handed the
// connection over.
func (ic *inConn) delivery() delivery {
	if d := ic.via.Load(); d != nil {
		return *d
	}
	return nil
}

// readFrom makes r the stream the connection's serialization reader reads, through
// the stall watchdog's guard, for the deliveries that read a stream.
func (ic *inConn) readFrom(r io.Reader) {
	ic.guard = &guardedReader{r: r, w: ic.watch}
	ic.rd = serialization.NewReader(ic.port.kind, ic.guard, serialization.WithReaderMaxMessageSize(ic.port.in.cfg.MaxMessageSize))
}

// watchWaiting is waiting for the deliveries that read a stream through the guard.
func (ic *inConn) watchWaiting() (waiting, mid bool) {
	switch ic.watch.state.Load() {
	case waitStart:
		return true, false
	case waitMid:
		return true, true
	}
	return false, false
}
