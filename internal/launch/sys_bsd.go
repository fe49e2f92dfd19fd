//go:build unix && !linux

package launch

import "syscall"

// sysProcAttr puts the process in a process group of its own.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
