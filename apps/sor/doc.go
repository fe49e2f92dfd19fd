// Command sor solves a Laplace problem by red/black successive over-relaxation on the
// processes of an Ibis pool, with rows distributed in blocks, and gives bit for bit the same
// grid, iteration count and checksum on any number of processes and any implementation
// (issue 12; the SOR application of the Ibis papers and of section 6.5 of the NioIbis thesis).
//
//	go run ./apps/sor -np 4 -n 2048                  four local processes, embedded registry
//	go run ./cmd/ibis-run -np 4 -- go run ./apps/sor  the same under ibis-run
//	IBIS_REGISTRY=head:8888 IBIS_POOL=r1 IBIS_POOL_SIZE=64 ./sor -n 8192   on a cluster
//	go build -tags mpi -o sor ./apps/sor && mpirun -np 4 ./sor -impl mp -n 2048
//
// # The computation
//
// The grid is (N+2) x (N+2) float64 (-n N, default 1024): row 0 is 4.56, row N+1 is 9.85,
// column 0 is 7.32 and column N+1 is 6.88 on the other rows, the interior starts at 0.
// With r = (cos(pi/(N+2)) + cos(pi/(N+2)))/2 and w_opt = 2/(1+sqrt(1-r*r)), omega is
// 0.8*w_opt and stopdiff 0.00001/(2-w_opt). An iteration updates colour 0, then colour 1;
// colour c is the interior cells (i, j) with i+j+c odd, each set to g + omega*(gNew-g), with
// gNew = (((up + down) + left) + right)/4 and the product rounded before the addition (no
// fused multiply-add). The iteration's change is the largest |gNew-g| of both colours on all
// processes. The run stops after the iteration whose change is at most stopdiff, or after
// -iters iterations if that comes first. The checksum adds the interior cells in row-major
// order into one float64, passed from rank to rank; it is printed with %.17g.
//
// Within a colour every update reads only cells of the other colour, so the order of the
// updates, and hence the split into blocks, changes no bit; a maximum is exact in any order.
// That also lets a process relax its rows in one pass per iteration instead of one per
// colour: colour 1 of a row right after colour 0 of the row below it, once every cell it
// reads is final (a wavefront), so the grid streams through memory once per iteration.
//
// # Communication
//
// Interior rows are split into contiguous blocks, as even as possible. Before each colour a
// process sends its first and last rows to its neighbours and receives theirs (two exchanges
// per iteration); after both colours a max-Allreduce of one float64 gives every process the
// change. Without -async a process updates colour 0 of its first and last rows once the
// first exchange has come, sends them, and relaxes the rows in between (both colours, as a
// wavefront) while the second exchange travels. With -async the first exchange is hidden too:
// colour 0 of the inner rows, and colour 1 of those not next to the first and last, go before
// the neighbours' rows are waited for.
//
// sor uses mpj (MPI-style messaging on IPL) for both, rather than IPL ports directly as the
// Java Ibis SOR does: mpj's Allreduce combines in an order fixed by the ranks, so the change
// is bit-identical everywhere (a must for every process to stop at the same iteration); its
// Irecv/Send give the overlap of -async without a goroutine per neighbour; its rank follows
// the launcher (IBIS_RANK from -np or ibis-run, the rank under mpirun or srun), so the block a
// process holds is known without an election; and the same code runs over tcp, nio and mp.
// What it costs over raw ports is a header per message and one dispatcher goroutine: small
// against a row of N+2 doubles.
//
// # Flags and output
//
// -np P starts P processes of this executable with an embedded registry, as ibis-run does
// (same IBIS_* environment), each bound to a core of its own when there are at least P
// (as mpirun binds ranks; -bind=false leaves them to the kernel's scheduler, see docs/SOR.md);
// without it sor joins the pool its environment names, or is a pool of one. -impl and -property (flavours, such as -property nio.send=thread) come from
// ipl.Flags. -verify gathers the grid on rank 0, runs the sequential computation there and
// requires every cell, the iteration count, the change and the checksum to be bitwise equal.
// -image FILE.png makes rank 0 gather the grid and write it as a heat map (column j across,
// row i up, borders included, with a colour bar of the cell values) and name the file on
// stderr. Runs longer than 3 seconds print a progress line on stderr every 3 seconds (-q:
// none).
//
// Rank 0 prints a summary and one line for scripts:
//
//	sor-result n=2048 procs=2 impl=tcp async=false iters=200 change=... checksum=... seconds=... mcups=...
//
// seconds is rank 0's time from a barrier after set-up to the last iteration's allreduce;
// mcups is million cell updates per second, N*N*iterations/seconds/1e6.
//
// Figures, the C baseline (testdata/sor.c) and the commands: docs/SOR.md.
package main
