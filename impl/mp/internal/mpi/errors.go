package mpi

import "errors"

// Errors of the engine. Callers wrap them with what they were doing; impl/mp maps them
// onto the ipl sentinels.
var (
	// ErrMPI wraps an error code returned by an MPI call.
	ErrMPI = errors.New("mpi: call failed")
	// ErrInUse: an engine already runs in this process. MPI can be initialised only once
	// per process, so only one Ibis instance per process can use it.
	ErrInUse = errors.New("mpi: MPI is already in use by another Ibis instance in this process")
	// ErrFinalized: the process's engine has stopped and finalised MPI, which cannot be
	// initialised again.
	ErrFinalized = errors.New("mpi: MPI was finalised in this process and cannot be initialised again")
	// ErrForeign: something other than this package initialised MPI.
	ErrForeign = errors.New("mpi: MPI was initialised outside impl/mp")
	// ErrStopped: the engine has stopped; the operation was not carried out.
	ErrStopped = errors.New("mpi: engine stopped")
	// ErrStopTimeout: not every rank reached the final barrier in time, so MPI was left
	// without MPI_Finalize (which would have waited for them forever).
	ErrStopTimeout = errors.New("mpi: timed out waiting for every rank to close")
)
