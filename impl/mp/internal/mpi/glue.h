// Declarations of the C side of the engine (glue.c).
#ifndef IBIS_MP_GLUE_H
#define IBIS_MP_GLUE_H
#include <stdint.h>
#include <mpi.h>

typedef struct {
	int rank, size, local_size, tag_ub, provided, cpus;
} mp_world_t;

// MP_SMALL is the size up to which mp_poll receives a matched message itself, into
// mp_small, in the same call that found it.
#define MP_SMALL 1024

typedef struct {
	int found, src, tag, count, outcount;
	int received; // the message is received already: its bytes are in mp_small
	MPI_Message msg;
} mp_poll_t;

// The engine's state on the C side (glue.c): the request table, its completed indices
// and the last poll's result. Go reads them in place; the calls take no pointers, so
// that cgo has no argument to check.
extern MPI_Request *mp_reqs;
extern int *mp_idx;
extern mp_poll_t mp_last;
extern char mp_small[MP_SMALL];
// mp_yielding is raised by Go code that waits for the progress lock: a bounded poll
// loop (mp_poll) gives the lock up at its next turn.
extern int mp_yielding;
// mp_done says whether the request mp_isend or mp_imrecv started is complete already.
extern int mp_done;

int mp_init(mp_world_t *w, int serialized);
int mp_finalize(void);
int mp_grow(int cap);
void mp_free_table(void);
int mp_poll(int probe, int n, int turns, int small);
int mp_isend(uintptr_t buf, int count, int dest, int tag, int slot);
int mp_imrecv(uintptr_t buf, int count, MPI_Message msg, int slot);
int mp_ibarrier(int slot);
int mp_ibcast(uintptr_t buf, int count, int slot);
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
