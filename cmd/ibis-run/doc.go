// Command ibis-run starts a pool of Ibis processes on one machine, the way mpirun does.
//
// Usage:
//
//	ibis-run -np N [flags] [--] PROGRAM [ARGS...]
//
// It starts a registry server in-process on 127.0.0.1 (port chosen by the kernel), unless
// -registry names an external one, and then N copies of PROGRAM (a path or a name on PATH),
// each with the environment of ibis-run plus:
//
//	IBIS_REGISTRY   host:port of the registry
//	IBIS_POOL       the pool name (-pool, default a fresh random name)
//	IBIS_POOL_SIZE  N
//	IBIS_RANK       the launch index 0..N-1 (mpj takes it as the process's rank)
//	IBIS_IMPL       the implementation, when -impl is given
//	IBIS_HEARTBEAT  the heartbeat interval, when -heartbeat is given
//	IBIS_DEATH_TIMEOUT  how long a silent member stays one, when -death-timeout is given
//	IBIS_POOL_SECRET_FILE  with -secret: a file holding a fresh random pool secret
//	IBIS_TLS_CERT, IBIS_TLS_KEY, IBIS_TLS_CA  with -tls: a throw-away certificate, its key
//	                and the CA that signed it
//
// -heartbeat and -death-timeout configure the embedded registry, as -metrics does; with
// -registry they are refused, since an external registry has its own settings.
//
// -secret and -tls close and encrypt a local pool with one command: ibis-run makes a private
// directory (mode 0700) in the temporary directory, writes a random 256-bit secret to a file
// there (mode 0600) and/or a throw-away CA and one certificate for 127.0.0.1 signed by it (the
// key mode 0600), configures the embedded registry with them, gives the processes the file
// names (never the secret itself, which would show in process listings; an inherited
// IBIS_POOL_SECRET is left out), and removes the directory when the pool has ended. The
// processes need an Ibis that reads these variables (package ipl does). Both need the
// embedded registry; for an external one, give the pool's secret and certificates in the
// environment. Without -secret or -tls, an embedded registry takes the secret and TLS files
// from ibis-run's own IBIS_POOL_SECRET(_FILE) and IBIS_TLS_* when they are set, since the
// processes inherit them. A pool so secured is announced on stderr before anything else
// ("ibis-run: the pool is authenticated by a pool secret and encrypted by TLS 1.3 ...").
//
// Every line a process writes is copied to ibis-run's stdout or stderr with the launch index
// in front ("[2] ..."), a whole line at a time; a last line without a newline gets one, and a
// line longer than 1 MiB is cut into 1 MiB lines. The processes' standard input is /dev/null.
//
// When a process fails (non-zero exit or killed by a signal), the others get SIGTERM, then
// SIGKILL after the -grace period, and ibis-run exits with the failed process's exit code
// (128+signal for a signal death). It exits 0 when every process succeeds, 124 after
// -timeout, 128+signal when it is itself interrupted (the processes are stopped first), 2 for
// a usage error, 127 when PROGRAM is not found, 126 when it is not executable.
//
// When its stdout or stderr can no longer be written, the reader of a pipe having gone
// (ibis-run ... | head), ibis-run does not die of SIGPIPE: it stops the processes as when
// interrupted, drops the rest of their output, removes its files, and exits 141
// (128+SIGPIPE, as a program killed by that write), or 1 for another write error; a
// process that failed on its own before that still gives its code.
package main
