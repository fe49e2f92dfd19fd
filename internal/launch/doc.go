// Package launch starts a group of local processes that belong together, the way mpirun does
// on one machine, and supervises them as one unit.
//
// Every line a process writes to its standard output or standard error is copied to the
// group's output with the process's launch index in front ("[2] hello"), one whole line at a
// time, so the output of many processes stays readable. When one process fails, the others are
// asked to stop (SIGTERM to their process groups) and are killed (SIGKILL) if they are still
// running after a grace period, so a broken pool never hangs.
//
// The package knows nothing about Ibis: the caller decides each process's environment. It is
// the one launcher of the module's commands: cmd/ibis-run adds the registry and the IBIS_*
// variables, cmd/ibis-bench starts its peer processes with it.
package launch
