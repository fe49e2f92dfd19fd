//go:build linux

package etcdtest

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"time"
)

// clusterSupported says whether StartCluster can run etcd processes here.
const clusterSupported = true

// sysProcAttr puts an etcd process in a process group of its own (a terminal's ^C
// reaches the test, which then kills it) and has the kernel kill it when the thread
// that started it dies, so that no etcd outlives a killed test binary.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalStop and signalCont freeze and resume a process.
func signalStop(p *os.Process) error { return p.Signal(syscall.SIGSTOP) }
func signalCont(p *os.Process) error { return p.Signal(syscall.SIGCONT) }

// waitState waits until the kernel reports process pid in one of states ("T" for
// stopped, "S" or "R" for running), so that a frozen node is frozen when Stop returns.
func waitState(pid int, states string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return fmt.Errorf("etcdtest: read state of process %d: %w", pid, err)
		}
		// The state follows the command name, which is in parentheses.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
			if bytes.IndexByte([]byte(states), b[i+2]) >= 0 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("etcdtest: process %d not in state %q after %v", pid, states, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
