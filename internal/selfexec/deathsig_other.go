//go:build !linux

package selfexec

import (
	"os/exec"
	"syscall"
)

// setDeathSignal does nothing: only Linux sends a signal when the parent dies.
func setDeathSignal(*exec.Cmd, syscall.Signal) {}
