package core

import (
	"context"
	"fmt"
	"net"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// checkPoolRegistry refuses a pool of several processes with no registry set: the
// process would run one of its own, on a port the kernel picks and nobody is told, and
// wait for ever for the others.
func checkPoolRegistry(cfg *ipl.Config) error {
	if cfg.PoolSize <= 1 || cfg.Registry != "" || cfg.ServeRegistry != "" {
		return nil
	}
	return fmt.Errorf("%w: a pool of %d processes needs a registry they all reach, and none is set (%s): "+
		"this process would run one of its own, which no other process can find; start an ibis-registry and "+
		"give every process its address in %s, or launch them with ibis-run (or a program's -np)",
		ipl.ErrInvalidArgument, cfg.PoolSize, ipl.EnvRegistry, ipl.EnvRegistry)
}

// startRegistry starts the registry this instance runs in-process, if any, and returns
// the address to join: with cfg.Registry empty a registry for a pool of this process
// (or of processes told its address) on ListenHost, with cfg.ServeRegistry the pool's
// registry on that address (rank 0 under srun or mpirun), joined at cfg.Registry.
func (in *Instance) startRegistry(cfg *ipl.Config) (string, error) {
	listen := cfg.ServeRegistry
	if listen == "" {
		if cfg.Registry != "" {
			return cfg.Registry, nil
		}
		listen = net.JoinHostPort(embeddedHost(cfg.ListenHost), "0")
	}
	var sopts []registry.ServerOption
	sopts = append(sopts, registry.WithServerLogger(in.log.Named("registry")))
	if cfg.HeartbeatInterval > 0 {
		sopts = append(sopts, registry.WithHeartbeatInterval(cfg.HeartbeatInterval))
	}
	if cfg.DeathTimeout > 0 {
		sopts = append(sopts, registry.WithDeathTimeout(cfg.DeathTimeout))
	}
	if in.secret.IsSet() {
		sopts = append(sopts, registry.WithServerSecret(in.secret.Bytes()))
	}
	if in.tlsServer != nil {
		sopts = append(sopts, registry.WithServerTLS(in.tlsServer))
	}
	srv, err := registry.StartEmbedded(listen, sopts...)
	if err != nil {
		if cfg.ServeRegistry != "" {
			return "", fmt.Errorf("serving the pool's registry (if another job holds the port, set %s or %s): %w",
				ipl.EnvRegistryPort, ipl.EnvRegistry, err)
		}
		return "", err
	}
	in.embedded = srv
	in.servesPool = cfg.ServeRegistry != ""
	regAddr := srv.Addr()
	if in.servesPool && cfg.Registry != "" {
		regAddr = cfg.Registry
	}
	in.log.Info("embedded registry started", zap.String("addr", srv.Addr()), zap.String("join", regAddr))
	return regAddr, nil
}

// dialOptions are the registry client's options for reaching a registry that may not
// be up yet (cfg.RegistryDialTimeout).
func dialOptions(cfg *ipl.Config) []registry.Option {
	switch d := cfg.RegistryDialTimeout; {
	case d < 0:
		return []registry.Option{registry.WithDialTimeout(0)} // until the join's context ends
	case d > 0:
		return []registry.Option{registry.WithDialTimeout(d)}
	}
	return nil
}

// drainRegistry waits, when this instance serves the pool's registry, until the other
// members have left or died, so that the registry does not vanish under them; a member
// that went silent is declared dead within the death timeout, which bounds the wait.
func (in *Instance) drainRegistry() {
	if !in.servesPool {
		return
	}
	n := in.embedded.Members()
	bound := in.embedded.DeathTimeout() + 2*in.embedded.HeartbeatInterval() + time.Second
	in.log.Info("keeping the pool's registry up until the other members have left",
		zap.Int("members", n), zap.Duration("at_most", bound))
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	if err := in.embedded.WaitIdle(ctx); err != nil {
		in.log.Warn("closing the pool's registry with members left", zap.Int("members", in.embedded.Members()), zap.Error(err))
	}
}
