package mp

import "github.com/ibisgo/ibis/ipl"

// Properties (ipl.WithProperty) that tune impl/mp; each is a Go duration.
const (
	// PropSpin: how long the engine polls MPI after its last work before it sleeps
	// (default 10ms).
	PropSpin = "mp.spin"
	// PropMaxSleep: the longest sleep of an idle engine, the worst extra delay of a
	// message reaching an idle process (default 1ms).
	PropMaxSleep = "mp.maxsleep"
	// PropWaitSpin: how long a goroutine waiting for MPI (a receive, an in-place send,
	// credit) polls MPI for its answer before it blocks (default 200us).
	PropWaitSpin = "mp.waitspin"
	// PropCloseTimeout: how long Close waits for every rank to close (default 10m; also
	// IBIS_MP_CLOSE_TIMEOUT).
	PropCloseTimeout = "mp.closetimeout"
	// EnvCloseTimeout sets PropCloseTimeout from the environment.
	EnvCloseTimeout = "IBIS_MP_CLOSE_TIMEOUT"
	// PropFunneled: "true" makes one goroutine make every MPI call (MPI_THREAD_FUNNELED),
	// the rest of the process handing it work, instead of each goroutine making its
	// own calls in turn (MPI_THREAD_SERIALIZED, the default); slower (every message
	// crosses threads), for an MPI library whose serialized mode misbehaves. Also
	// IBIS_MP_FUNNELED.
	PropFunneled = "mp.funneled"
	// EnvFunneled sets PropFunneled from the environment.
	EnvFunneled = "IBIS_MP_FUNNELED"
)

// The properties are registered in every build, with or without the build tag mpi, as
// the driver is: a program that sets them for its runs under mp is not refused (as a
// misspelling) when it runs on another implementation from a build without MPI.
func init() {
	ipl.RegisterPropertyEnv(PropCloseTimeout, EnvCloseTimeout)
	ipl.RegisterPropertyEnv(PropFunneled, EnvFunneled)
	for _, p := range []string{PropSpin, PropMaxSleep, PropWaitSpin} {
		ipl.RegisterProperty(p)
	}
}
