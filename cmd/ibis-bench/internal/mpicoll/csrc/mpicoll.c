/*
 * mpicoll: the Open MPI baseline of `ibis-bench collectives`.
 *
 * It times MPI's own collectives exactly as ibis-bench times mpj's: for every
 * operation and size, WARMUP untimed calls, then REPS repetitions, each preceded
 * by an MPI_Barrier and timed on every rank with MPI_Wtime; the per-repetition
 * maximum over the ranks (an MPI_Reduce with MPI_MAX after the loop) is printed
 * by rank 0, one line per operation and size:
 *
 *   T <op> <size> <p> <seconds of rep 1> ... <seconds of rep REPS>
 *
 * Sizes are bytes per rank block (MPI_BYTE counts; the reductions sum
 * MPI_UNSIGNED_CHAR); the root of the rooted operations is rank 0; Barrier is
 * measured once, with size 0.
 *
 * Usage: mpirun -np P mpicoll REPS WARMUP OPS SIZES
 *   OPS   comma-separated: barrier,bcast,reduce,allreduce,allgather,alltoall,gather,scatter
 *   SIZES comma-separated byte counts
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int call(const char *op, unsigned char *s, unsigned char *r, int n)
{
	MPI_Comm w = MPI_COMM_WORLD;
	if (!strcmp(op, "barrier"))
		return MPI_Barrier(w);
	if (!strcmp(op, "bcast"))
		return MPI_Bcast(s, n, MPI_BYTE, 0, w);
	if (!strcmp(op, "reduce"))
		return MPI_Reduce(s, r, n, MPI_UNSIGNED_CHAR, MPI_SUM, 0, w);
	if (!strcmp(op, "allreduce"))
		return MPI_Allreduce(s, r, n, MPI_UNSIGNED_CHAR, MPI_SUM, w);
	if (!strcmp(op, "allgather"))
		return MPI_Allgather(s, n, MPI_BYTE, r, n, MPI_BYTE, w);
	if (!strcmp(op, "alltoall"))
		return MPI_Alltoall(s, n, MPI_BYTE, r, n, MPI_BYTE, w);
	if (!strcmp(op, "gather"))
		return MPI_Gather(s, n, MPI_BYTE, r, n, MPI_BYTE, 0, w);
	if (!strcmp(op, "scatter"))
		return MPI_Scatter(s, n, MPI_BYTE, r, n, MPI_BYTE, 0, w);
	return -1;
}

static int split(char *s, char **out, int max)
{
	int k = 0;
	for (char *t = strtok(s, ","); t && k < max; t = strtok(NULL, ","))
		out[k++] = t;
	return k;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, p;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	if (argc != 5) {
		if (rank == 0)
			fprintf(stderr, "usage: mpicoll REPS WARMUP OPS SIZES\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int reps = atoi(argv[1]), warmup = atoi(argv[2]);
	char *ops[16], *sz[64];
	int nops = split(argv[3], ops, 16), nsz = split(argv[4], sz, 64);
	long sizes[64], maxn = 1;
	for (int i = 0; i < nsz; i++) {
		sizes[i] = atol(sz[i]);
		if (sizes[i] > maxn)
			maxn = sizes[i];
	}
	if (reps < 1 || warmup < 0) {
		if (rank == 0)
			fprintf(stderr, "mpicoll: REPS must be at least 1, WARMUP not negative\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	unsigned char *s = malloc(maxn * p), *r = malloc(maxn * p);
	double *local = malloc(sizeof(double) * reps), *worst = malloc(sizeof(double) * reps);
	if (!s || !r || !local || !worst) {
		fprintf(stderr, "mpicoll: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memset(s, rank + 1, maxn * p);
	memset(r, 0, maxn * p);
	for (int o = 0; o < nops; o++) {
		int barrier = !strcmp(ops[o], "barrier");
		for (int i = 0; i < (barrier ? 1 : nsz); i++) {
			int n = barrier ? 0 : (int)sizes[i];
			for (int k = 0; k < warmup; k++)
				if (call(ops[o], s, r, n) != MPI_SUCCESS) {
					fprintf(stderr, "mpicoll: unknown or failed operation %s\n", ops[o]);
					MPI_Abort(MPI_COMM_WORLD, 1);
				}
			for (int k = 0; k < reps; k++) {
				MPI_Barrier(MPI_COMM_WORLD);
				double t0 = MPI_Wtime();
				if (call(ops[o], s, r, n) != MPI_SUCCESS) {
					fprintf(stderr, "mpicoll: unknown or failed operation %s\n", ops[o]);
					MPI_Abort(MPI_COMM_WORLD, 1);
				}
				local[k] = MPI_Wtime() - t0;
			}
			MPI_Reduce(local, worst, reps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
			if (rank == 0) {
				printf("T %s %d %d", ops[o], n, p);
				for (int k = 0; k < reps; k++)
					printf(" %.9e", worst[k]);
				printf("\n");
				fflush(stdout);
			}
		}
	}
	free(s);
	free(r);
	free(local);
	free(worst);
	MPI_Finalize();
	return 0;
}
