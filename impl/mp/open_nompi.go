//go:build !mpi

package mp

import (
	"context"
	"fmt"

	"github.com/ibisgo/ibis/ipl"
)

// WithMPI reports whether this build binds the MPI library (build tag mpi).
const WithMPI = false

func open(context.Context, *ipl.Config) (ipl.Ibis, error) {
	return nil, fmt.Errorf("%w: impl/mp was built without MPI: install Open MPI "+
		"(apt-get install openmpi-bin libopenmpi-dev), rebuild with go build -tags mpi "+
		"and start the program with mpirun", ipl.ErrUnsupported)
}
