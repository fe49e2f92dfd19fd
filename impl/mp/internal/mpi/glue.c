//go:build mpi

// The C side of the engine: one function per MPI operation the engine uses, so that
// the Go side never touches Open MPI's handle macros.
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <unistd.h>
#include <mpi.h>
#include "glue.h"

// mp_comm is the engine's private duplicate of MPI_COMM_WORLD: its any-source,
// any-tag probes never take messages of a program that also uses MPI itself.
static MPI_Comm mp_comm = MPI_COMM_NULL;

int mp_init(mp_world_t *w, int serialized) {
	int rc, flag = 0;
	void *ub = NULL;
	MPI_Comm shm;
	// Open MPI would otherwise install handlers for SIGSEGV, SIGBUS, SIGFPE and SIGABRT
	// over the Go runtime's, turning Go panics into MPI aborts.
	setenv("OMPI_MCA_opal_signal", "", 0);
	// Serialized: the Go side lets any goroutine call MPI while it holds the engine's
	// progress lock, so calls never overlap but come from many threads. Funneled: the
	// engine's thread makes them all.
	rc = MPI_Init_thread(NULL, NULL, serialized ? MPI_THREAD_SERIALIZED : MPI_THREAD_FUNNELED, &w->provided);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Comm_dup(MPI_COMM_WORLD, &mp_comm);
	if (rc != MPI_SUCCESS) return rc;
	MPI_Comm_set_errhandler(mp_comm, MPI_ERRORS_RETURN);
	MPI_Comm_rank(mp_comm, &w->rank);
	MPI_Comm_size(mp_comm, &w->size);
	rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
	if (rc != MPI_SUCCESS) return rc;
	MPI_Comm_size(shm, &w->local_size);
	// The node's processors, whatever this rank is bound to.
	w->cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	MPI_Comm_free(&shm);
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
	w->tag_ub = (flag && ub) ? *(int *)ub : 32767;
	return MPI_SUCCESS;
}

int mp_finalize(void) {
	if (mp_comm != MPI_COMM_NULL) MPI_Comm_free(&mp_comm);
	return MPI_Finalize();
}


// The request table MPI_Testsome works on, with room for mp_cap requests (the Go side
// keeps what each one needs beside it), and the indices of the completed ones.
MPI_Request *mp_reqs = NULL;
int *mp_idx = NULL;
static int mp_cap = 0;
mp_poll_t mp_last;
char mp_small[MP_SMALL];
int mp_yielding = 0;
int mp_done = 0;

// mp_grow makes room for cap requests; 0 when C memory ran out.
int mp_grow(int cap) {
	MPI_Request *r;
	int *x;
	if (cap <= mp_cap) return 1;
	r = realloc(mp_reqs, (size_t)cap * sizeof(MPI_Request));
	if (r == NULL) return 0;
	mp_reqs = r;
	x = realloc(mp_idx, (size_t)cap * sizeof(int));
	if (x == NULL) return 0;
	mp_idx = x;
	mp_cap = cap;
	return 1;
}

void mp_free_table(void) {
	free(mp_reqs);
	free(mp_idx);
	mp_reqs = NULL;
	mp_idx = NULL;
	mp_cap = 0;
}

// mp_poll makes up to turns turns of the engine in one cgo call, into mp_last: each
// takes the next matched message (if probe is set) and collects completed requests
// among the first n of the table; it stops at the first turn that finds either, or
// when Go code waits for the progress lock (mp_yielding). One call for many empty
// turns saves the cgo crossing of each. With small set, a message found of at most
// MP_SMALL bytes is received at once into mp_small (MPI_Mrecv): a message that small
// is there whole when it is matched under the eager protocol (Open MPI's TCP and
// shared-memory transports send up to at least 4 KiB eagerly unless an eager limit is
// set lower), so the call does not wait, and Go makes no call of its own to receive it.
int mp_poll(int probe, int n, int turns, int small) {
	int rc = MPI_SUCCESS, i;
	MPI_Status st;
	mp_poll_t *p = &mp_last;
	p->found = 0;
	p->outcount = 0;
	p->received = 0;
	if (!probe && n == 0) turns = 0; // nothing to look for
	for (i = 0; i < turns; i++) {
		if (probe) {
			rc = MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, mp_comm, &p->found, &p->msg, &st);
			if (rc != MPI_SUCCESS) break;
			if (p->found) {
				p->src = st.MPI_SOURCE;
				p->tag = st.MPI_TAG;
				MPI_Get_count(&st, MPI_BYTE, &p->count);
				if (small && p->count <= MP_SMALL) {
					rc = MPI_Mrecv(mp_small, p->count, MPI_BYTE, &p->msg, MPI_STATUS_IGNORE);
					if (rc != MPI_SUCCESS) break;
					p->received = 1;
				}
			}
		}
		if (n > 0) {
			rc = MPI_Testsome(n, mp_reqs, &p->outcount, mp_idx, MPI_STATUSES_IGNORE);
			if (rc != MPI_SUCCESS) break;
			if (p->outcount == MPI_UNDEFINED) p->outcount = 0;
		}
		if (p->found || p->outcount > 0 || __atomic_load_n(&mp_yielding, __ATOMIC_RELAXED) > 0) break;
	}
	return rc;
}

// mp_isend and mp_imrecv start a request into slot and test it at once: a small
// message is usually done by then, which saves the engine a turn before its
// completion is seen. Buffers come as integers: the Go side has pinned them.
// mp_test_started tests a request that has just started, once. One that ended in an
// error is gone (freed by MPI): done, with the error. One whose test failed while it
// is still there stays, not done, for MPI_Testsome to report, since MPI may still
// use its buffer.
static int mp_test_started(int slot) {
	int rc = MPI_Test(&mp_reqs[slot], &mp_done, MPI_STATUS_IGNORE);
	if (rc == MPI_SUCCESS) return rc;
	if (mp_reqs[slot] == MPI_REQUEST_NULL) {
		mp_done = 1;
		return rc;
	}
	mp_done = 0;
	return MPI_SUCCESS;
}

int mp_isend(uintptr_t buf, int count, int dest, int tag, int slot) {
	int rc = MPI_Isend((void *)buf, count, MPI_BYTE, dest, tag, mp_comm, &mp_reqs[slot]);
	mp_done = 0;
	if (rc != MPI_SUCCESS) return rc;
	return mp_test_started(slot);
}

int mp_imrecv(uintptr_t buf, int count, MPI_Message msg, int slot) {
	int rc = MPI_Imrecv((void *)buf, count, MPI_BYTE, &msg, &mp_reqs[slot]);
	mp_done = 0;
	if (rc != MPI_SUCCESS) return rc;
	return mp_test_started(slot);
}

int mp_ibarrier(int slot) { return MPI_Ibarrier(mp_comm, &mp_reqs[slot]); }

int mp_ibcast(uintptr_t buf, int count, int slot) {
	return MPI_Ibcast((void *)buf, count, MPI_BYTE, 0, mp_comm, &mp_reqs[slot]);
}

void mp_error_string(int code, char *out, int cap) {
	int len = 0;
	if (cap < MPI_MAX_ERROR_STRING) { out[0] = 0; return; }
	if (MPI_Error_string(code, out, &len) != MPI_SUCCESS) len = 0;
	out[len] = 0;
}

int mp_initialized(void) {
	int a = 0, b = 0;
	MPI_Initialized(&a);
	MPI_Finalized(&b);
	return a || b;
}

// The benchmark's baseline: blocking calls on a communicator of its own.
static MPI_Comm mp_bench_comm = MPI_COMM_NULL;

int mp_bench_setup(void) {
	if (mp_bench_comm != MPI_COMM_NULL) return MPI_SUCCESS;
	return MPI_Comm_dup(MPI_COMM_WORLD, &mp_bench_comm);
}

void mp_bench_free(void) {
	if (mp_bench_comm != MPI_COMM_NULL) MPI_Comm_free(&mp_bench_comm);
}

int mp_bench_send(void *buf, int count, int peer) {
	return MPI_Send(buf, count, MPI_BYTE, peer, 1, mp_bench_comm);
}

int mp_bench_recv(void *buf, int count, int peer) {
	return MPI_Recv(buf, count, MPI_BYTE, peer, 1, mp_bench_comm, MPI_STATUS_IGNORE);
}

int mp_bench_barrier(void) { return MPI_Barrier(mp_bench_comm); }

void mp_yield(void) { sched_yield(); }

void mp_library_version(char *out, int cap) {
	int len = 0;
	if (cap < MPI_MAX_LIBRARY_VERSION_STRING) { out[0] = 0; return; }
	if (MPI_Get_library_version(out, &len) != MPI_SUCCESS) len = 0;
	out[len] = 0;
}
