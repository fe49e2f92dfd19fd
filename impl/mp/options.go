//go:build mpi

package mp

import (
	"fmt"
	"strconv"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// Properties (ipl.WithProperty) that tune impl/mp; each is a Go duration.
const (
	// PropSpin: how long the engine polls MPI after its last work before it sleeps
	// (default 10ms).
	PropSpin = "mp.spin"
	// PropMaxSleep: the longest sleep of an idle engine, the worst extra delay of a
	// message reaching an idle process (default 1ms).
	PropMaxSleep = "mp.maxsleep"
	// PropWaitSpin: how long a goroutine waiting for MPI (a receive, an in-place send,
	// credit) polls MPI for its answer before it blocks (default 200us).
	PropWaitSpin = "mp.waitspin"
	// PropCloseTimeout: how long Close waits for every rank to close (default 10m; also
	// IBIS_MP_CLOSE_TIMEOUT).
	PropCloseTimeout = "mp.closetimeout"
	// EnvCloseTimeout sets PropCloseTimeout from the environment.
	EnvCloseTimeout = "IBIS_MP_CLOSE_TIMEOUT"
	// PropFunneled: "true" makes one goroutine make every MPI call (MPI_THREAD_FUNNELED),
	// the rest of the process handing it work, instead of each goroutine making its
	// own calls in turn (MPI_THREAD_SERIALIZED, the default); slower (every message
	// crosses threads), for an MPI library whose serialized mode misbehaves. Also
	// IBIS_MP_FUNNELED.
	PropFunneled = "mp.funneled"
	// EnvFunneled sets PropFunneled from the environment.
	EnvFunneled = "IBIS_MP_FUNNELED"
)

// DefaultCloseTimeout bounds Close's wait for the other ranks. MPI_Finalize waits for
// every rank, and a rank that exits without it makes mpirun end the job, so the wait
// is long: it only guards against a rank that never closes its Ibis.
const DefaultCloseTimeout = 10 * time.Minute

// DefaultWaitSpin is PropWaitSpin's default.
const DefaultWaitSpin = 200 * time.Microsecond

type options struct {
	spin, maxSleep, waitSpin, closeTimeout time.Duration
	funneled                               bool
}

func init() {
	ipl.RegisterPropertyEnv(PropCloseTimeout, EnvCloseTimeout)
	ipl.RegisterPropertyEnv(PropFunneled, EnvFunneled)
	for _, p := range []string{PropSpin, PropMaxSleep, PropWaitSpin} {
		ipl.RegisterProperty(p)
	}
}

func parseOptions(cfg *ipl.Config) (options, error) {
	o := options{closeTimeout: DefaultCloseTimeout, waitSpin: DefaultWaitSpin}
	get := func(key string, into *time.Duration) error {
		v := cfg.Property(key)
		if v == "" {
			return nil
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("mp: property %s=%q: want a positive duration such as 500us", key, v)
		}
		*into = d
		return nil
	}
	if err := get(PropSpin, &o.spin); err != nil {
		return o, err
	}
	if err := get(PropMaxSleep, &o.maxSleep); err != nil {
		return o, err
	}
	if err := get(PropWaitSpin, &o.waitSpin); err != nil {
		return o, err
	}
	if err := get(PropCloseTimeout, &o.closeTimeout); err != nil {
		return o, err
	}
	if v := cfg.Property(PropFunneled); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return o, fmt.Errorf("mp: property %s=%q: want true or false", PropFunneled, v)
		}
		o.funneled = b
	}
	return o, nil
}
