package main

// Process resources: the file-descriptor limit and the CPU time used.

import (
	"fmt"
	"syscall"
	"time"
)

// raiseFileLimit makes sure this process may hold at least need file descriptors: it
// raises the soft RLIMIT_NOFILE to the hard limit when the soft one is lower (the Go
// runtime already does this at start-up on Linux; this also covers processes whose
// limit was lowered since), and fails with a clear message when even the hard limit
// is too low. It returns the soft limit in force.
func raiseFileLimit(need uint64) (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("reading RLIMIT_NOFILE: %w", err)
	}
	if lim.Cur < need && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return 0, fmt.Errorf("raising RLIMIT_NOFILE to %d: %w", lim.Max, err)
		}
	}
	if lim.Cur < need {
		return lim.Cur, fmt.Errorf("%w: this process needs about %d file descriptors, but RLIMIT_NOFILE is %d (hard %d): raise it (ulimit -n) or use fewer connections", errUsage, need, lim.Cur, lim.Max)
	}
	return lim.Cur, nil
}

// processCPU returns the CPU time (user and system) this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
