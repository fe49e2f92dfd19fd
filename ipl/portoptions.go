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

// ApplyReceivePortOptions folds opts into a ReceivePortConfig; implementations call it.
func ApplyReceivePortOptions(opts []ReceivePortOption) ReceivePortConfig {
	var c ReceivePortConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}
