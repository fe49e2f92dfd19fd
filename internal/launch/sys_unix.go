//go:build unix

package launch

import (
	"errors"
	"os"
	"syscall"
)

// Every process is started as the leader of a process group of its own, so that stopping it
// also reaches the processes it started itself (a shell script, "go run").

// signalStop and signalKill are the polite and the final request to end a process.
var (
	signalStop os.Signal = syscall.SIGTERM
	signalKill os.Signal = syscall.SIGKILL
)

// signalGroup sends sig to the process group led by p. A group that is already gone is not an
// error: the process exited on its own in the meantime.
func signalGroup(p *os.Process, sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return p.Signal(sig)
	}
	err := syscall.Kill(-p.Pid, s)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// exitSignal returns the signal that killed the process, or nil if it exited normally.
func exitSignal(ps *os.ProcessState) os.Signal {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return nil
	}
	return ws.Signal()
}

// signalNumber returns the number of sig as the shell counts it (for exit code 128+n).
func signalNumber(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return int(s)
	}
	return 0
}
