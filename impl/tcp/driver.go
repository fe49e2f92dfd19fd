package tcp

import (
	"context"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/ipl"
)

// Name is the implementation's registered name.
const Name = "tcp"

func init() {
	ipl.Register(Name, 0, driver{})
	ipl.RegisterPropertyEnv(PropertySpin, EnvSpin)
}

type driver struct{}

// Capabilities: every port capability of the IPL and every Ibis capability the central
// registry provides.
func (driver) Capabilities() []string {
	return append(append(core.PortCapabilities(), core.RegistryCapabilities()...), ipl.Malleable)
}

func (driver) Open(ctx context.Context, cfg *ipl.Config) (ipl.Ibis, error) {
	t, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	return core.Open(ctx, cfg, Name, t)
}
