//go:build mpi

package mpi

// #include <stdlib.h>
// #include "glue.h"
import "C"

import (
	"runtime"
)

// The request table: MPI_Testsome works on a C array of MPI_Request handles, and a Go
// slice beside it holds what each request needs when it completes.

// grow makes room for n requests in the C arrays MPI_Testsome works on (glue.c).
func (e *Engine) grow(n int) {
	if n <= e.capReqs {
		return
	}
	if C.mp_grow(C.int(n)) == 0 {
		panic("mpi: out of C memory for the request table")
	}
	e.capReqs = n
}

// slot appends a request entry and returns its index in the C table, where MPI writes
// its handle; pinned is the Pinner for memory the request uses (nil for none).
func (e *Engine) slot(pinned *runtime.Pinner) C.int {
	if len(e.reqs) == e.capReqs {
		e.grow(2 * e.capReqs)
	}
	e.reqs = append(e.reqs, request{pin: pinned})
	return C.int(len(e.reqs) - 1)
}

func (e *Engine) freeC() {
	C.mp_free_table()
	e.capReqs = 0
}
