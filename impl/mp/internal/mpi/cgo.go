//go:build mpi

package mpi

/*
#cgo pkg-config: ompi-c
#include <stdlib.h>
#include "glue.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// errorString turns an MPI error code into its text.
func errorString(code C.int) string {
	buf := (*C.char)(C.malloc(C.MPI_MAX_ERROR_STRING + 1))
	defer C.free(unsafe.Pointer(buf))
	C.mp_error_string(code, buf, C.MPI_MAX_ERROR_STRING+1)
	return C.GoString(buf)
}

// check wraps a failed MPI call's code as an error naming the call.
func check(call string, rc C.int) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	return fmt.Errorf("%w: %s: %s (code %d)", ErrMPI, call, errorString(rc), int(rc))
}

// ptr is the address MPI gets for b (0 for an empty slice), as an integer: the
// callers have pinned b, and cgo then has no pointer argument to check, which cost
// more than the rest of a call.
func ptr(b []byte) C.uintptr_t {
	if len(b) == 0 {
		return 0
	}
	return C.uintptr_t(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}
