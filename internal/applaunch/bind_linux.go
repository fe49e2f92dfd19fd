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
// them). selfexec runs it on a thread locked to it; the thread's own affinity is set back
// once the child is forked, as other goroutines use the thread again later.
func startOn(cmd *exec.Cmd, cpu int) error {
	var was, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		return cmd.Start() // a speed hint: unbound when the affinity is not to be had
	}
	set.Set(cpu)
	_ = unix.SchedSetaffinity(0, &set) // if refused, the child starts unbound
	err := cmd.Start()
	_ = unix.SchedSetaffinity(0, &was) // what this thread could run on before, which it had
	return err
}
