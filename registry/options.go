package registry

import (
	"crypto/tls"
	"net"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// Option configures a Client (functional options for Join).
type Option func(*clientConfig)

type clientConfig struct {
	poolSize         int
	address          string
	addressFunc      func(local net.Addr) string // computes address after dialling
	tag              string
	logger           *zap.Logger
	handler          func(Event)
	dialTimeout      time.Duration
	reconnectTimeout time.Duration // < 0: never reconnect
	version          uint64        // protocol version sent; tests change it
	joinTimeout      time.Duration // wait for the join reply; tests shorten it
	// beforeRejoin, when set, runs before every reconnection attempt; tests
	// use it to hold a member back.
	beforeRejoin func()
	secret       poolauth.Secret // the pool's, for the pool check
	tls          *tls.Config     // nil: plain TCP
	// firstAddr is the index of the front end Join tries first; < 0 (the
	// default): the spread of firstAddr(). Tests fix it.
	firstAddr int
}

// DefaultReconnectTimeout is how long a client that lost a restartable
// registry server keeps trying to rejoin it, unless WithReconnectTimeout
// says otherwise.
const DefaultReconnectTimeout = 10 * time.Minute

func defaultClientConfig() clientConfig {
	return clientConfig{logger: zap.NewNop(), version: ProtocolVersion, joinTimeout: joinReplyTimeout,
		reconnectTimeout: DefaultReconnectTimeout, dialTimeout: DefaultDialTimeout, firstAddr: -1}
}

// WithPoolSize makes the pool a closed world of n members: it closes (a
// PoolClosed event, WaitUntilPoolClosed returns) once n members have joined,
// and later joins fail with ErrPoolClosed. All members must agree on n; 0
// (the default) is an open world.
func WithPoolSize(n int) Option {
	return func(c *clientConfig) { c.poolSize = n }
}

// WithAddress sets the address published in this member's Identifier:
// where its implementation accepts connections. The registry does not
// interpret it.
func WithAddress(addr string) Option {
	return func(c *clientConfig) { c.address, c.addressFunc = addr, nil }
}

// WithAddressFunc is WithAddress for a member that learns its address only once it has
// reached the registry: f gets the local address of the connection to the registry
// (the address this host is seen by from there) and returns the address to publish.
// It is called for each attempt of the first join; a rejoin publishes what the first
// join did, since the address is part of the member's identity.
func WithAddressFunc(f func(local net.Addr) string) Option {
	return func(c *clientConfig) { c.address, c.addressFunc = "", f }
}

// WithTag sets the user's tag published in this member's Identifier, for
// example a role name.
func WithTag(tag string) Option {
	return func(c *clientConfig) { c.tag = tag }
}

// WithLogger sets the client's logger (default: no logging).
func WithLogger(l *zap.Logger) Option {
	return func(c *clientConfig) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithEventHandler makes the client call h for every event, in order, on
// one goroutine, instead of sending events to Events(). Events are queued
// without bound in front of h, so a slow handler never stalls replies; it
// only delays later events. h may call Leave or Close. Leave and Close drop
// the events not yet handed to h and do not wait for a call of h in
// progress (it may be their caller): the goroutine running h ends as soon
// as that call returns, so h must not block forever.
func WithEventHandler(h func(Event)) Option {
	return func(c *clientConfig) { c.handler = h }
}

// DefaultDialTimeout is how long Join keeps trying to reach a server that
// is not there (yet), unless WithDialTimeout says otherwise: enough for a
// registry started together with the program, short enough that a wrong
// address is reported within seconds.
const DefaultDialTimeout = 5 * time.Second

// WithDialTimeout limits how long Join keeps trying to reach the server,
// all attempts together (the server may still be starting): default
// DefaultDialTimeout; zero or negative means until the context of Join
// ends. It bounds the first join only: rejoining a lost server has its own
// limit (WithReconnectTimeout).
func WithDialTimeout(d time.Duration) Option {
	return func(c *clientConfig) { c.dialTimeout = max(d, 0) }
}

// WithReconnectTimeout bounds how long the client tries to rejoin its pool
// after it lost a registry server that may be restarted (a stand-alone
// ibis-registry; an embedded server is never waited for): attempts start at
// once and back off up to a second apart, for at most d in all (default
// DefaultReconnectTimeout); then the client gives up and ends. A negative d
// turns reconnecting off: the client ends as soon as the registry is lost.
// Close ends the attempts at any time.
func WithReconnectTimeout(d time.Duration) Option {
	return func(c *clientConfig) {
		if d == 0 {
			d = DefaultReconnectTimeout
		}
		c.reconnectTimeout = d
	}
}

// WithPoolSecret sets the pool's shared secret for the pool check that
// opens every connection to the server, the first join's and every
// rejoin's (see "Trust" in the package doc): the client proves that it
// knows the secret, and requires the server to prove the same, so that
// neither a stranger nor a server that does not know the secret gets a
// member's requests. The secret itself never crosses the wire. Empty (the
// default) means no secret: the client can join only a pool that the
// server keeps open. A failed check makes Join fail with an error wrapping
// ErrUnauthenticated. The bytes are copied.
func WithPoolSecret(secret []byte) Option {
	return func(c *clientConfig) { c.secret = poolauth.New(secret) }
}

// WithTLS makes the client speak TLS to the server, on the first join and
// on every rejoin, with cfg (for example tlsconf.Files.Client: the client's
// certificate, and the server's checked against the pool's CA). Only TLS
// 1.3 is spoken: a lower cfg.MinVersion is raised. When cfg names no
// ServerName and does not replace the standard verification, the host of
// the registry address is used. A certificate either side does not trust
// makes Join fail with an error wrapping ErrUnauthenticated. nil (the
// default) means plain TCP.
func WithTLS(cfg *tls.Config) Option {
	return func(c *clientConfig) { c.tls = cfg }
}
