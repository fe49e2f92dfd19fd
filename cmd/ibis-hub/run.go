package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/ibisgo/ibis/internal/hub"
	"github.com/ibisgo/ibis/internal/poolsecrets"
	"github.com/ibisgo/ibis/internal/serveloop"
)

// errUsage marks errors in the command line; errExplained, one of them, those the flag
// package has already explained on stderr.
var (
	errUsage     = errors.New("bad command line")
	errExplained = fmt.Errorf("%w (see above)", errUsage)
)

// config is the parsed command line.
type config struct {
	listen      string
	secretFile  string
	poolSecrets string
	logLevel    zapcore.Level
	stats       time.Duration

	maxConns, maxConnsPerIP           int
	maxHandshakes, maxHandshakesPerIP int
	maxMembers, maxPending            int
	handshakeTimeout, relayTimeout    time.Duration
	keepalive, probeTimeout           time.Duration
	forward                           bool
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("ibis-hub", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.listen, "listen", ":7700", "`HOST:PORT` to listen on (port 0: any free one)")
	fs.StringVar(&cfg.secretFile, "secret-file", "",
		"a `FILE` holding the secret of every pool (default from $"+poolsecrets.EnvSecretFile+" or $"+poolsecrets.EnvSecret+"; never on the command line)")
	fs.StringVar(&cfg.poolSecrets, "pool-secrets", "", "a `FILE` of pools with secrets of their own, a line \"pool secret\" each")
	cfg.logLevel = zapcore.InfoLevel
	fs.Var(&cfg.logLevel, "log-level", "log `level`: debug (every registration and relay), info, warn or error (default info)")
	fs.DurationVar(&cfg.stats, "stats", 0, "print statistics to stdout at this interval (0 = never)")
	fs.IntVar(&cfg.maxConns, "max-conns", hub.DefaultMaxConns, "most connections in all")
	fs.IntVar(&cfg.maxConnsPerIP, "max-conns-per-ip", hub.DefaultMaxConnsPerIP, "most connections from one IP address")
	fs.IntVar(&cfg.maxHandshakes, "max-handshakes", hub.DefaultMaxHandshakes, "most connections still in their pool check")
	fs.IntVar(&cfg.maxHandshakesPerIP, "max-handshakes-per-ip", hub.DefaultMaxHandshakesPerIP,
		"most connections from one IP address still in their pool check")
	fs.IntVar(&cfg.maxMembers, "max-members", hub.DefaultMaxMembers, "most registered members, over all pools")
	fs.IntVar(&cfg.maxPending, "max-pending", hub.DefaultMaxPending, "most relays waiting for their target")
	fs.DurationVar(&cfg.handshakeTimeout, "handshake-timeout", hub.DefaultHandshakeTimeout,
		"time for a connection's pool check and first request")
	fs.DurationVar(&cfg.relayTimeout, "relay-timeout", hub.DefaultRelayTimeout, "time a relay waits for its target to connect")
	fs.DurationVar(&cfg.keepalive, "keepalive", hub.DefaultKeepalive,
		"ping interval on members' control connections; a member silent for three is forgotten")
	fs.DurationVar(&cfg.probeTimeout, "probe-timeout", hub.DefaultProbeTimeout, "time for each dial-back of a member's advertised address")
	fs.BoolVar(&cfg.forward, "forward", true, "forward relays to members of other hubs (one hop)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return config{}, err
		}
		return config{}, fmt.Errorf("%w: %w", errExplained, err)
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"max-conns", cfg.maxConns}, {"max-conns-per-ip", cfg.maxConnsPerIP}, {"max-handshakes", cfg.maxHandshakes},
		{"max-handshakes-per-ip", cfg.maxHandshakesPerIP}, {"max-members", cfg.maxMembers}, {"max-pending", cfg.maxPending}} {
		if c.v < 1 {
			return config{}, fmt.Errorf("%w: -%s %d must be positive", errUsage, c.name, c.v)
		}
	}
	for _, c := range []struct {
		name string
		v    time.Duration
	}{{"handshake-timeout", cfg.handshakeTimeout}, {"relay-timeout", cfg.relayTimeout},
		{"keepalive", cfg.keepalive}, {"probe-timeout", cfg.probeTimeout}} {
		if c.v <= 0 {
			return config{}, fmt.Errorf("%w: -%s %v must be positive", errUsage, c.name, c.v)
		}
	}
	if cfg.stats < 0 {
		return config{}, fmt.Errorf("%w: -stats %v must not be negative", errUsage, cfg.stats)
	}
	return cfg, nil
}

// headline says whether the hub is open or authenticated, and how.
func headline(s poolsecrets.Secrets) string {
	if !s.Authenticated() {
		return "ibis-hub pools: OPEN (not authenticated) (" + s.Summary() + ")"
	}
	return "ibis-hub pools: authenticated (" + s.Summary() + "; members authenticate each other end to end through it; relayed data is encrypted only where the pool uses TLS)"
}

func newLogger(level zapcore.Level, stderr io.Writer) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(zapcore.AddSync(stderr)), level))
}

// run is the whole program: it serves until ctx ends (SIGINT, SIGTERM) or serving
// fails.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	secrets, err := poolsecrets.Load(cfg.secretFile, cfg.poolSecrets, getenv)
	if err != nil {
		return err
	}
	log := newLogger(cfg.logLevel, stderr)
	defer func() { _ = log.Sync() }()
	srv := hub.NewServer(
		hub.WithSecrets(secrets.Lookup()),
		hub.WithLogger(log),
		hub.WithMaxConns(cfg.maxConns),
		hub.WithMaxConnsPerIP(cfg.maxConnsPerIP),
		hub.WithMaxHandshakes(cfg.maxHandshakes),
		hub.WithMaxHandshakesPerIP(cfg.maxHandshakesPerIP),
		hub.WithMaxMembers(cfg.maxMembers),
		hub.WithMaxPending(cfg.maxPending),
		hub.WithHandshakeTimeout(cfg.handshakeTimeout),
		hub.WithRelayTimeout(cfg.relayTimeout),
		hub.WithKeepalive(cfg.keepalive),
		hub.WithProbeTimeout(cfg.probeTimeout),
		hub.WithForwarding(cfg.forward),
	)
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.listen, err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if _, err := fmt.Fprintf(stdout, "ibis-hub listening on %s\n%s\n", ln.Addr(), headline(secrets)); err != nil {
		_ = srv.Close()
		<-served
		return fmt.Errorf("write to stdout: %w", err)
	}
	return serveloop.Run(ctx, log, srv, served, hub.ErrClosed, stdout, cfg.stats, func() string { return srv.Stats().String() })
}
