//go:build !mpi

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "mpbench: built without MPI; rebuild with go build -tags mpi (Open MPI: apt-get install openmpi-bin libopenmpi-dev) and start it with mpirun -np 2")
	os.Exit(2)
}
