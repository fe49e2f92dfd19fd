package applaunch

import (
	"os/exec"

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
// them). selfexec runs it on a thread of its own that it discards once the child is
// reaped, so no other work runs on the pinned thread.
func startOn(cmd *exec.Cmd, cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	_ = unix.SchedSetaffinity(0, &set) // a speed hint: if refused, the child starts unbound
	return cmd.Start()
}
