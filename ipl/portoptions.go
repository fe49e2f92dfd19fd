package ipl

// SendPortOption configures a send port at creation.
type SendPortOption func(*SendPortConfig)

// SendPortConfig is what SendPortOptions set; implementations read it.
type SendPortConfig struct {
	// DisconnectHandler is told of connections that end by failure or by the receiver.
	DisconnectHandler DisconnectHandler
}

// WithDisconnectHandler reports connections of the send port that end without the
// port's own Disconnect (the port type needs connection.upcalls).
func WithDisconnectHandler(h DisconnectHandler) SendPortOption {
	return func(c *SendPortConfig) { c.DisconnectHandler = h }
}

// ApplySendPortOptions folds opts into a SendPortConfig; implementations call it.
func ApplySendPortOptions(opts []SendPortOption) SendPortConfig {
	var c SendPortConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}

// ReceivePortOption configures a receive port at creation.
type ReceivePortOption func(*ReceivePortConfig)

// ReceivePortConfig is what ReceivePortOptions set; implementations read it.
type ReceivePortConfig struct {
	// MessageHandler takes messages as upcalls once they are enabled.
	MessageHandler MessageHandler
	// ConnectionHandler decides on and hears of connections.
	ConnectionHandler ConnectionHandler
	// Global publishes the port's name in the registry so senders can ConnectGlobal.
	Global bool
	// ConnectionsDisabled starts the port refusing connections until EnableConnections.
	ConnectionsDisabled bool
	// ConcurrentUpcalls is how many message upcalls may run at the same time, each on
	// a message from a different connection; 0 and 1 mean one at a time.
	ConcurrentUpcalls int
}

// WithMessageHandler sets the handler that takes messages as upcalls (the port type
// needs receive.autoupcalls or receive.pollupcalls). Upcalls start with
// EnableMessageUpcalls, as in Ibis, so the program can finish setting up first.
func WithMessageHandler(h MessageHandler) ReceivePortOption {
	return func(c *ReceivePortConfig) { c.MessageHandler = h }
}

// WithConnectionHandler sets the handler that accepts or refuses senders and hears of
// lost connections (the port type needs connection.upcalls).
func WithConnectionHandler(h ConnectionHandler) ReceivePortOption {
	return func(c *ReceivePortConfig) { c.ConnectionHandler = h }
}

// Global publishes the port's name in the registry, pool-wide, so that a send port can
// connect to it with ConnectGlobal without knowing which instance holds it. The name
// must be unique in the pool.
func Global() ReceivePortOption {
	return func(c *ReceivePortConfig) { c.Global = true }
}

// ConnectionsDisabled creates the port refusing connections (senders keep retrying)
// until EnableConnections is called. By default a new port accepts connections at once.
func ConnectionsDisabled() ReceivePortOption {
	return func(c *ReceivePortConfig) { c.ConnectionsDisabled = true }
}

// WithConcurrentUpcalls lets up to n message upcalls run at the same time, each with
// a message from a different connection, for a busy many-to-one port whose handler
// answers (or waits) before it returns: one handler per sender, as a server with a
// goroutine per connection answers. Each connection stays FIFO: its next message is
// delivered only once its last one is finished. n of 0 or 1 is the default, one
// upcall at a time as in Java Ibis; a handler that finishes its message early still
// lets the port go on, so more than n handlers may be running, but at most n hold a
// message. It needs a message handler and receive.autoupcalls; n is at most 65536.
// DisableMessageUpcalls and Close stop every dispatcher. On a port with n > 1, Receive
// (allowed while upcalls are disabled, as on any port) waits until no handler holds a
// message and Poll returns nil while one does; no upcall starts while their message
// lives.
func WithConcurrentUpcalls(n int) ReceivePortOption {
	return func(c *ReceivePortConfig) { c.ConcurrentUpcalls = n }
}

// ApplyReceivePortOptions folds opts into a ReceivePortConfig; implementations call it.
func ApplyReceivePortOptions(opts []ReceivePortOption) ReceivePortConfig {
	var c ReceivePortConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}
