//go:build mpi

package mp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/impl/mp/internal/mpi"
	"github.com/ibisgo/ibis/internal/addrlist"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// WithMPI reports whether this build binds the MPI library (build tag mpi).
const WithMPI = true

// poolInfoSize is the fixed size of the broadcast that tells every rank the registry
// address and pool name chosen by rank 0.
const poolInfoSize = 4096

func open(ctx context.Context, cfg *ipl.Config) (ipl.Ibis, error) {
	o, err := parseOptions(cfg)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger.Named("mp")
	eng, err := mpi.Start(mpi.Config{Logger: log.Named("engine"), Spin: o.spin, MaxSleep: o.maxSleep, Funneled: o.funneled})
	if err != nil {
		return nil, fmt.Errorf("%w: mp: %w", ipl.ErrUnsupported, err)
	}
	w := eng.World()
	log = log.With(zap.Int("rank", w.Rank))

	// Rank 0 runs the pool's registry; everyone learns its address by MPI_Bcast. Rank 0
	// takes part in the broadcast even when the registry fails, with the error as the
	// message, so that no rank waits for it.
	info := make([]byte, poolInfoSize)
	var srv *registry.Server
	if w.Rank == 0 {
		msg, s, err := startRegistry(cfg, w, log)
		srv = s
		if err != nil {
			msg = "error\n" + err.Error()
		}
		copy(info, msg)
	}
	fail := func(err error) (ipl.Ibis, error) {
		if srv != nil {
			_ = srv.Close()
		}
		if serr := eng.Stop(failedOpenStop); serr != nil {
			log.Debug("stopping MPI after a failed start", zap.Error(serr))
		}
		return nil, err
	}
	if err := bcast(ctx, eng, info); err != nil {
		return fail(fmt.Errorf("mp: learning the registry address from rank 0: %w", err))
	}
	kind, rest, _ := strings.Cut(string(bytes.TrimRight(info, "\x00")), "\n")
	if kind != "ok" {
		return fail(fmt.Errorf("mp: rank 0 could not start the pool's registry: %s", rest))
	}
	addr, pool, _ := strings.Cut(rest, "\n")
	addr = pickReachable(ctx, addr) // rank 0's registry on every interface: the first address that answers
	if cfg.Registry != "" && cfg.Registry != addr {
		log.Info("ignoring the configured registry: the pool of an MPI job is MPI_COMM_WORLD, with its registry on rank 0",
			zap.String("configured", cfg.Registry))
	}
	if cfg.PoolSize != 0 && cfg.PoolSize != w.Size {
		log.Warn("ignoring the configured pool size: the pool is MPI_COMM_WORLD",
			zap.Int("configured", cfg.PoolSize), zap.Int("world_size", w.Size))
	}
	cfg.Registry, cfg.Pool, cfg.PoolSize = addr, pool, w.Size
	tr := newTransport(eng, log, srv, o)
	in, err := core.Open(ctx, cfg, Name, tr)
	if err != nil {
		// core.Open closed tr (and so the engine and registry) unless Start failed.
		if tr.eng.Do(func(*mpi.Loop) {}) {
			_ = tr.Close()
		}
		return nil, err
	}
	tr.opened.Store(true)
	return in, nil
}

// startRegistry starts rank 0's embedded registry and returns the broadcast message.
func startRegistry(cfg *ipl.Config, w mpi.World, log *zap.Logger) (string, *registry.Server, error) {
	host, all := registryListen(cfg.ListenHost, w.LocalSize < w.Size)
	opts := []registry.ServerOption{registry.WithServerLogger(log.Named("registry"))}
	if cfg.HeartbeatInterval > 0 {
		opts = append(opts, registry.WithHeartbeatInterval(cfg.HeartbeatInterval))
	}
	if cfg.DeathTimeout > 0 {
		opts = append(opts, registry.WithDeathTimeout(cfg.DeathTimeout))
	}
	srv, err := registry.StartEmbedded(net.JoinHostPort(host, "0"), opts...)
	if err != nil {
		return "", nil, fmt.Errorf("starting the embedded registry on %s: %w", host, err)
	}
	addr := srv.Addr()
	if all {
		addr = everyAddress(addr, log)
	}
	msg := "ok\n" + addr + "\n" + cfg.Pool
	if len(msg) > poolInfoSize {
		_ = srv.Close()
		return "", nil, fmt.Errorf("pool name of %d bytes is too long", len(cfg.Pool))
	}
	log.Info("embedded registry started", zap.String("addr", addr), zap.String("pool", cfg.Pool))
	return msg, srv, nil
}

// everyAddress turns the address of a registry listening on every interface into the
// list of this host's addresses with its port (addrlist.Choose), for the other ranks to
// pick from.
func everyAddress(listening string, log *zap.Logger) string {
	_, p, _ := net.SplitHostPort(listening)
	port, _ := strconv.Atoi(p)
	ifaces, err := addrlist.UpAddrs()
	if err != nil {
		log.Debug("listing this host's addresses", zap.Error(err))
	}
	list := addrlist.Choose(nil, port, ifaces)
	if host, _, _ := net.SplitHostPort(list[0]); addrlist.IsLoopback(host) {
		log.Warn("the MPI job spans several nodes but this node has no address but loopback for the registry; set IBIS_HOST")
	}
	s, err := addrlist.Encode(list)
	if err != nil { // Choose keeps within the bounds
		return list[0]
	}
	return s
}

// bcast broadcasts buf from rank 0 and waits for it, or for ctx.
func bcast(ctx context.Context, eng *mpi.Engine, buf []byte) error {
	done := make(chan error, 1)
	if !eng.Do(func(l *mpi.Loop) { l.Bcast(buf, func(err error) { done <- err }) }) {
		return ipl.ErrClosed
	}
	defer eng.Blocking()()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%w: waiting for the other ranks to start: %w", ipl.ErrTimeout, ctx.Err())
		}
		return ctx.Err()
	}
}
