package hub

import (
	"net"
	"time"

	"go.uber.org/zap"
)

// Client defaults.
const (
	// DefaultClientTimeout bounds a registration or relay set-up when the caller's
	// context has no deadline: the hub's handshake, probe and relay timeouts fit in it.
	DefaultClientTimeout = 30 * time.Second
	// DefaultAcceptBacklog is how many relayed connections Accepted holds that nobody
	// has taken yet.
	DefaultAcceptBacklog = 16
)

type clientConfig struct {
	log       *zap.Logger
	keepalive time.Duration
	timeout   time.Duration
	onRelay   func(net.Conn)
	backlog   int
	dialer    *net.Dialer
}

// ClientOption configures Register and Relay.
type ClientOption func(*clientConfig)

// WithClientLogger sets the logger (default: none).
func WithClientLogger(l *zap.Logger) ClientOption {
	return func(c *clientConfig) {
		if l != nil {
			c.log = l
		}
	}
}

// WithClientKeepalive sets the member's ping interval on its control connection; a hub
// silent for three intervals (of the longer of the member's and the hub's) is gone.
func WithClientKeepalive(d time.Duration) ClientOption {
	return func(c *clientConfig) { c.keepalive = d }
}

// WithTimeout bounds a registration or relay set-up when the context has no earlier
// deadline (default DefaultClientTimeout).
func WithTimeout(d time.Duration) ClientOption { return func(c *clientConfig) { c.timeout = d } }

// WithOnRelay makes a Member call f, in a goroutine of its own, with each relayed
// connection instead of delivering it on Accepted; f owns the connection, and Close
// does not wait for it.
func WithOnRelay(f func(net.Conn)) ClientOption { return func(c *clientConfig) { c.onRelay = f } }

// WithAcceptBacklog sets how many relayed connections Accepted holds.
func WithAcceptBacklog(n int) ClientOption { return func(c *clientConfig) { c.backlog = n } }

// WithDialer sets the dialer of connections to hubs (a local address to dial from, for
// instance); its Timeout and Deadline are left to the context.
func WithDialer(d *net.Dialer) ClientOption { return func(c *clientConfig) { c.dialer = d } }

func newClientConfig(opts []ClientOption) clientConfig {
	c := clientConfig{log: zap.NewNop()}
	for _, o := range opts {
		o(&c)
	}
	if c.keepalive <= 0 {
		c.keepalive = DefaultKeepalive
	}
	c.keepalive = min(max(c.keepalive, minInterval), maxInterval)
	if c.timeout <= 0 {
		c.timeout = DefaultClientTimeout
	}
	if c.backlog < 1 {
		c.backlog = DefaultAcceptBacklog
	}
	if c.dialer == nil {
		c.dialer = &net.Dialer{}
	}
	return c
}
