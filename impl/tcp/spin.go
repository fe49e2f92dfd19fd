package tcp

import (
	"time"

	"github.com/ibisgo/ibis/impl/internal/sockets"
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

// spinFrom reads PropertySpin from the configuration.
func spinFrom(cfg *ipl.Config) (time.Duration, error) {
	return sockets.SpinFrom(cfg, Name, PropertySpin, EnvSpin)
}
