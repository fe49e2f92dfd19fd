package selfexec

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel send sig to cmd's process when the thread that forked it
// ends (Pdeathsig).
func setDeathSignal(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = sig
}
