package registry

import (
	"crypto/tls"
	"io"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// DefaultHeartbeatInterval is the interval of heartbeats and pings unless
// WithHeartbeatInterval says otherwise.
const DefaultHeartbeatInterval = 2 * time.Second

// DefaultDeathTimeout is how long a member may stay silent before it is
// declared dead, unless WithDeathTimeout says otherwise: long enough for a
// process on a loaded node (scheduling stalls of seconds, swapping, a short
// SIGSTOP) to stay a member; a crashed process is found at once through its
// broken connection, whatever this timeout.
const DefaultDeathTimeout = 30 * time.Second

// Bounds of the heartbeat interval: the minimum keeps a mistyped interval
// from turning server and clients into busy loops, the maximum keeps the
// derived timeouts far from overflowing.
const (
	minHeartbeatInterval = 10 * time.Millisecond
	maxHeartbeatInterval = time.Hour
)

// ServerOption configures a Server (functional options for NewServer and
// StartEmbedded).
type ServerOption func(*serverConfig)

type serverConfig struct {
	heartbeat    time.Duration
	deathTimeout time.Duration // at least heartbeat (see effective)
	logger       *zap.Logger
	eventLog     io.Writer
	maxFrameSize int
	maxQueued    int
	maxWaiting   int

	maxMemberNameBytes int
	maxPoolNames       int
	maxPoolNameBytes   int
	maxUnjoined        int
	// maxUnjoinedPerSource bounds one source address's share of
	// maxUnjoined; <= 0: maxUnjoined/4 (see effective).
	maxUnjoinedPerSource int

	restartable    bool
	recoveryGrace  time.Duration
	recoveryWindow time.Duration

	secret      poolauth.Secret            // every pool's, unless poolSecrets has its own
	poolSecrets map[string]poolauth.Secret // by pool; non-nil: unlisted pools need the server-wide secret
	tls         *tls.Config                // nil: plain TCP

	// Limits per source address (IP); <= 0: none.
	maxPoolsPerSource   int
	maxMembersPerSource int

	// etcd lists the endpoints of the etcd cluster that holds the pools
	// (WithEtcdStore); empty: the pools live in this server's memory.
	etcd []string
	// etcdTLS secures the connections to etcd (nil: plain gRPC), and
	// etcdUser and etcdPassword log in to etcd's auth (empty: none).
	etcdTLS                *tls.Config
	etcdUser, etcdPassword string
}

// secretFor is the pool check's lookup: the secret a pool requires (the
// zero Secret: none, the pool is open), and whether this server serves the
// pool at all. A pool listed with its own secret uses it; any other pool
// uses the server-wide secret; without one, it is open on a server that
// lists no pools, and not served on one that does (WithPoolSecrets).
func (c *serverConfig) secretFor(pool string) (poolauth.Secret, bool) {
	if s, ok := c.poolSecrets[pool]; ok && s.IsSet() {
		return s, true
	}
	if c.secret.IsSet() {
		return c.secret, true
	}
	return poolauth.Secret{}, c.poolSecrets == nil
}

// open reports whether a pool is served without a secret.
func (c *serverConfig) open(pool string) bool {
	s, ok := c.secretFor(pool)
	return ok && !s.IsSet()
}

// DefaultRecoveryGrace is how long a pool being rebuilt after a restart
// waits, since a member last came back, for the members still missing,
// unless WithRecoveryGrace says otherwise.
const DefaultRecoveryGrace = 10 * time.Second

// Defaults of the server's resource limits (see the options below).
const (
	DefaultMaxWaitingRequests     = 10000
	DefaultMaxMemberNameBytes     = 4 << 20
	DefaultMaxPoolNames           = 10000
	DefaultMaxPoolNameBytes       = 16 << 20
	DefaultMaxUnjoinedConnections = 1024
	// DefaultMaxUnjoinedPerSource is a quarter of the default above, so
	// that three other addresses still find places.
	DefaultMaxUnjoinedPerSource = DefaultMaxUnjoinedConnections / 4
	DefaultMaxPoolsPerSource    = 64
	DefaultMaxMembersPerSource  = 1024
)

// minNameBytes is the smallest name budget: one binding of a global name
// and a port name of the longest length fits.
const minNameBytes = 2 * MaxStringLength

func defaultServerConfig() serverConfig {
	return serverConfig{
		heartbeat:    DefaultHeartbeatInterval,
		deathTimeout: DefaultDeathTimeout,
		logger:       zap.NewNop(),
		maxFrameSize: DefaultMaxFrameSize,
		maxQueued:    64 << 20,
		maxWaiting:   DefaultMaxWaitingRequests,

		maxMemberNameBytes: DefaultMaxMemberNameBytes,
		maxPoolNames:       DefaultMaxPoolNames,
		maxPoolNameBytes:   DefaultMaxPoolNameBytes,
		maxUnjoined:        DefaultMaxUnjoinedConnections,

		maxPoolsPerSource:   DefaultMaxPoolsPerSource,
		maxMembersPerSource: DefaultMaxMembersPerSource,

		restartable:   true,
		recoveryGrace: DefaultRecoveryGrace,
	}
}

// WithHeartbeatInterval sets the heartbeat interval d (default 2s; values
// are kept between 10ms and 1h). Clients learn it when they join and send
// a heartbeat every d/2; the server pings every d/2 too. It does not decide
// when a silent member is declared dead: WithDeathTimeout does (a crashed
// member, whose connection breaks, is declared dead at once).
func WithHeartbeatInterval(d time.Duration) ServerOption {
	return func(c *serverConfig) {
		c.heartbeat = min(max(d, minHeartbeatInterval), maxHeartbeatInterval)
	}
}

// WithDeathTimeout sets how long a member may send nothing (no heartbeat,
// no request) before the server declares it dead: default
// DefaultDeathTimeout (30s), also for 0 or a negative d; kept between the
// heartbeat interval and 1h.
// The silence is measured after the server has read everything that
// arrived from the member, and time the server itself spent stopped does
// not count (see "Failure detection" in the package doc). Clients learn it
// when they join and keep a silent server for twice as long. A connection
// must also join within it of being accepted.
func WithDeathTimeout(d time.Duration) ServerOption {
	return func(c *serverConfig) {
		if d <= 0 {
			d = DefaultDeathTimeout
		}
		c.deathTimeout = min(d, maxHeartbeatInterval)
	}
}

// effective settles the values that depend on each other, whatever the
// order of the options: the death timeout is at least one heartbeat
// interval (two heartbeats), and a source's share of the unjoined
// connections at most their limit.
func (c *serverConfig) effective() {
	c.deathTimeout = max(c.deathTimeout, c.heartbeat)
	if c.maxUnjoinedPerSource <= 0 {
		c.maxUnjoinedPerSource = max(c.maxUnjoined/4, 1)
	}
	c.maxUnjoinedPerSource = min(c.maxUnjoinedPerSource, c.maxUnjoined)
	if len(c.etcd) > 0 {
		// Members of a front end that ends move to another one.
		c.restartable = true
	}
}

// WithEtcdStore keeps the state of the server's pools in the etcd cluster
// at endpoints (host:port each) instead of in the server's memory, so that
// several servers (front ends) over one etcd cluster serve the same pools:
// a member that loses its front end moves to another one (its client
// lists them all) without missing an event. Every front end must be given
// the same limits and death timeout. A front end that cannot reach etcd
// stops serving its members (they move) until it can again. See
// docs/REGISTRY-HA.md. An empty list keeps the memory store.
func WithEtcdStore(endpoints []string) ServerOption {
	return func(c *serverConfig) { c.etcd = slices.Clone(endpoints) }
}

// WithEtcdTLS has a front end of WithEtcdStore talk to etcd over TLS with
// cfg: its RootCAs verify etcd's certificate (etcd's --cert-file, for each
// endpoint's host name or IP), and a certificate in it answers etcd's
// --client-cert-auth. nil (the default) is plain gRPC, for an etcd that
// only the front ends can reach.
func WithEtcdTLS(cfg *tls.Config) ServerOption {
	return func(c *serverConfig) {
		c.etcdTLS = nil
		if cfg != nil {
			c.etcdTLS = cfg.Clone()
		}
	}
}

// WithEtcdAuth logs a front end of WithEtcdStore in to etcd as user with
// password, for an etcd with authentication on (etcdctl auth enable); the
// user needs read and write permission on the prefix /ibis/registry/. Use
// it with WithEtcdTLS: etcd's passwords otherwise cross the network in
// the clear. An empty user (the default) logs in as nobody.
func WithEtcdAuth(user, password string) ServerOption {
	return func(c *serverConfig) { c.etcdUser, c.etcdPassword = user, password }
}

// WithServerLogger sets the logger for connection-level diagnostics (why a
// connection was closed, who joined and died). Default: no logging.
func WithServerLogger(l *zap.Logger) ServerOption {
	return func(c *serverConfig) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithEventLog makes the server print every pool event as one line on w,
// e.g. for the -events flag of cmd/ibis-registry. Lines of one pool appear
// in the pool's total order. Lines are written while the server holds its
// state lock, so w should not block for long (a file or a terminal is
// fine). Write errors are logged and otherwise ignored.
func WithEventLog(w io.Writer) ServerOption {
	return func(c *serverConfig) { c.eventLog = w }
}

// WithMaxFrameSize sets the largest frame body (bytes) the server accepts
// (default DefaultMaxFrameSize, at least MinMaxFrameSize). A client that
// announces a larger frame is disconnected before anything is allocated.
// Clients learn the value when they join and refuse to send larger
// requests with ErrTooLarge.
func WithMaxFrameSize(n int) ServerOption {
	return func(c *serverConfig) {
		c.maxFrameSize = max(n, MinMaxFrameSize)
	}
}

// WithMaxQueuedBytes bounds the bytes waiting to be sent to one client
// (default 64 MiB, at least 1 MiB so that any single event fits). A client
// that does not read its events and replies long enough to exceed it is
// disconnected (and declared dead) rather than letting the server's memory
// grow without bound.
func WithMaxQueuedBytes(n int) ServerOption {
	return func(c *serverConfig) {
		c.maxQueued = max(n, DefaultMaxFrameSize)
	}
}

// WithMaxWaitingRequests bounds the requests of one member that wait at the
// server (ElectionResult and Lookup before their answer exists), default
// DefaultMaxWaitingRequests (10000), at least 1. Further waiting requests
// fail with ErrTooManyRequests.
func WithMaxWaitingRequests(n int) ServerOption {
	return func(c *serverConfig) { c.maxWaiting = max(n, 1) }
}

// WithMaxMemberNameBytes bounds the bytes of names one member holds at the
// server: the names of its waiting requests (ElectionResult, Lookup), the
// global names it bound with their port names, and the names of the
// elections it won. Default DefaultMaxMemberNameBytes (4 MiB), at least
// 128 KiB (2*MaxStringLength) so that any single request fits. A request
// that would exceed it fails with ErrTooManyRequests; the member's names
// are released as its requests are answered or cancelled, as it unbinds,
// and when it leaves or dies.
func WithMaxMemberNameBytes(n int) ServerOption {
	return func(c *serverConfig) { c.maxMemberNameBytes = max(n, minNameBytes) }
}

// WithMaxPoolNames bounds, in each pool, the number of sequences, the
// number of elections with a winner and the number of bound global names
// (each counted on its own). Default DefaultMaxPoolNames (10000), at least
// 1. Sequences are kept until the pool ends; elections and bindings until
// their member leaves or dies (or unbinds). A Sequence, Elect or Bind that
// would create one more fails with ErrTooManyRequests.
func WithMaxPoolNames(n int) ServerOption {
	return func(c *serverConfig) { c.maxPoolNames = max(n, 1) }
}

// WithMaxPoolNameBytes bounds the bytes of the names one pool holds:
// sequence names, names of elections with a winner, and global names with
// their port names, all together. Default DefaultMaxPoolNameBytes
// (16 MiB), at least 128 KiB (2*MaxStringLength). A Sequence, Elect or Bind
// that would exceed it fails with ErrTooManyRequests.
func WithMaxPoolNameBytes(n int) ServerOption {
	return func(c *serverConfig) { c.maxPoolNameBytes = max(n, minNameBytes) }
}

// WithMaxUnjoinedConnections bounds the connections that are open but have
// not joined a pool yet. Default DefaultMaxUnjoinedConnections (1024), at
// least 1. A connection accepted beyond it, or beyond its source address's
// share (WithMaxUnjoinedPerSource), is refused: the server answers its
// pool check with a refusal that names the limit (its Join fails with an
// error wrapping ErrTooManyRequests) and closes it. Every connection must
// join within the death timeout of being accepted, whatever else it sends.
func WithMaxUnjoinedConnections(n int) ServerOption {
	return func(c *serverConfig) { c.maxUnjoined = max(n, 1) }
}

// WithMaxUnjoinedPerSource bounds the connections from one source address
// (the client's IP address, loopback included) that have not joined yet,
// so that one address cannot use up the places of the others. Default
// (0 or negative n): a quarter of WithMaxUnjoinedConnections
// (DefaultMaxUnjoinedPerSource); at most that limit.
func WithMaxUnjoinedPerSource(n int) ServerOption {
	return func(c *serverConfig) { c.maxUnjoinedPerSource = n }
}

// WithRestartable says whether this server may be restarted after it is
// lost, which it tells its clients when they join: a client that loses a
// restartable server tries to rejoin it (see "Registry restarts" in the
// package doc); a client that loses any other server gives up at once,
// with a RegistryLost event saying so. NewServer's default is true (a
// stand-alone ibis-registry can be restarted on its address);
// StartEmbedded's is false, since an embedded server ends with the process
// that runs it.
func WithRestartable(ok bool) ServerOption {
	return func(c *serverConfig) { c.restartable = ok }
}

// WithRecoveryGrace sets how long a pool that members rebuild after a
// restart of the server waits for its missing members: the members that a
// returning member knows of and that have not come back. The wait ends at
// once when all of them are back; otherwise when no member came back for d,
// and the missing ones are then declared dead (the others get Died events
// and can no longer rejoin). Default DefaultRecoveryGrace (10s), kept
// between 10ms and 1h.
func WithRecoveryGrace(d time.Duration) ServerOption {
	return func(c *serverConfig) {
		c.recoveryGrace = min(max(d, minHeartbeatInterval), maxHeartbeatInterval)
	}
}

// WithRecoveryWindow makes a (re)started server hold back, for d after it
// starts serving, joins of new members into pools it does not know: such a
// pool may have lived at the previous run of the server, and its members
// must come back (keeping their member numbers, elections and names) before
// newcomers join it. A held-back Join waits and tries again; it is admitted
// as soon as the pool's returning members have rebuilt it, or when the
// window has passed and nobody came back for that pool. Default 0 (no
// window): right for a server that is never restarted on the same address;
// cmd/ibis-registry uses a few seconds.
func WithRecoveryWindow(d time.Duration) ServerOption {
	return func(c *serverConfig) { c.recoveryWindow = max(d, 0) }
}

// WithServerSecret sets one secret for every pool the server serves (empty:
// none): a client must prove, by a challenge-response over fresh nonces
// (the secret never crosses the wire), that it knows the secret of its
// pool before the server reads anything else from it, and the server
// proves the same to the client (see "Trust" in the package doc). A client
// that fails is refused with an error matching ErrUnauthenticated and
// logged at Warn with its address. A pool listed in WithPoolSecrets uses
// its own secret instead. Without any secret the server is open: anyone
// who reaches its port may join any pool. The bytes are copied.
func WithServerSecret(secret []byte) ServerOption {
	return func(c *serverConfig) { c.secret = poolauth.New(secret) }
}

// WithPoolSecrets gives pools secrets of their own, by pool name: a client
// of a listed pool must know that pool's secret. A pool that is not listed
// uses the server-wide secret (WithServerSecret) if there is one; if there
// is none, the server refuses it (with ErrUnauthenticated): a server given
// a list of pools serves those pools only, rather than opening every other
// name to anyone. A listed pool with an empty secret counts as not listed
// (it never becomes an open pool). To serve open pools and pools with
// secrets side by side, run two servers. A nil or empty map changes
// nothing; the map and the secrets are copied, and later calls add to the
// list.
func WithPoolSecrets(secrets map[string][]byte) ServerOption {
	return func(c *serverConfig) {
		if len(secrets) == 0 {
			return
		}
		if c.poolSecrets == nil {
			c.poolSecrets = make(map[string]poolauth.Secret, len(secrets))
		}
		for pool, s := range secrets {
			c.poolSecrets[pool] = poolauth.New(s)
		}
	}
}

// WithServerTLS makes the server speak TLS on every connection it accepts,
// with cfg (for example tlsconf.Files.Server: the server's certificate,
// and a client certificate required and checked against the pool's CA).
// The TLS handshake comes first and must finish, like the pool handshake
// after it, within the time a connection has to join (the death timeout);
// a client without TLS fails the TLS handshake with its first bytes, and a
// client that sends nothing must begin within 1.5 heartbeat intervals (at
// least 5 s); a failed handshake is logged with the client's address. Only TLS
// 1.3 is spoken (a lower cfg.MinVersion is raised), and a client
// certificate is always required: a cfg.ClientAuth other than
// RequireAnyClientCert (which leaves the check to cfg's own callbacks) is
// made RequireAndVerifyClientCert. cfg is copied. nil (the default) means
// plain TCP. StartEmbedded takes it, and every other ServerOption, too.
func WithServerTLS(cfg *tls.Config) ServerOption {
	return func(c *serverConfig) { c.tls = cfg }
}

// WithMaxPoolsPerSource bounds the pools in which members from one source
// address (the client's IP address, loopback included) may be at once:
// default DefaultMaxPoolsPerSource (64); 0 or a negative n means no limit.
// A join that would put that address into one pool more fails with
// ErrTooManyRequests, and the server logs it.
func WithMaxPoolsPerSource(n int) ServerOption {
	return func(c *serverConfig) { c.maxPoolsPerSource = n }
}

// WithMaxMembersPerSource bounds the members, over all pools, that joined
// from one source address (the client's IP address, loopback included):
// default DefaultMaxMembersPerSource (1024); 0 or a negative n means no
// limit. A join (or rejoin) beyond it fails with ErrTooManyRequests, and
// the server logs it. A launcher that runs more processes on one machine
// must raise it (ibis-run does so for its embedded registry).
func WithMaxMembersPerSource(n int) ServerOption {
	return func(c *serverConfig) { c.maxMembersPerSource = n }
}
