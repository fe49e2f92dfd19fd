package core

import (
	"context"
	"sync/atomic"

	"github.com/ibisgo/ibis/ipl"
)

// messageSource is where whoever holds a receive port's token (a Receive, a Poll, the
// upcall dispatcher) gets the next message. A port has exactly one, chosen when it is
// made (newSource) from its type and what the transport declares (Capabilities):
//
//   - streamSource (deliver_reader.go): a goroutine of the transport reads each
//     connection (Acceptance.Serve) and offers its next message on a channel;
//   - directSource (deliver_direct.go): on a one-to-one port with explicit receipt
//     only, Receive reads the connection itself (Acceptance.ServeDirect);
//   - pushedSource (pushed.go): the transport's own Source (impl/nio's event-loop
//     inboxes) queues the connections whose next message can start.
//
// Whichever it is, a message is started on the token holder's goroutine, read through
// the connection's serialization reader and handed back through the connection's
// Delivery; a connection's next message starts only once its last one is finished,
// which keeps every connection FIFO.
type messageSource interface {
	// next returns the next message. With wait set it waits until one comes, ctx ends
	// (waitDone), stop closes (waitDone) or the port closes (waitClosed); without, it
	// returns nothingYet when none is there.
	next(ctx context.Context, stop <-chan struct{}, wait bool) (*readMessage, waitResult)
	// admit is called before a new sender's connection is decided on.
	admit()
	// peerDied tells the source that the registry reported the instance id dead.
	peerDied(id ipl.IbisIdentifier, cause error)
	// idle is called after the token holder let the port go without a message.
	idle()
}

// newSource chooses the port's message source.
func newSource(p *ReceivePort, caps Capabilities) messageSource {
	if caps.Source != nil {
		if s := caps.Source(p.pt); s != nil {
			ps := &pushedSource{port: p, src: s}
			if p.slots > 1 {
				ps.kick = make(chan struct{}, 1)
			}
			return ps
		}
	}
	if caps.DirectReads && directCapable(p.pt) {
		return &directSource{port: p, arrived: make(chan struct{}, 1)}
	}
	return &streamSource{port: p, ready: make(chan *readMessage)}
}

// streamSource is the source of a port whose connections are read by goroutines of
// the transport (readerDelivery): each offers its connection's next message on ready.
type streamSource struct {
	port  *ReceivePort
	ready chan *readMessage
	// aheadHeld counts the bytes of the read-ahead buffers of the port's reader
	// goroutines (readahead.go), bounded by PortHighWater.
	aheadHeld atomic.Int64
}

func (s *streamSource) next(ctx context.Context, stop <-chan struct{}, wait bool) (*readMessage, waitResult) {
	if !wait {
		select {
		case m := <-s.ready:
			return m, gotMessage
		default:
			return nil, nothingYet
		}
	}
	select {
	case m := <-s.ready:
		return m, gotMessage
	case <-ctx.Done():
		return nil, waitDone
	case <-stop:
		return nil, waitDone
	case <-s.port.closed:
		return nil, waitClosed
	}
}

func (*streamSource) admit()                             {}
func (*streamSource) peerDied(ipl.IbisIdentifier, error) {}
func (*streamSource) idle()                              {}
