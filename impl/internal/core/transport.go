package core

import (
	"context"
	"net"

	"github.com/ibisgo/ibis/ipl"
)

// Transport moves bytes between Ibis instances. It is the only part an implementation
// has to write.
type Transport interface {
	// Start begins accepting connections and returns the address peers dial. For each
	// incoming connection the transport reads a handshake request (ReadRequest), asks
	// acc.Accept, writes the reply (WriteReply) and, when accepted, hands the connection
	// over with the returned Acceptance's Serve, ServeDirect or Deliver (delivery.go).
	Start(acc Acceptor) (addr string, err error)
	// Capabilities says what the transport can do; core asks it once, when the
	// instance opens.
	Capabilities() Capabilities
	// Dial connects to the instance at addr, sends req and returns the peer's reply. On
	// ReplyAccepted it also returns the connection; lost is called when the transport
	// notices the connection broke or the peer closed it. An end read from the
	// receiver's side (its cut notice, close or reset) is marked ErrReceiverEnded and
	// reported even after a failed write was (cutnotice.go); after the port's own Close
	// nothing is.
	Dial(ctx context.Context, addr string, req *Request, lost func(error)) (OutConn, *Reply, error)
	// Close stops accepting, closes every connection and waits for the transport's
	// goroutines to end.
	Close() error
}

// Capabilities are what a transport can do beyond moving bytes. The zero value is a
// transport whose connections core reads as plain streams (Acceptance.Serve) and that
// refuses a pool with TLS.
type Capabilities struct {
	// TLS: the transport serves a pool that uses TLS: its data connections go
	// through Acceptor.Authenticate and Introduce, or it has no sockets to secure.
	TLS bool
	// DirectReads: it hands a connection over with Acceptance.ServeDirect, so that a
	// one-to-one port with explicit receipt only is read by Receive itself
	// (deliver_direct.go).
	DirectReads bool
	// Source, when not nil, returns the transport's own message source for a new
	// receive port of type pt (pushed.go), or nil when that port's connections are
	// handed over as streams. Ports with a source take their connections through
	// Acceptance.Deliver.
	Source func(pt ipl.PortType) Source
}

// Acceptor decides on incoming connections; core.Instance is the one implementation.
type Acceptor interface {
	// Accept checks a handshake request against the local ports and their rules.
	Accept(req *Request, conn InConn) (*Reply, *Acceptance)
	// Authenticate opens a new incoming connection before its handshake request is
	// read: TLS, when the pool uses it, then the accepting side of the pool check
	// (internal/poolauth). It returns the connection to read and write from then on
	// (the TLS one, or conn itself); on an error the transport closes conn without
	// reading more (the refusal is logged).
	Authenticate(conn net.Conn) (net.Conn, error)
	// Introduce is the dialling side of Authenticate, before the handshake request is
	// written.
	Introduce(conn net.Conn) (net.Conn, error)
	// Connect opens the socket of an outgoing connection, given Dial's ctx and addr:
	// a plain dial, or the route to the peer that core chose for this attempt
	// (route.go). Transports that dial sockets dial through it.
	Connect(ctx context.Context, addr string) (net.Conn, error)
	// Refused logs, at a bounded rate, a connection the transport dropped before its
	// request could be read (instead of logging it itself).
	Refused(remote net.Addr, why error)
}

// Injector is implemented by transports that can serve a socket they did not accept:
// one this member dialled at a peer's request (reverse set-up) or opened to a hub that
// relays a peer's connection (route.go). Inject serves it exactly as an accepted one,
// from Authenticate on, and reports false (the caller closes it) once the transport is
// closing; route names how it came, for the log.
type Injector interface {
	Inject(c net.Conn, route string) bool
}

// OutConn is the sending side of one connection from a send port to a receive port.
type OutConn interface {
	// WritePacket puts whole packets on the connection; it may consume bufs.
	WritePacket(bufs net.Buffers) error
	// Close ends the connection at once; the caller has already written a Close packet
	// (and drained it, for a Drainer) when the ending is clean.
	Close() error
}

// InConn is the receiving side of one connection, as the receive port sees it.
type InConn interface {
	// Close ends the connection, unblocking any read on it.
	Close() error
}

// Acceptance is an accepted incoming connection, bound to its receive port. The
// transport hands the connection over with exactly one of Serve, ServeDirect or Deliver,
// as its port's message source reads them (source.go); or drops it with Abort.
type Acceptance struct {
	port *ReceivePort
	conn InConn
	ic   *inConn
}

// Abort drops an accepted connection whose reply could not be delivered.
func (a *Acceptance) Abort(err error) { a.Retire(err) }

// PortType is the type of the receive port the connection was accepted into; a
// transport with flavours picks the connection's handling from it.
func (a *Acceptance) PortType() ipl.PortType { return a.port.pt }

// PortChecker is implemented by transports that cannot serve every port type in every
// configuration (a flavour that reads one connection cannot serve a many-to-one port).
// The instance asks it before it creates a port, so the program gets the error at once.
type PortChecker interface {
	CheckSendPort(pt ipl.PortType) error
	CheckReceivePort(pt ipl.PortType) error
}

// Sharer and Drainer are optional capabilities of a connection, asked by a type
// assertion where a send uses them.

// Sharer is implemented by the connections of transports that queue packets instead of
// writing them at once. A multicast then prepares each packet once (Share) and hands
// the same prepared packet to every connection (WriteShared), instead of each
// connection copying it. A message to one connection goes through its WritePacket, in
// pieces of at most 1 MiB (so that what it copies ahead of the socket stays bounded),
// which may write the caller's bytes itself and copy only the rest.
type Sharer interface {
	// Share copies bufs into a packet that WriteShared of any connection of the same
	// transport accepts. The caller calls Release once it has handed it out.
	Share(bufs net.Buffers) SharedPacket
	// WriteShared queues a shared packet on this connection.
	WriteShared(p SharedPacket) error
}

// SharedPacket is a packet prepared once for several connections.
type SharedPacket interface {
	// Release drops the preparer's hold on the packet; it goes back to its pool after
	// the last connection has written it.
	Release()
}

// Drainer is implemented by connections that write queued packets in the background:
// Drain waits until everything queued so far is written (or the connection broke).
// Finishing a message drains its connections, so a finished message is on the wire.
type Drainer interface {
	Drain() error
}
