package mp

import (
	"context"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/ipl"
)

// Name is the implementation's registered name.
const Name = "mp"

// priority puts mp after the socket implementations when ipl.New chooses by
// capability: it only makes sense under an MPI launcher, so a program gets it by
// asking for it (-impl mp, IBIS_IMPL=mp).
const priority = 20

// It registers always, with or without the build tag mpi, so that -impl mp in a
// program built without MPI fails with a message saying how to rebuild instead of
// "not linked in".
func init() { ipl.Register(Name, priority, driver{}) }

type driver struct{}

// Capabilities: every port capability, and the Ibis capabilities of the embedded
// registry except malleability, since the pool is MPI_COMM_WORLD and has a fixed size.
func (driver) Capabilities() []string {
	return append(core.PortCapabilities(), core.RegistryCapabilities()...)
}

func (driver) Open(ctx context.Context, cfg *ipl.Config) (ipl.Ibis, error) { return open(ctx, cfg) }
