package hub

import (
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// Defaults of a Server's limits and times. They suit a grid of a few hundred members,
// where one NAT may hide a whole site that sets up all its relays at once (so the
// per-address limits are generous), while a stranger still holds at most
// DefaultMaxHandshakesPerIP connections, for at most DefaultHandshakeTimeout each.
const (
	DefaultMaxConns           = 8192
	DefaultMaxConnsPerIP      = 2048
	DefaultMaxHandshakes      = 1024
	DefaultMaxHandshakesPerIP = 256
	DefaultMaxMembers         = 4096
	DefaultMaxPending         = 1024
	DefaultHandshakeTimeout   = 10 * time.Second
	DefaultRelayTimeout       = 10 * time.Second
	DefaultKeepalive          = 5 * time.Second
	DefaultProbeTimeout       = 1500 * time.Millisecond
	// keepaliveMisses is how many keepalive intervals of silence end a control
	// connection, on both sides.
	keepaliveMisses = 3
	// maxRefusing bounds the goroutines that tell a client over a limit why it is
	// refused; beyond it such clients are closed without a word.
	maxRefusing = 64
	// maxProbing bounds the probe dials in flight over all registrations.
	maxProbing = 256
)

type serverConfig struct {
	lookup             poolauth.Lookup
	log                *zap.Logger
	maxConns           int
	maxConnsPerIP      int
	maxHandshakes      int
	maxHandshakesPerIP int
	maxMembers         int
	maxPending         int
	handshakeTimeout   time.Duration
	relayTimeout       time.Duration
	keepalive          time.Duration
	probeTimeout       time.Duration
	forward            bool
}

// ServerOption configures a Server.
type ServerOption func(*serverConfig)

// WithSecrets makes the hub require the pool check with lookup's secrets on every
// connection (a pool lookup does not serve is refused). Without it (or with nil) the
// hub is OPEN: it serves any pool and takes no secret.
func WithSecrets(lookup poolauth.Lookup) ServerOption {
	return func(c *serverConfig) { c.lookup = lookup }
}

// WithLogger sets the logger (default: none).
func WithLogger(l *zap.Logger) ServerOption {
	return func(c *serverConfig) {
		if l != nil {
			c.log = l
		}
	}
}

// WithMaxConns bounds the connections the hub holds in all (n < 1: the default).
func WithMaxConns(n int) ServerOption { return func(c *serverConfig) { c.maxConns = n } }

// WithMaxConnsPerIP bounds the connections from one IP address.
func WithMaxConnsPerIP(n int) ServerOption { return func(c *serverConfig) { c.maxConnsPerIP = n } }

// WithMaxHandshakes bounds the connections that have not passed the pool check yet.
func WithMaxHandshakes(n int) ServerOption { return func(c *serverConfig) { c.maxHandshakes = n } }

// WithMaxHandshakesPerIP bounds those from one IP address.
func WithMaxHandshakesPerIP(n int) ServerOption {
	return func(c *serverConfig) { c.maxHandshakesPerIP = n }
}

// WithMaxMembers bounds the registered members, over all pools.
func WithMaxMembers(n int) ServerOption { return func(c *serverConfig) { c.maxMembers = n } }

// WithMaxPending bounds the relays waiting for their target to connect.
func WithMaxPending(n int) ServerOption { return func(c *serverConfig) { c.maxPending = n } }

// WithHandshakeTimeout bounds the pool check and first frame of a connection.
func WithHandshakeTimeout(d time.Duration) ServerOption {
	return func(c *serverConfig) { c.handshakeTimeout = d }
}

// WithRelayTimeout bounds how long a relay waits for its target to connect.
func WithRelayTimeout(d time.Duration) ServerOption {
	return func(c *serverConfig) { c.relayTimeout = d }
}

// WithKeepalive sets the hub's ping interval on control connections; a member silent
// for three intervals (of the longer of the hub's and the member's) is forgotten.
func WithKeepalive(d time.Duration) ServerOption {
	return func(c *serverConfig) { c.keepalive = d }
}

// WithProbeTimeout bounds each dial-back of a registering member's addresses.
func WithProbeTimeout(d time.Duration) ServerOption {
	return func(c *serverConfig) { c.probeTimeout = d }
}

// WithForwarding says whether the hub forwards relays to other hubs (default true).
func WithForwarding(on bool) ServerOption { return func(c *serverConfig) { c.forward = on } }

func newServerConfig(opts []ServerOption) serverConfig {
	c := serverConfig{log: zap.NewNop(), forward: true}
	for _, o := range opts {
		o(&c)
	}
	setDefault := func(v *int, d int) {
		if *v < 1 {
			*v = d
		}
	}
	setDefault(&c.maxConns, DefaultMaxConns)
	setDefault(&c.maxConnsPerIP, DefaultMaxConnsPerIP)
	setDefault(&c.maxHandshakes, DefaultMaxHandshakes)
	setDefault(&c.maxHandshakesPerIP, DefaultMaxHandshakesPerIP)
	setDefault(&c.maxMembers, DefaultMaxMembers)
	setDefault(&c.maxPending, DefaultMaxPending)
	setDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	setDur(&c.handshakeTimeout, DefaultHandshakeTimeout)
	setDur(&c.relayTimeout, DefaultRelayTimeout)
	setDur(&c.keepalive, DefaultKeepalive)
	setDur(&c.probeTimeout, DefaultProbeTimeout)
	c.keepalive = min(max(c.keepalive, minInterval), maxInterval)
	return c
}
