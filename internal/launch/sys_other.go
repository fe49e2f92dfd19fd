//go:build !unix

package launch

import (
	"errors"
	"os"
	"syscall"
)

// Without process groups and signals, stopping a process kills it; there is no grace period.
var (
	signalStop = os.Kill
	signalKill = os.Kill
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

func signalGroup(p *os.Process, sig os.Signal) error {
	err := p.Signal(sig)
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

func exitSignal(*os.ProcessState) os.Signal { return nil }

func signalNumber(os.Signal) int { return 0 }
