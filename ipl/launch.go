package ipl

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/ibisgo/ibis/internal/launchenv"
)

// Variables of the launchers' environment that Ibis-Go itself defines.
const (
	// EnvRank is the launch index 0..N-1 that ibis-run and the applications' -np set;
	// it wins over SLURM's and Open MPI's ranks (see LaunchRank).
	EnvRank = launchenv.EnvRank
	// EnvRegistryPort overrides the port of the registry that rank 0 serves under srun
	// or mpirun (by default 20000 + 12*(job mod 1000) + (step mod 12); docs/CLUSTERS.md).
	EnvRegistryPort = launchenv.EnvRegistryPort
)

// LaunchRank returns this process's rank as its launcher says, the one place that says
// it for mpj, dc and the applications: IBIS_RANK (ibis-run, -np), else Open MPI's
// OMPI_COMM_WORLD_RANK (mpirun), else SLURM_PROCID of an srun step, else PMIX_RANK or
// PMI_RANK; -1 when none says (or what it says is malformed: New then says why).
func LaunchRank() int {
	l, err := launchenv.Detect(os.LookupEnv)
	if err != nil || l.Launcher == "" {
		return -1
	}
	return l.Rank
}

// LaunchSize returns the number of processes launched together, as the launcher that
// LaunchRank reads says (IBIS_POOL_SIZE under ibis-run); 0 when unknown.
func LaunchSize() int {
	l, err := launchenv.Detect(os.LookupEnv)
	if err != nil {
		return 0
	}
	return l.Size
}

// beforeLaunch holds the settings applyLauncher changed, for undoLaunch.
type beforeLaunch struct {
	registry, pool, serve string
	size                  int
	dial                  time.Duration
}

// applyLauncher fills what the IBIS_* variables and options left unset from an srun or
// mpirun launch: the pool size and name, the registry at the first node (srun) or
// mpirun's host, and, on rank 0, the registry to serve there. mp makes its pool from
// the MPI job itself, so it is left alone. Without IBIS_REGISTRY every rank waits for
// rank 0's registry for as long as the join may take.
func (c *Config) applyLauncher(look func(string) (string, bool)) error {
	if c.Implementation == "mp" {
		return nil
	}
	l, err := launchenv.Detect(look)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	if l.Launcher != launchenv.Srun && l.Launcher != launchenv.Mpirun {
		return nil
	}
	saved := &beforeLaunch{registry: c.Registry, pool: c.Pool, serve: c.ServeRegistry, size: c.PoolSize, dial: c.RegistryDialTimeout}
	if c.PoolSize == 0 {
		c.PoolSize = l.Size
	}
	if c.Pool == "" {
		c.Pool = l.Pool
	}
	if c.Registry == "" {
		if len(l.RegistryHosts) == 0 {
			return fmt.Errorf("%w: started by %s, which does not say where rank 0 runs (%s); set %s=HOST:PORT of a registry for every rank",
				ErrInvalidArgument, l.Launcher, l.Note, EnvRegistry)
		}
		host := launchenv.ThisHost()
		hosts := launchenv.OrderHosts(l.RegistryHosts, host.Addrs)
		port := strconv.Itoa(l.RegistryPort)
		c.Registry = net.JoinHostPort(hosts[0], port)
		if l.Rank == 0 && c.ServeRegistry == "" {
			if err := l.ServesHere(host); err != nil {
				return fmt.Errorf("%w: %w", ErrInvalidArgument, err)
			}
			c.ServeRegistry = net.JoinHostPort("", port)
		}
		if c.RegistryDialTimeout == 0 {
			c.RegistryDialTimeout = -1
		}
	}
	c.launch = saved
	return nil
}

// undoLaunch restores what applyLauncher changed, for an implementation (mp) that was
// picked by capabilities after it ran and makes its pool itself.
func (c *Config) undoLaunch() {
	if s := c.launch; s != nil {
		c.Registry, c.Pool, c.ServeRegistry, c.PoolSize, c.RegistryDialTimeout = s.registry, s.pool, s.serve, s.size, s.dial
		c.launch = nil
	}
}
