// Package selfexec runs an executable, by default the running one, as a child process in a
// child role: the one way the module's tests, benchmarks and launchers start "my own binary
// again" (a test binary whose TestMain plays a peer, a registry, a rank; a program's main).
//
// The child gets this process's environment (without the IBIS_* variables when asked, so that
// a pool the test runs in does not leak into it), the marker variables that make its
// TestMain or main take the child role, and GORACE=atexit_sleep_ms=0 so that a race-enabled
// child does not sleep a second before it exits. When the context ends the child gets SIGTERM
// (a launcher in front, such as mpirun, passes it on and cleans up); its output is captured
// unless the caller takes it, and Wait never hangs on pipes that a grandchild inherited.
//
// Groups of processes supervised as one, with prefixed output, are internal/launch's job.
package selfexec
