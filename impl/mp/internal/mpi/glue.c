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


// mp_poll is one turn of the engine in one cgo call: take the next matched message (if
// probe is set) and collect completed requests.
int mp_poll(mp_poll_t *p, int probe, MPI_Request *reqs, int n, int *indices) {
	int rc;
	MPI_Status st;
	p->found = 0;
	p->outcount = 0;
	if (probe) {
		rc = MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, mp_comm, &p->found, &p->msg, &st);
		if (rc != MPI_SUCCESS) return rc;
		if (p->found) {
			p->src = st.MPI_SOURCE;
			p->tag = st.MPI_TAG;
			MPI_Get_count(&st, MPI_BYTE, &p->count);
		}
	}
	if (n > 0) {
		rc = MPI_Testsome(n, reqs, &p->outcount, indices, MPI_STATUSES_IGNORE);
		if (rc != MPI_SUCCESS) return rc;
		if (p->outcount == MPI_UNDEFINED) p->outcount = 0;
	}
	return MPI_SUCCESS;
}

// mp_isend and mp_imrecv start a request and test it at once: a small message is
// usually done by then, which saves the engine a turn before its completion is seen.
int mp_isend(void *buf, int count, int dest, int tag, MPI_Request *req, int *done) {
	int rc = MPI_Isend(buf, count, MPI_BYTE, dest, tag, mp_comm, req);
	*done = 0;
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Test(req, done, MPI_STATUS_IGNORE);
}

int mp_imrecv(void *buf, int count, MPI_Message *msg, MPI_Request *req, int *done) {
	int rc = MPI_Imrecv(buf, count, MPI_BYTE, msg, req);
	*done = 0;
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Test(req, done, MPI_STATUS_IGNORE);
}

int mp_ibarrier(MPI_Request *req) { return MPI_Ibarrier(mp_comm, req); }

int mp_ibcast(void *buf, int count, MPI_Request *req) {
	return MPI_Ibcast(buf, count, MPI_BYTE, 0, mp_comm, req);
}

int mp_test(MPI_Request *req, int *flag) { return MPI_Test(req, flag, MPI_STATUS_IGNORE); }

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
