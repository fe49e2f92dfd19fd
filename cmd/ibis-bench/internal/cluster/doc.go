// Package cluster puts the processes of one ibis-bench experiment into a pool: either
// peers it starts itself (the binary re-executes itself, as separate OS processes,
// around a registry embedded in the first process), or the members of a pool that
// someone else started (ibis-run, mpirun, srun: every process runs the same command
// with IBIS_REGISTRY set). Either way one member is elected coordinator and runs the
// measurement; the others serve it, and every member gets a context that ends when a
// member it depends on leaves or dies, so no peer outlives a failed run. Peers are
// started with internal/launch, ibis-run's launcher: their standard error lines carry
// the launch index ("[0] ..."), and when one fails the others are stopped.
package cluster
