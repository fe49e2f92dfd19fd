package tcp

import (
	"time"

	"github.com/ibisgo/ibis/impl/internal/sockets"
	"github.com/ibisgo/ibis/ipl"
)

// PropertySpin (or $IBIS_TCP_SPIN) sets how long a connection's reader polls an empty
// socket before it parks in Go's network poller: a Go duration such as "20us", or "0"
// to park at once; default 20us. Polling saves the wake-up a parked reader pays per
// small message and at the start of every large one, at the price of a core busy for up
// to that long per wait; how it adapts and is bounded is described in
// impl/internal/sockets/spin.go.
const (
	PropertySpin = "tcp.spin"
	EnvSpin      = "IBIS_TCP_SPIN"
)

// spinFrom reads PropertySpin from the configuration.
func spinFrom(cfg *ipl.Config) (time.Duration, error) {
	return sockets.SpinFrom(cfg, Name, PropertySpin, EnvSpin)
}
