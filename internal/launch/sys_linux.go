//go:build linux

package launch

import "syscall"

// sysProcAttr puts the process in a process group of its own and has the kernel kill it if
// the launcher dies without being able to stop it (SIGKILL to the launcher).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
