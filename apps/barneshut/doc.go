// Command barneshut is a Barnes-Hut N-body simulation (issue 13; the Barnes-Hut application of
// the Ibis papers and of section 6.6 of the NioIbis thesis) whose force computation is
// distributed over the processes of an Ibis pool, and which gives bit for bit the same result
// on any number of processes and any implementation.
//
//	go run ./apps/barneshut -np 4 -bodies 100000 -steps 10    four local processes (-np binds
//	                                                          each to a core of its own when
//	                                                          there are enough; -bind=false: not)
//	go run ./cmd/ibis-run -np 4 -- go run ./apps/barneshut     the same under ibis-run
//	go build -tags mpi -o bh ./apps/barneshut && mpirun -np 4 ./bh -impl mp
//
// # The computation
//
// The bodies are a Plummer model (Aarseth, Henon and Wielen 1974; G = 1, total mass 1,
// standard units), generated from -seed: by default two spheres of half the mass each,
// centred at -/+(1.5, 0.4, 0) and approaching at -/+(0.3, 0, 0), so that they collide and
// merge (-spheres 1: one sphere). Or -input FILE, the plain-text format of NEMO's atos that
// the SPLASH-2 and Java Barnes-Hut codes read: N, the dimension 3, the time, then N masses,
// N positions (x y z) and N velocities (x y z), separated by any white space, each number
// of magnitude at most 1e100 (beyond, forces and energies overflow). A malformed file
// gets an error naming its line. Every process reads the file (on a cluster it must be
// visible to all of them); rank 0 writes -out. -out FILE writes the final state in the same format with
// %.17g (so reading it back gives the same bits).
//
// Forces: an octree with leaves of at most -leaf bodies (default 8), built over the bodies
// sorted by their Morton (Z-order) key in the bounding cube (21 bits per dimension; ties by
// body index); monopole cells (centre of mass); Plummer softening -eps (0.025); a cell is
// taken whole when its side over the distance from the body to its centre of mass is below
// -theta (0.5) and the body is outside it, else it is opened. The walk of a body visits
// children in a fixed order. Integration: leapfrog kick-drift-kick with -dt (0.025) for
// -steps (10) steps.
//
// # Distribution
//
// Every process holds every body. Each step every process does the kick and drift of all
// bodies (cheap and identical everywhere), builds the same tree, and takes its contiguous
// block of the Morton order: blocks of equal cost, the cost of a body being the number of
// interactions of its walk in the previous step (equal sizes the first time). It walks the
// tree for its bodies only, and one mpj Allgatherv gives every process every block's
// accelerations, potentials and interaction counts (5 float64 per body); then all do the
// second kick. Since the tree, and each body's walk, are the same whichever process does it,
// and the costs are exact counts, the run is bitwise identical for any number of processes.
// What is not distributed (the tree build, O(N log N), and the integration, O(N)) limits the
// speedup; the walk is most of the time.
//
// # Output
//
// Rank 0 prints a progress line per step on stderr (-q: none), a summary, and one line for
// scripts:
//
//	barneshut-result bodies=20000 procs=2 impl=tcp steps=5 seconds=... ips=... drift=... checksum=... theta=0.5 leaf=8
//
// seconds is rank 0's time for the steps (not the set-up and the first force evaluation);
// ips is all processes' interactions (body-body and body-cell) in those steps per second;
// drift is (E_end - E_start)/|E_start|, the energies from the tree potentials; checksum is
// the sum of |x|+|y|+|z| of the final positions in body order, printed with %.17g.
// -verify compares the final accelerations of at least 1,000 bodies (all if fewer; evenly
// spread over the body order) with direct summation and prints the median, 99th-percentile
// and RMS relative errors; a NaN or infinite acceleration on either side (bodies so far
// apart that distances overflow) counts as an infinite error, and the run fails (exit 1)
// naming those bodies. -image FILE.png draws the final bodies projected on the x-y plane,
// with x and y axes and the step and simulated time in the title; with -image-every K also
// FILE-NNNNNN.png (the step in six digits) at step 0 and every K steps. Rank 0 names each
// file it writes on stderr ("barneshut: wrote FILE (step K, t=T)"), also with -q.
//
// Figures and commands: docs/BARNESHUT.md.
package main
