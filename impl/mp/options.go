//go:build mpi

package mp

import (
	"fmt"
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
	// PropWaitSpin: how long a goroutine waiting for the engine (a receive, an in-place
	// send) polls for the answer, yielding the CPU, before it blocks (default 200us).
	PropWaitSpin = "mp.waitspin"
	// PropCloseTimeout: how long Close waits for every rank to close (default 10m; also
	// IBIS_MP_CLOSE_TIMEOUT).
	PropCloseTimeout = "mp.closetimeout"
	// EnvCloseTimeout sets PropCloseTimeout from the environment.
	EnvCloseTimeout = "IBIS_MP_CLOSE_TIMEOUT"
)

// DefaultCloseTimeout bounds Close's wait for the other ranks. MPI_Finalize waits for
// every rank, and a rank that exits without it makes mpirun end the job, so the wait
// is long: it only guards against a rank that never closes its Ibis.
const DefaultCloseTimeout = 10 * time.Minute

// DefaultWaitSpin is PropWaitSpin's default.
const DefaultWaitSpin = 200 * time.Microsecond

type options struct {
	spin, maxSleep, waitSpin, closeTimeout time.Duration
}

func init() { ipl.RegisterPropertyEnv(PropCloseTimeout, EnvCloseTimeout) }

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
	return o, nil
}
