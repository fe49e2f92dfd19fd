//go:build mpi

package mp

import (
	"fmt"
	"strconv"
	"time"

	"github.com/ibisgo/ibis/ipl"
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
