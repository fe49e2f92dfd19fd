//go:build unix

package dc_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used so far (user and system), and whether
// it could be read: on a shared machine it counts only the benchmark's own work, where
// the wall clock counts the others' too.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
