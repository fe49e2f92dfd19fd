//go:build !linux

package etcdtest

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// clusterSupported says whether StartCluster can run etcd processes here: the fault
// tests need Linux (SIGSTOP, and Pdeathsig so that no etcd outlives the test).
const clusterSupported = false

func sysProcAttr() *syscall.SysProcAttr { return nil }

func signalStop(*os.Process) error { return errors.ErrUnsupported }
func signalCont(*os.Process) error { return errors.ErrUnsupported }

func waitState(int, string, time.Duration) error { return nil }
