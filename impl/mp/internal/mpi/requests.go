//go:build mpi

package mpi

// #include <stdlib.h>
// #include "glue.h"
import "C"

import (
	"runtime"
	"unsafe"
)

// The request table: MPI_Testsome works on a C array of MPI_Request handles, and a Go
// slice beside it holds what each request needs when it completes.

// grow makes room for n requests in the C arrays MPI_Testsome works on.
func (e *Engine) grow(n int) {
	if n <= e.capReqs {
		return
	}
	size := C.size_t(n) * C.size_t(unsafe.Sizeof(C.MPI_Request(nil)))
	e.creqs = (*C.MPI_Request)(C.realloc(unsafe.Pointer(e.creqs), size))
	e.cidx = (*C.int)(C.realloc(unsafe.Pointer(e.cidx), C.size_t(n)*C.size_t(unsafe.Sizeof(C.int(0)))))
	if e.creqs == nil || e.cidx == nil {
		panic("mpi: out of C memory for the request table")
	}
	e.capReqs = n
}

// slot appends a request entry and returns where MPI writes its handle; pinned is the
// Pinner for memory the request uses (nil for none).
func (e *Engine) slot(pinned *runtime.Pinner) *C.MPI_Request {
	if len(e.reqs) == e.capReqs {
		e.grow(2 * e.capReqs)
	}
	e.reqs = append(e.reqs, request{pin: pinned})
	return (*C.MPI_Request)(unsafe.Add(unsafe.Pointer(e.creqs), uintptr(len(e.reqs)-1)*unsafe.Sizeof(C.MPI_Request(nil))))
}

func (e *Engine) freeC() {
	C.free(unsafe.Pointer(e.creqs))
	C.free(unsafe.Pointer(e.cidx))
	C.free(unsafe.Pointer(e.poll))
	e.creqs, e.cidx, e.poll = nil, nil, nil
}
