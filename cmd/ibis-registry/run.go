package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/ibisgo/ibis/internal/metrics"
	"github.com/ibisgo/ibis/internal/serveloop"
	"github.com/ibisgo/ibis/internal/tlsconf"
	"github.com/ibisgo/ibis/registry"
)

// portEnv names the environment variable that sets the default port.
const portEnv = "IBIS_REGISTRY_PORT"

// defaultRecoveryWindow is how long a started server holds back newcomers of
// pools it does not know, so that the members of a pool that lived at a
// previous run of the server on this address come back first: they try
// again at most a second apart, so a few seconds cover them.
const defaultRecoveryWindow = 3 * time.Second

// errUsage marks errors in the command line, which were already explained
// on stderr by the flag package.
var errUsage = errors.New("usage error")

// config is the parsed command line.
type config struct {
	host      string
	port      int
	heartbeat time.Duration
	death     time.Duration
	events    bool
	stats     time.Duration
	metrics   string
	verbose   bool
	maxFrame  int

	maxWaiting     int
	maxMemberBytes int
	maxPoolNames   int
	maxPoolBytes   int
	maxUnjoined    int
	maxUnjoinedSrc int

	recoveryGrace  time.Duration
	recoveryWindow time.Duration

	maxPoolsPerSource   int
	maxMembersPerSource int

	// store is the -store flag as given, etcd the endpoints it names
	// (empty: the memory store).
	store string
	etcd  []string
	// How the front end reaches etcd (store.go): TLS files and a login.
	etcdTLS          tlsconf.Files
	etcdUser         string
	etcdPasswordFile string

	// Trust (trust.go): the flags as given; the environment fills in what
	// they leave empty when the server starts.
	secretFile  string
	poolSecrets string
	tls         tlsconf.Files
}

// minNameBytes is the smallest accepted name budget (-max-member-bytes,
// -max-pool-bytes): a global name and a port name of the longest length.
const minNameBytes = 2 * registry.MaxStringLength

// parseFlags reads the command line; getenv supplies the environment (so
// tests need not touch the process's).
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	defaultPort := 8888
	if v := getenv(portEnv); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 0 || p > 65535 {
			return config{}, fmt.Errorf("%s=%q is not a port number (0-65535)", portEnv, v)
		}
		defaultPort = p
	}
	var cfg config
	fs := flag.NewFlagSet("ibis-registry", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.host, "host", "0.0.0.0", "address to listen on")
	fs.IntVar(&cfg.port, "port", defaultPort, "TCP port to listen on ($"+portEnv+" sets the default; 0 = any free port)")
	fs.DurationVar(&cfg.heartbeat, "heartbeat", registry.DefaultHeartbeatInterval,
		"interval of heartbeats (members) and pings (server), each sent every half interval")
	fs.DurationVar(&cfg.death, "death-timeout", registry.DefaultDeathTimeout,
		"a member silent this long (after everything it sent was read, not counting time this server was stopped; at least -heartbeat) is declared dead; a crashed member, whose connection breaks, at once")
	fs.BoolVar(&cfg.events, "events", false, "print every pool event to stdout")
	fs.DurationVar(&cfg.stats, "stats", 0, "print statistics to stdout at this interval (0 = never)")
	fs.StringVar(&cfg.metrics, "metrics", "", "serve the statistics for Prometheus at http://`HOST:PORT`/metrics (port 0: any free one)")
	fs.BoolVar(&cfg.verbose, "v", false, "log joins, leaves and connections too (debug level; without -v only warnings)")
	fs.IntVar(&cfg.maxFrame, "max-frame", registry.DefaultMaxFrameSize, "largest accepted frame in bytes")
	fs.IntVar(&cfg.maxWaiting, "max-waiting", registry.DefaultMaxWaitingRequests,
		"most requests (ElectionResult, Lookup) one member may have waiting")
	fs.IntVar(&cfg.maxMemberBytes, "max-member-bytes", registry.DefaultMaxMemberNameBytes,
		"most bytes of names one member may hold (waiting requests, bound names, elections won)")
	fs.IntVar(&cfg.maxPoolNames, "max-pool-names", registry.DefaultMaxPoolNames,
		"most sequences, elections and bound names (each) one pool may hold")
	fs.IntVar(&cfg.maxPoolBytes, "max-pool-bytes", registry.DefaultMaxPoolNameBytes,
		"most bytes of sequence, election and bound names one pool may hold")
	fs.IntVar(&cfg.maxUnjoined, "max-unjoined", registry.DefaultMaxUnjoinedConnections,
		"most connections that have not joined a pool yet; further ones are refused")
	fs.IntVar(&cfg.maxUnjoinedSrc, "max-unjoined-per-source", 0,
		"most connections from one IP address that have not joined a pool yet (0 = a quarter of -max-unjoined)")
	fs.DurationVar(&cfg.recoveryGrace, "recovery-grace", registry.DefaultRecoveryGrace,
		"after a restart, how long a pool rebuilt by its returning members waits (since one last came back) for the missing ones, which are then declared dead")
	fs.DurationVar(&cfg.recoveryWindow, "recovery-window", defaultRecoveryWindow,
		"after a start, how long new members of unknown pools wait, so that the members of pools from before a restart come back first (0 = no wait)")
	fs.IntVar(&cfg.maxPoolsPerSource, "max-pools-per-source", registry.DefaultMaxPoolsPerSource,
		"most pools the members from one IP address may be in at once (0 = no limit)")
	fs.IntVar(&cfg.maxMembersPerSource, "max-members-per-source", registry.DefaultMaxMembersPerSource,
		"most members from one IP address, over all pools (0 = no limit)")
	fs.StringVar(&cfg.store, "store", "memory",
		"the `STORE` that holds the pools' state: memory (this process) or etcd://HOST:PORT[,HOST:PORT...] (an etcd cluster shared by several ibis-registry front ends)")
	fs.StringVar(&cfg.etcdTLS.CA, "etcd-ca", "", "etcd store: talk to etcd over TLS, checking its certificate against the CA in this PEM `FILE`")
	fs.StringVar(&cfg.etcdTLS.Cert, "etcd-cert", "", "etcd store: a client certificate, a PEM `FILE`, for an etcd with --client-cert-auth (with -etcd-key)")
	fs.StringVar(&cfg.etcdTLS.Key, "etcd-key", "", "etcd store: the client certificate's private key, a PEM `FILE`")
	fs.StringVar(&cfg.etcdUser, "etcd-user", "", "etcd store: log in to etcd's authentication as this `USER` (password from -etcd-password-file or $"+envEtcdPassword+")")
	fs.StringVar(&cfg.etcdPasswordFile, "etcd-password-file", "", "etcd store: a `FILE` holding -etcd-user's password (default from $"+envEtcdPasswordFile+")")
	fs.StringVar(&cfg.secretFile, "secret-file", "",
		"a `FILE` holding the secret of every pool (default from $"+envSecretFile+" or $"+envSecret+"; never on the command line: see below)")
	fs.StringVar(&cfg.poolSecrets, "pool-secrets", "",
		"a `FILE` of pools with secrets of their own, a line \"pool secret\" each (see below)")
	fs.StringVar(&cfg.tls.Cert, "tls-cert", "", "TLS: this server's certificate, a PEM `FILE` (default from $"+envTLSCert+")")
	fs.StringVar(&cfg.tls.Key, "tls-key", "", "TLS: its private key, a PEM `FILE` (default from $"+envTLSKey+")")
	fs.StringVar(&cfg.tls.CA, "tls-ca", "", "TLS: the pool's CA certificate, a PEM `FILE`: clients must present a certificate it signed (default from $"+envTLSCA+")")
	fs.Usage = func() { usage(fs, stderr) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return config{}, err
		}
		return config{}, fmt.Errorf("%w: %w", errUsage, err)
	}
	switch {
	case fs.NArg() > 0:
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	case cfg.port < 0 || cfg.port > 65535:
		return config{}, fmt.Errorf("-port %d is not a port number (0-65535)", cfg.port)
	case cfg.heartbeat <= 0:
		return config{}, fmt.Errorf("-heartbeat %v must be positive", cfg.heartbeat)
	case cfg.death <= 0:
		return config{}, fmt.Errorf("-death-timeout %v must be positive", cfg.death)
	case cfg.stats < 0:
		return config{}, fmt.Errorf("-stats %v must not be negative", cfg.stats)
	case cfg.maxFrame < registry.MinMaxFrameSize:
		return config{}, fmt.Errorf("-max-frame %d is below the minimum of %d", cfg.maxFrame, registry.MinMaxFrameSize)
	case cfg.maxWaiting < 1:
		return config{}, fmt.Errorf("-max-waiting %d must be positive", cfg.maxWaiting)
	case cfg.maxMemberBytes < minNameBytes:
		return config{}, fmt.Errorf("-max-member-bytes %d is below the minimum of %d", cfg.maxMemberBytes, minNameBytes)
	case cfg.maxPoolNames < 1:
		return config{}, fmt.Errorf("-max-pool-names %d must be positive", cfg.maxPoolNames)
	case cfg.maxPoolBytes < minNameBytes:
		return config{}, fmt.Errorf("-max-pool-bytes %d is below the minimum of %d", cfg.maxPoolBytes, minNameBytes)
	case cfg.maxUnjoined < 1:
		return config{}, fmt.Errorf("-max-unjoined %d must be positive", cfg.maxUnjoined)
	case cfg.maxUnjoinedSrc < 0:
		return config{}, fmt.Errorf("-max-unjoined-per-source %d must not be negative (0 = a quarter of -max-unjoined)", cfg.maxUnjoinedSrc)
	case cfg.recoveryGrace <= 0:
		return config{}, fmt.Errorf("-recovery-grace %v must be positive", cfg.recoveryGrace)
	case cfg.recoveryWindow < 0:
		return config{}, fmt.Errorf("-recovery-window %v must not be negative", cfg.recoveryWindow)
	case cfg.maxPoolsPerSource < 0:
		return config{}, fmt.Errorf("-max-pools-per-source %d must not be negative (0 = no limit)", cfg.maxPoolsPerSource)
	case cfg.maxMembersPerSource < 0:
		return config{}, fmt.Errorf("-max-members-per-source %d must not be negative (0 = no limit)", cfg.maxMembersPerSource)
	}
	etcd, err := parseStore(cfg.store)
	if err != nil {
		return config{}, err
	}
	cfg.etcd = etcd
	return cfg, nil
}

// newLogger logs to stderr: what needs attention (refusals, lost members' faults,
// failures) normally (warn level); joins, leaves, connections and everything else with -v
// (debug level). -events prints the pools' events on stdout.
func newLogger(verbose bool, stderr io.Writer) *zap.Logger {
	level := zapcore.WarnLevel
	if verbose {
		level = zapcore.DebugLevel
	}
	enc := zap.NewDevelopmentEncoderConfig()
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(zapcore.AddSync(stderr)), level)
	return zap.New(core)
}

// lockedWriter serialises the event log and the statistics on stdout.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// run is the whole program: it serves until ctx ends (SIGINT, SIGTERM) or
// serving fails.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	trust, err := loadTrust(cfg, getenv)
	if err != nil {
		return err
	}
	etcdOpts, etcdHow, err := etcdAccess(cfg, getenv)
	if err != nil {
		return err
	}
	log := newLogger(cfg.verbose, stderr)
	defer func() { _ = log.Sync() }()
	out := &lockedWriter{w: stdout}

	opts := []registry.ServerOption{
		registry.WithHeartbeatInterval(cfg.heartbeat),
		registry.WithDeathTimeout(cfg.death),
		registry.WithServerLogger(log),
		registry.WithMaxFrameSize(cfg.maxFrame),
		registry.WithMaxWaitingRequests(cfg.maxWaiting),
		registry.WithMaxMemberNameBytes(cfg.maxMemberBytes),
		registry.WithMaxPoolNames(cfg.maxPoolNames),
		registry.WithMaxPoolNameBytes(cfg.maxPoolBytes),
		registry.WithMaxUnjoinedConnections(cfg.maxUnjoined),
		registry.WithMaxUnjoinedPerSource(cfg.maxUnjoinedSrc),
		registry.WithRestartable(true),
		registry.WithRecoveryGrace(cfg.recoveryGrace),
		registry.WithRecoveryWindow(cfg.recoveryWindow),
		registry.WithMaxPoolsPerSource(cfg.maxPoolsPerSource),
		registry.WithMaxMembersPerSource(cfg.maxMembersPerSource),
		registry.WithEtcdStore(cfg.etcd),
	}
	opts = append(opts, trust.options...)
	opts = append(opts, etcdOpts...)
	if cfg.events {
		opts = append(opts, registry.WithEventLog(out))
	}
	addr := net.JoinHostPort(cfg.host, strconv.Itoa(cfg.port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := registry.NewServer(opts...)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	store := "ibis-registry store: memory (this process only)"
	if len(cfg.etcd) > 0 {
		store = "ibis-registry store: etcd at " + strings.Join(cfg.etcd, ",") + " (shared with every front end over it; " + etcdHow + ")"
	}
	if _, err := fmt.Fprintf(out, "ibis-registry listening on %s\n%s\n%s\n", ln.Addr(), trust.headline(), store); err != nil {
		_ = srv.Close()
		<-served
		return fmt.Errorf("write to stdout: %w", err)
	}
	if cfg.metrics != "" {
		ms, err := metrics.Serve(cfg.metrics, srv.Stats)
		if err != nil {
			_ = srv.Close()
			<-served
			return err
		}
		defer func() { _ = ms.Close() }()
		fmt.Fprintf(out, "ibis-registry metrics on http://%s/metrics\n", ms.Addr())
	}

	return serveloop.Run(ctx, log, srv, served, registry.ErrClosed, out, cfg.stats, func() string { return srv.Stats().String() })
}
