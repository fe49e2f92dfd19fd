// Package mpi is impl/mp's only contact with the MPI C library (Open MPI, bound through
// cgo when built with the tag mpi). It runs one engine per process: a goroutine locked
// to its OS thread that initialises MPI with MPI_THREAD_SERIALIZED, drives non-blocking
// sends and receives to completion when nobody else does, and finalises MPI when it
// stops. Every MPI call is made under the engine's progress lock, by closures given
// to Engine.Do (run at once on the caller) and by goroutines polling in Engine.Await,
// which get a *Loop, the handle through which MPI is used (progress.go says who makes
// progress when); MPI being initialisable once per process, the engine is a process-wide
// singleton (Start fails while one runs or after one has stopped).
//
// Without the tag mpi the package holds only this documentation, so that builds
// without MPI installed never see cgo.
package mpi
