// Declarations of the C side of the engine (glue.c).
#ifndef IBIS_MP_GLUE_H
#define IBIS_MP_GLUE_H
#include <mpi.h>

typedef struct {
	int rank, size, local_size, tag_ub, provided, cpus;
} mp_world_t;

typedef struct {
	int found, src, tag, count, outcount;
	MPI_Message msg;
} mp_poll_t;

int mp_init(mp_world_t *w, int serialized);
int mp_finalize(void);
int mp_poll(mp_poll_t *p, int probe, MPI_Request *reqs, int n, int *indices);
int mp_isend(void *buf, int count, int dest, int tag, MPI_Request *req, int *done);
int mp_imrecv(void *buf, int count, MPI_Message *msg, MPI_Request *req, int *done);
int mp_ibarrier(MPI_Request *req);
int mp_ibcast(void *buf, int count, MPI_Request *req);
int mp_test(MPI_Request *req, int *flag);
void mp_error_string(int code, char *out, int cap);
int mp_initialized(void);
int mp_bench_setup(void);
void mp_bench_free(void);
int mp_bench_send(void *buf, int count, int peer);
int mp_bench_recv(void *buf, int count, int peer);
int mp_bench_barrier(void);
void mp_yield(void);
void mp_library_version(char *out, int cap);

#endif
