package core

import (
	"errors"
	"fmt"
	"io"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/serialization"
)

// Delivery is how one connection's messages reach its receive port: the connection's
// side of the port's message source (source.go). The port starts each message on the
// token holder's goroutine through the connection's serialization reader and hands the
// connection back through Finished once the message is done. core has two (a reader
// goroutine's, deliver_reader.go; direct receipt's, deliver_direct.go); a transport
// with a Source of its own implements it for its connections (Acceptance.Deliver).
type Delivery interface {
	// Finished moves the connection past the message the port took from it, which the
	// program (or Close) finished; fatal is set when the stream broke or the message
	// could not start, and the connection must go. The caller holds the port's token.
	Finished(fatal error)
	// Waiting answers the stall watchdog (stall.go): whether the connection waits for
	// bytes that do not come, and whether it waits inside a message.
	Waiting() (waiting, mid bool)
	// Holds reports whether messages the port can deliver wait in the connection's
	// buffers: the connection of a dead sender is cut only once they are taken.
	Holds() bool
	// Cut tells the delivery that the watchdog gave up on the connection for why,
	// before the connection is closed.
	Cut(why error)
}

// DirectStream is the byte stream of an incoming connection that a Receive may read on
// its own goroutine (direct receipt, deliver_direct.go). A transport that declares
// Capabilities.DirectReads passes one to Acceptance.ServeDirect.
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

// errWrongHandOver is a transport handing a connection over in a way its port's
// source does not take (a bug in the transport).
var errWrongHandOver = errors.New("core: connection handed over in a way its receive port does not read")

// Serve reads messages from r (the connection's buffered byte stream) on the calling
// goroutine and delivers them to the receive port until the connection ends or the
// port closes; then it closes the connection. The transport calls it on a goroutine of
// its own (for blocking transports: the connection's goroutine).
func (a *Acceptance) Serve(r io.Reader) {
	s, ok := a.port.src.(*streamSource)
	if !ok {
		if ds, ok := r.(DirectStream); ok {
			a.ServeDirect(ds)
			return
		}
		a.wrongHandOver("Serve")
		return
	}
	d := &readerDelivery{ic: a.ic, src: s, done: make(chan error, 1)}
	a.ic.setDelivery(d)
	d.serve(r)
}

// ServeDirect is Serve for a stream that Receive can read itself: on a port that does
// (one-to-one, explicit receipt only), the calling goroutine only waits for the
// connection's end while each Receive reads the next message from s; on any other port
// it is Serve(s).
func (a *Acceptance) ServeDirect(s DirectStream) {
	src, ok := a.port.src.(*directSource)
	if !ok {
		if _, stream := a.port.src.(*streamSource); !stream {
			a.wrongHandOver("ServeDirect")
			return
		}
		a.Serve(s)
		return
	}
	d := &directDelivery{ic: a.ic, src: src, stream: s, ended: make(chan struct{})}
	a.ic.setDelivery(d)
	d.serve(s)
}

// wrongHandOver drops a connection handed over with how, which its port's source does
// not read.
func (a *Acceptance) wrongHandOver(how string) {
	err := fmt.Errorf("%w: %s on a port whose messages come from %T", errWrongHandOver, how, a.port.src)
	a.port.log.DPanic("transport hands a connection over wrongly", zap.Error(err))
	a.Abort(err)
}

// setDelivery fixes the connection's delivery; the stall watchdog may look at it
// from another goroutine at any time.
func (ic *inConn) setDelivery(d Delivery) { ic.via.Store(&d) }

// delivery returns the connection's delivery, nil before the transport handed the
// connection over.
func (ic *inConn) delivery() Delivery {
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

// watchWaiting is Waiting for the deliveries that read a stream through the guard.
func (ic *inConn) watchWaiting() (waiting, mid bool) {
	switch ic.watch.state.Load() {
	case waitStart:
		return true, false
	case waitMid:
		return true, true
	}
	return false, false
}
