package tcp

import (
	"fmt"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// PropertySpin (or $IBIS_TCP_SPIN) sets how long a connection's reader polls an empty
// socket before it parks in Go's network poller: a Go duration such as "20us", or "0"
// to park at once. Polling saves the wake-up a parked reader pays per small message and
// at the start and in the chunks of every large one (see impl/internal/sockets/spin.go),
// at the price of a core busy for up to that long per wait; a connection whose poll
// runs out stops polling until data comes quickly again, and at most half a process's
// Ps poll at a time. TLS connections never poll.
const (
	PropertySpin = "tcp.spin"
	EnvSpin      = "IBIS_TCP_SPIN"
)

// DefaultSpin is the polling time when PropertySpin is not set.
const DefaultSpin = 20 * time.Microsecond

// maxSpin bounds PropertySpin: beyond a millisecond polling only burns a core.
const maxSpin = time.Millisecond

// spinFrom reads PropertySpin from the configuration.
func spinFrom(cfg *ipl.Config) (time.Duration, error) {
	v := cfg.Property(PropertySpin)
	if v == "" {
		return DefaultSpin, nil
	}
	d, err := time.ParseDuration(v)
	if v == "0" {
		d, err = 0, nil
	}
	if err != nil || d < 0 || d > maxSpin {
		return 0, fmt.Errorf("tcp: %w: property %s (or $%s) = %q: want a duration from 0 to %s, such as 20us", ipl.ErrInvalidArgument, PropertySpin, EnvSpin, v, maxSpin)
	}
	return d, nil
}
