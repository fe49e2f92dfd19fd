package applaunch

import (
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// allowedCPUs returns the CPUs this process may run on, in order, or nil if the
// system will not say.
func allowedCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var cpus []int
	for c := 0; c < len(set)*64 && len(cpus) < set.Count(); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// startOn starts cmd bound to one CPU: the child is forked from an OS thread whose
// affinity is that CPU, so every thread of the child, from its first instruction, inherits
// it (binding the child's threads after it started would race with its runtime creating
// them). The thread is locked to this goroutine and never unlocked, so Go discards it when
// the goroutine ends instead of reusing a pinned thread for other work.
func startOn(cmd *exec.Cmd, cpu int) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // no UnlockOSThread: see above
		var set unix.CPUSet
		set.Set(cpu)
		_ = unix.SchedSetaffinity(0, &set) // a speed hint: if refused, the child starts unbound
		errc <- cmd.Start()
	}()
	return <-errc
}
