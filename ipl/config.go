package ipl

import (
	"time"

	"go.uber.org/zap"
)

// Default values of the configuration.
const (
	// DefaultConnectTimeout bounds a Connect (and the other registry steps of ports)
	// whose context has no deadline.
	DefaultConnectTimeout = 60 * time.Second
	// DefaultMaxMessageSize bounds what a receiver accepts (and allocates) per message.
	DefaultMaxMessageSize int64 = 1 << 30
	// DefaultMessageTimeout is how long a receiver waits for the rest of a message whose
	// sender stopped sending in the middle of it before it cuts the connection: long
	// enough for any live sender on a loaded network, short enough that one stalled
	// sender does not hold a many-to-one port's other senders for long.
	DefaultMessageTimeout = 30 * time.Second
	// NoMessageTimeout, given to WithMessageTimeout, lets a message wait for its
	// sender's next bytes for as long as the sender's instance lives.
	NoMessageTimeout time.Duration = -1
	// DefaultJoinTimeout bounds joining the pool when New's context has no deadline.
	DefaultJoinTimeout = 60 * time.Second
)

// Config is the complete configuration of an Ibis instance. Programs set it with
// Options; implementations read it. Fields left zero are filled from the environment
// (see ApplyEnvironment) and then from defaults.
type Config struct {
	// Implementation names the implementation to use ("tcp", ...); "" picks the first
	// registered one that offers every capability asked for.
	Implementation string
	// Registry is the registry server's host:port, or a comma-separated list of the
	// host:port of front ends that serve the same pools (registry.Join moves between
	// them); "" runs an embedded registry in this process, for a pool of this one
	// process (or of processes told its address).
	Registry string
	// ServeRegistry, when set, is the address (such as ":20012") on which this process
	// serves the pool's registry, embedded, for the others (and itself) to join at
	// Registry: rank 0 of an srun or mpirun launch. It serves until the other members
	// have left or died, also after this process's Close.
	ServeRegistry string
	// RegistryDialTimeout bounds how long joining keeps dialling a registry that is not
	// up yet (0: registry.DefaultDialTimeout; negative: as long as the join may take).
	RegistryDialTimeout time.Duration
	// Pool is the pool's name; processes with the same name find each other.
	Pool string
	// PoolSize is the size of a closed-world pool; 0 means open.
	PoolSize int
	// Tag is a user label for this instance, visible in its identifier.
	Tag string
	// Capabilities are the Ibis capabilities asked for (closed.world, elections.strict, ...).
	Capabilities []string
	// PortTypes are the port types the program will create ports of.
	PortTypes []PortType
	// Logger receives diagnostics; nil means none.
	Logger *zap.Logger
	// EventHandler, when set, receives registry events in order instead of Events().
	EventHandler func(Event)
	// ListenHost pins the host or IP the implementation listens on and publishes. Empty
	// (unless IBIS_HOST says otherwise): loopback when the registry is on loopback, else,
	// as with a wildcard (0.0.0.0, ::), every interface, publishing the addresses others
	// can reach this process by (WithListenHost).
	ListenHost string
	// Hubs are relay hubs (host:port, cmd/ibis-hub) this process keeps a connection to,
	// so that members that cannot dial it, nor it them, reach it through a hub
	// (WithHubs; docs/GRIDS.md).
	Hubs []string
	// ConnectTimeout bounds a Connect, ConnectGlobal, the publishing of a Global receive
	// port and its withdrawal at Close, when their context has no deadline.
	ConnectTimeout time.Duration
	// MaxMessageSize bounds the bytes of one received message. A receive port tells
	// each sender its bound when it connects; a send port keeps to the least of its
	// own and its receivers' (a bigger write fails with ErrTooLarge).
	MaxMessageSize int64
	// MessageTimeout bounds how long a receiver waits for the next bytes of a message
	// that has begun to arrive (0: DefaultMessageTimeout; negative: no bound).
	MessageTimeout time.Duration
	// HeartbeatInterval sets the heartbeat interval of an embedded registry.
	HeartbeatInterval time.Duration
	// DeathTimeout sets how long a member of an embedded registry's pool may be silent
	// before it is declared dead (0: registry.DefaultDeathTimeout).
	DeathTimeout time.Duration
	// Properties hold implementation-specific settings (for example a flavour choice).
	Properties map[string]string
	// PoolSecret closes the pool to processes that do not know it (WithPoolSecret).
	PoolSecret []byte
	// PoolSecretFile names a file that holds the pool secret (WithPoolSecretFile).
	PoolSecretFile string
	// TLSCert, TLSKey and TLSCA name the PEM files of this process's certificate, its
	// key and the pool's CA (WithTLS).
	TLSCert, TLSKey, TLSCA string

	// launch remembers what an srun or mpirun launch set (applyLauncher).
	launch *beforeLaunch
}

// Option sets part of a Config.
type Option func(*Config)

// WithImplementation picks the implementation by its registered name.
func WithImplementation(name string) Option { return func(c *Config) { c.Implementation = name } }

// WithPoolSecret closes the pool: the registry and every data connection (tcp, nio) then
// require the other side to prove, by a challenge-response over fresh nonces, that it
// knows the same secret, which itself never crosses the wire (docs/SECURITY.md). A
// process without it can neither join, nor look up names, nor read events, nor connect
// to a port; a wrong or missing secret fails with an error matching ErrUnauthenticated.
// Every process of the pool, and its registry server, must have it. Without a secret
// (the default) the pool is open to anyone who can reach its addresses. mp's data over
// MPI is exempt: the MPI job is its own trust domain. IBIS_POOL_SECRET sets it too.
func WithPoolSecret(secret []byte) Option {
	return func(c *Config) { c.PoolSecret = append([]byte(nil), secret...) }
}

// WithTLS makes the registry and data connections speak TLS 1.3 with mutual
// authentication: this process presents the certificate in certFile (key in keyFile) and
// accepts only peers whose certificates chain to the pool's CA in caFile (host names are
// not checked: nodes are reached by the addresses the registry gives). Only tcp speaks TLS
// on its data connections; nio refuses it (its event loop reads the sockets itself) and mp
// has none (docs/SECURITY.md). IBIS_TLS_CERT, IBIS_TLS_KEY and IBIS_TLS_CA set it too.
func WithTLS(certFile, keyFile, caFile string) Option {
	return func(c *Config) { c.TLSCert, c.TLSKey, c.TLSCA = certFile, keyFile, caFile }
}

// WithPoolSecretFile is WithPoolSecret with the secret read from a file (its trailing
// newlines dropped), which keeps it out of process listings and shell histories;
// IBIS_POOL_SECRET_FILE sets it too.
func WithPoolSecretFile(path string) Option { return func(c *Config) { c.PoolSecretFile = path } }

// WithRegistry names the registry server (host:port), or its front ends as a
// comma-separated list ("a:8888,b:8888").
func WithRegistry(addr string) Option { return func(c *Config) { c.Registry = addr } }

// WithServeRegistry makes this process serve the pool's registry on addr (such as
// ":9000", all interfaces) while it joins the pool at the Registry address, which must
// reach it: what rank 0 does under srun and mpirun by itself. The registry outlives
// Close until the other members have left or died (at most the death timeout).
func WithServeRegistry(addr string) Option { return func(c *Config) { c.ServeRegistry = addr } }

// WithRegistryDialTimeout bounds how long joining keeps dialling a registry that is not
// up yet; a negative d keeps dialling for as long as New's context allows.
func WithRegistryDialTimeout(d time.Duration) Option {
	return func(c *Config) { c.RegistryDialTimeout = d }
}

// WithPool names the pool to join.
func WithPool(name string) Option { return func(c *Config) { c.Pool = name } }

// WithPoolSize makes the pool closed-world with n members.
func WithPoolSize(n int) Option { return func(c *Config) { c.PoolSize = n } }

// WithTag labels this instance.
func WithTag(tag string) Option { return func(c *Config) { c.Tag = tag } }

// WithCapabilities asks for Ibis capabilities (closed.world, elections.strict, ...).
func WithCapabilities(caps ...string) Option {
	return func(c *Config) { c.Capabilities = append(c.Capabilities, caps...) }
}

// WithPortTypes declares the port types the program will use, so that New can pick an
// implementation that supports them.
func WithPortTypes(pts ...PortType) Option {
	return func(c *Config) { c.PortTypes = append(c.PortTypes, pts...) }
}

// WithLogger injects a logger for diagnostics (default: none).
func WithLogger(l *zap.Logger) Option { return func(c *Config) { c.Logger = l } }

// WithEventHandler receives registry events in total order on one goroutine.
func WithEventHandler(h func(Event)) Option { return func(c *Config) { c.EventHandler = h } }

// WithListenHost pins the host or IP to listen on and publish to peers (IBIS_HOST sets it
// too). Without it, tcp and nio listen on loopback when the registry is on loopback (a
// pool on one host); otherwise, or with a wildcard (0.0.0.0, ::), they listen on every
// interface and publish a list of addresses, tried in order by whoever connects: the
// address this host reached the registry from, then its other non-loopback addresses
// (IPv4 first); loopback alone when the registry is on loopback. Pin a host when that
// rule picks one that peers cannot reach (docs/CLUSTERS.md, "Addresses").
func WithListenHost(host string) Option { return func(c *Config) { c.ListenHost = host } }

// WithHubs names relay hubs (host:port of cmd/ibis-hub; IBIS_HUB sets them, comma
// separated). The process keeps a connection to each, learns from the first whether
// members outside its site can dial it, and publishes the hubs: a member that can dial
// neither this process nor be dialled by it connects through one of them, end to end
// authenticated (docs/GRIDS.md).
func WithHubs(addrs ...string) Option {
	return func(c *Config) { c.Hubs = append([]string(nil), addrs...) }
}

// WithConnectTimeout bounds a Connect, ConnectGlobal, the publishing of a Global receive
// port and its withdrawal at Close, when their context has no deadline
// (DefaultConnectTimeout when not set).
func WithConnectTimeout(d time.Duration) Option { return func(c *Config) { c.ConnectTimeout = d } }

// WithMessageTimeout bounds how long a receiver waits for the next bytes of a message
// whose first bytes have arrived. A sender that stops for longer in the middle of a
// message (a stopped process, a broken network, a peer that never finishes) has its
// connection cut: the reader gets an error matching ErrStalled and ErrConnectionLost,
// the sender sees its connection lost, and the port's other senders go on. Time a
// receiver spends not reading (the program holds the message) does not count, nor
// does time between messages. NoMessageTimeout disables the bound. On tcp and nio a
// many-to-one port hands out a message of up to 256 KiB only once all of it has
// arrived, so a sender stopped in the middle of one does not hold up the others'
// complete messages even for that long.
func WithMessageTimeout(d time.Duration) Option { return func(c *Config) { c.MessageTimeout = d } }

// WithMaxMessageSize bounds the bytes of one received message; the send ports
// connected to this Ibis's receive ports keep to it too.
func WithMaxMessageSize(n int64) Option { return func(c *Config) { c.MaxMessageSize = n } }

// WithHeartbeatInterval sets the heartbeat interval of an embedded registry (how often
// members and server say they are there; not when a silent member is declared dead).
func WithHeartbeatInterval(d time.Duration) Option {
	return func(c *Config) { c.HeartbeatInterval = d }
}

// WithDeathTimeout sets how long a member may send nothing before an embedded registry
// declares it dead (registry.WithDeathTimeout; default registry.DefaultDeathTimeout, 30s).
// A member whose process ends is declared dead at once, whatever this timeout.
func WithDeathTimeout(d time.Duration) Option {
	return func(c *Config) { c.DeathTimeout = d }
}

// WithProperty sets an implementation-specific property.
func WithProperty(key, value string) Option {
	return func(c *Config) {
		if c.Properties == nil {
			c.Properties = map[string]string{}
		}
		c.Properties[key] = value
	}
}

// Property returns an implementation-specific property, or "".
func (c *Config) Property(key string) string { return c.Properties[key] }

// HasPortType reports whether pt was declared.
func (c *Config) HasPortType(pt PortType) bool {
	for _, d := range c.PortTypes {
		if d.Equal(pt) {
			return true
		}
	}
	return false
}
