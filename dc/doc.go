// Package dc is divide-and-conquer with work stealing on the Ibis portability layer, in
// the way of Satin (the Ibis divide-and-conquer system) and Jcluster: a recursive program
// spawns jobs and syncs on them, runs on one process or on a pool of hundreds, and idle
// processes steal work automatically. It uses only ipl, so it runs on tcp, nio and mp.
//
// # Programming model
//
// A kind of job is a Go function from an argument to a result, registered by name with
// Define (at package level: a stolen job travels as its kind's name and argument, and
// every process must know the kind). Inside a job, Kind.Spawn starts a child and returns
// its Future; Ctx.Sync waits for every child of the job; Future.Value is the child's
// result after that Sync. Kind.Call runs a job at once as a plain call.
//
// A spawned job waits in its process's work queue, a stack: Sync runs its children
// newest first as plain function calls, with no goroutine switch and no serialization;
// thieves take the oldest and largest jobs. The newest jobs lie in a part only the worker
// touches, without atomic operations; the oldest in a Chase-Lev deque that thieves steal
// from. The worker moves all its jobs to the deque whenever it finds the deque empty or
// sees that a thief took from it, at its next Spawn or Sync; a job that is about to wait
// for other processes calls Ctx.Ibis or Ctx.Done first, which does the same. Tasks are
// recycled, so a spawn that is not stolen allocates nothing. A Future is valid until the
// job that spawned it returns.
//
// A stolen job's argument and result travel as Ibis objects (msgpack: exported fields);
// the result goes back to the job's owner, which counts the child as finished.
//
// # Running
//
// Every process of the pool creates an Ibis with IbisOptions, calls New and then Run
// with the same kind: the winner of an election runs the root job, the others steal, and
// Run returns the root's result on every process. The root then collects every
// process's statistics (Runtime.Report) and terminates the pool's run. A closed-world
// pool (a pool size) starts when all its members have joined, and a member that calls
// Run only after the root's end reached it gets the result too; in an open pool a
// process that joins later starts stealing at once.
//
// # Steal algorithms
//
// Chosen with WithAlgorithm (the applications' -steal):
//
//   - RS, random stealing: an idle process asks a random other process for a job and
//     waits for the answer; on "none", it asks another.
//   - CRS, cluster-aware random stealing (Satin): a process's site is its identifier's
//     tag (IBIS_SITE, see IbisOptions); steals inside the site are synchronous, as in
//     RS, and at most one asynchronous steal from a random process of another site is
//     outstanding at a time, so that wide-area latency hides behind local steals. A
//     refused wide-area steal makes the next one wait: one measured wide-area round
//     trip, doubling per refusal in a row up to 100 ms, until a steal brings a job.
//   - TRS, transitive random stealing (Jcluster): a thief asks the process it last stole
//     from first; a victim with nothing to give passes the request on to the process it
//     last stole from (at most once round the pool) instead of answering "none", and the
//     process that has work answers the thief directly.
//
// An idle process that finds nothing after asking as many processes as there are backs
// off (20 µs, doubling to 2 ms), woken at once by news. Each process's dispatcher
// goroutine answers steal requests from the work queue while its worker computes.
//
// # Faults and the end
//
// The registry tells every process when another dies or leaves: the jobs that process
// had stolen are run again by their owners, so the program's result stays right; a
// steal request waiting on it counts as refused. A process that the pool counts dead
// while it still runs (it was stopped or starved past the registry's death timeout)
// ends its part of the run with ErrCutOff as soon as it hears of it: its own Died
// event, its Ibis ending, a member refusing it. A process whose registry is lost for
// good goes on while the others answer (a registry that is gone cuts nobody off; it
// probes them every second) and ends with ErrCutOff at the first send that fails,
// since no death would be reported to it any more. A job that panics fails the run
// (ErrJobFailed, on every process); a run whose root stops it (its context ends) ends
// on the others with ErrRunStopped. The death of the root fails the run with
// ErrRootDied. Termination needs no central detection: the root job's return is the
// end, and the root tells every process.
//
// # Wide-area emulation
//
// WithWideAreaDelay holds back every message to another site, for machines whose kernel
// cannot emulate latency (no tc netem); scripts/dc-sites.sh uses the kernel's emulation
// when it can and this one otherwise. docs/DC.md has the measurements.
package dc
