package ipl

import "context"

// SendPort is the sending end of unidirectional message channels. It connects to one
// receive port, or to several when its type is one-to-many (each message then goes to
// every connected port).
type SendPort interface {
	// Identifier names the port.
	Identifier() SendPortIdentifier
	// Type returns the port's type.
	Type() PortType
	// Connect connects to the receive port named port in the Ibis instance to. While
	// that port does not exist yet or does not accept connections yet, Connect retries
	// until ctx ends (or the configured connect timeout, when ctx has no deadline).
	Connect(ctx context.Context, to IbisIdentifier, port string) error
	// ConnectGlobal connects to the receive port published in the registry under name,
	// waiting for the name to be published.
	ConnectGlobal(ctx context.Context, name string) error
	// Disconnect ends the connection to a receive port cleanly.
	Disconnect(ctx context.Context, from ReceivePortIdentifier) error
	// NewMessage starts a message. It waits while another message of this port lives.
	// With no connection it fails with ErrNotConnected; when the last connection was
	// lost (not disconnected), the error also matches ErrConnectionLost and says why.
	NewMessage(ctx context.Context) (WriteMessage, error)
	// ConnectedTo lists the receive ports this port is connected to.
	ConnectedTo() []ReceivePortIdentifier
	// LostConnections returns the connections lost since the last call
	// (needs connection.downcalls).
	LostConnections() ([]ReceivePortIdentifier, error)
	// Stats counts the port's messages, bytes and connections so far.
	Stats() PortStats
	// Close disconnects from every receive port cleanly and frees the port. It returns
	// nil when every goodbye was handed to its connection and no receiver reported
	// throwing away messages whose Finish had returned nil (see WriteMessage.Finish);
	// such a report not yet returned by a Finish is returned here, matching
	// ErrConnectionLost and naming the receiver. Like Finish, a nil Close is not proof
	// that the receivers have read the last messages.
	Close() error
}

// ReceivePort is the receiving end of unidirectional message channels. Messages come
// one at a time: explicitly through Receive or Poll, or to a message handler once
// upcalls are enabled (several at a time, from different connections, on a port made
// with WithConcurrentUpcalls).
type ReceivePort interface {
	// Identifier names the port.
	Identifier() ReceivePortIdentifier
	// Type returns the port's type.
	Type() PortType
	// Receive waits for the next message (needs receive.explicit).
	Receive(ctx context.Context) (ReadMessage, error)
	// Poll returns a message if one is waiting, or nil (needs receive.poll). With
	// receive.pollupcalls and a handler, Poll delivers a waiting message to the handler
	// instead and returns nil.
	Poll() (ReadMessage, error)
	// EnableConnections lets senders connect; until then they are told to retry.
	EnableConnections()
	// DisableConnections makes new senders wait (connected ones stay).
	DisableConnections()
	// EnableMessageUpcalls starts delivering messages to the port's handler.
	EnableMessageUpcalls() error
	// DisableMessageUpcalls stops delivering to the handler after the current upcall
	// (the current ones, with concurrent upcalls).
	DisableMessageUpcalls()
	// ConnectedTo lists the send ports connected to this port.
	ConnectedTo() []SendPortIdentifier
	// LostConnections returns the senders lost since the last call (needs connection.downcalls).
	LostConnections() ([]SendPortIdentifier, error)
	// Stats counts the port's messages, bytes and connections so far.
	Stats() PortStats
	// NewConnections returns the senders connected since the last call (needs connection.downcalls).
	NewConnections() ([]SendPortIdentifier, error)
	// Close closes the port at once: connected senders see their connection end. It
	// waits for no handler, so any handler may call it; Ibis.Wait waits for them. It is
	// CloseContext(context.Background()).
	Close() error
	// CloseContext is Close with ctx bounding the one step that may wait, withdrawing a
	// Global port's name from the registry (the connect timeout when ctx has no
	// deadline). The port closes either way; a name not withdrawn (ctx ended, registry
	// lost) stays bound until the instance leaves the pool, and is logged, not returned.
	CloseContext(ctx context.Context) error
}

// MessageHandler receives messages as upcalls. It owns m until it returns or calls
// m.Finish; after an early Finish the port may deliver the next message to another
// invocation concurrently. On a port made with WithConcurrentUpcalls, invocations on
// messages of different connections run concurrently anyway. A returned error is
// logged; the message is finished for it.
type MessageHandler func(m ReadMessage) error

// ConnectionHandler is told of connections to a receive port (needs connection.upcalls).
type ConnectionHandler interface {
	// GotConnection is asked whether a send port may connect; false refuses it, and the
	// sender's Connect fails with ErrDenied.
	GotConnection(port ReceivePort, from SendPortIdentifier) bool
	// LostConnection tells that a sender went away: err is nil for a clean disconnect
	// and wraps ErrConnectionLost when the connection broke.
	LostConnection(port ReceivePort, from SendPortIdentifier, err error)
}

// DisconnectHandler is told when a send port's connection to a receive port ends other
// than by its own Disconnect or Close (needs connection.upcalls).
type DisconnectHandler func(port SendPort, to ReceivePortIdentifier, err error)

// MaxPortName is the longest port name, in bytes: both ends' names travel in a
// connection's handshake, which is bounded.
const MaxPortName = 1024
