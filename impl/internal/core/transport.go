package core

import (
	"context"
	"io"
	"net"
)

// Transport moves bytes between Ibis instances. It is the only part an implementation
// has to write.
type Transport interface {
	// Start begins accepting connections and returns the address peers dial. For each
	// incoming connection the transport reads a handshake request (ReadRequest), asks
	// acc.Accept, writes the reply (WriteReply) and, when accepted, hands the connection
	// to the returned Acceptance's Serve, which reads messages until the connection ends.
	Start(acc Acceptor) (addr string, err error)
	// Dial connects to the instance at addr, sends req and returns the peer's reply. On
	// ReplyAccepted it also returns the connection; lost is called (once) when the
	// transport notices the connection broke or the peer closed it.
	Dial(ctx context.Context, addr string, req *Request, lost func(error)) (OutConn, *Reply, error)
	// Close stops accepting, closes every connection and waits for the transport's
	// goroutines to end.
	Close() error
}

// Acceptor decides on incoming connections; core.Instance is the one implementation.
type Acceptor interface {
	// Accept checks a handshake request against the local ports and their rules.
	Accept(req *Request, conn InConn) (*Reply, *Acceptance)
}

// OutConn is the sending side of one connection from a send port to a receive port.
type OutConn interface {
	// WritePacket puts whole packets on the connection; it may consume bufs.
	WritePacket(bufs net.Buffers) error
	// Close ends the connection; the caller has already written a Close packet when the
	// ending is clean.
	Close() error
}

// InConn is the receiving side of one connection, as the receive port sees it.
type InConn interface {
	// Close ends the connection, unblocking any read on it.
	Close() error
}

// Acceptance is an accepted incoming connection, bound to its receive port.
type Acceptance struct {
	port *ReceivePort
	conn InConn
	ic   *inConn
}

// Serve reads messages from r (the connection's buffered byte stream) and delivers them
// to the receive port until the connection ends or the port closes; then it closes the
// connection. The transport calls it on a goroutine of its own (for blocking
// transports: the connection's goroutine).
func (a *Acceptance) Serve(r io.Reader) {
	a.port.serveConn(a.ic, r)
}

// Abort drops an accepted connection whose reply could not be delivered.
func (a *Acceptance) Abort(err error) {
	a.port.connEnded(a.ic, err)
	_ = a.conn.Close()
}
