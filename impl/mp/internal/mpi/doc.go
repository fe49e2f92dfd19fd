// Package mpi is impl/mp's only contact with the MPI C library (Open MPI, bound through
// cgo when built with the tag mpi). It runs one engine per process: a goroutine locked
// to its OS thread that initialises MPI with MPI_THREAD_FUNNELED, makes every MPI call
// of the process, drives non-blocking sends and receives to completion, and finalises
// MPI when it stops. Other goroutines talk to it only by queueing closures (Engine.Do)
// that run on the engine's goroutine and get a *Loop, the handle through which MPI is
// used; MPI being initialisable once per process, the engine is a process-wide
// singleton (Start fails while one runs or after one has stopped).
//
// Without the tag mpi the package holds only this documentation, so that builds
// without MPI installed never see cgo.
package mpi
