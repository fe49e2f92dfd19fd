package etcdtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// node is one etcd member run as an OS process. Its data directory, ports and log
// file stay the same across restarts, so a restarted node rejoins with its data.
type node struct {
	name       string
	dataDir    string
	logPath    string
	clientPort int
	peerPort   int
	args       []string // the whole command line after the binary, without state flags

	mu      sync.Mutex
	proc    *os.Process
	exited  chan struct{} // closed when proc has exited and been reaped
	exitErr error         // the process's exit status, valid once exited is closed
	stopped bool          // frozen by SIGSTOP
	starts  int
}

// errNotRunning is returned by operations that need a running etcd process.
var errNotRunning = errors.New("etcdtest: etcd node not running")

func (n *node) clientURL() string { return "http://127.0.0.1:" + strconv.Itoa(n.clientPort) }
func (n *node) peerURL() string   { return "http://127.0.0.1:" + strconv.Itoa(n.peerPort) }
func (n *node) endpoint() string  { return "127.0.0.1:" + strconv.Itoa(n.clientPort) }

// start runs the etcd binary. The process is started, waited for and reaped by one
// goroutine that holds its OS thread for the process's whole life: Pdeathsig fires
// when the thread that forked the child ends, and a thread that Go is free to end
// (one left locked by other code) would take the etcd process with it.
func (n *node) start(binary string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.running() {
		return fmt.Errorf("etcdtest: start %s: already running", n.name)
	}
	logf, err := os.OpenFile(n.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("etcdtest: open log of %s: %w", n.name, err)
	}
	n.starts++
	fmt.Fprintf(logf, "=== etcdtest: start %d of %s: %s %s\n", n.starts, n.name, binary, strings.Join(n.args, " "))

	cmd := exec.Command(binary, n.args...)
	cmd.Env = etcdEnv()
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = sysProcAttr()

	started := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(exited)
		defer logf.Close()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		err := cmd.Wait()
		n.mu.Lock()
		n.exitErr = err
		n.mu.Unlock()
	}()
	if err := <-started; err != nil {
		<-exited
		return fmt.Errorf("etcdtest: start %s: %w", n.name, err)
	}
	n.proc = cmd.Process
	n.exited = exited
	n.stopped = false
	return nil
}

// running reports whether the process is alive (frozen counts as alive). n.mu held.
func (n *node) running() bool {
	if n.exited == nil {
		return false
	}
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// isServing reports whether the process is alive and not frozen.
func (n *node) isServing() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.running() && !n.stopped
}

// kill sends SIGKILL and waits until the process is reaped, so that its ports are
// free when kill returns. Killing a node that is not running does nothing.
func (n *node) kill() error {
	n.mu.Lock()
	if !n.running() {
		n.mu.Unlock()
		return nil
	}
	p, exited := n.proc, n.exited
	n.mu.Unlock()
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("etcdtest: kill %s: %w", n.name, err)
	}
	select {
	case <-exited:
	case <-time.After(processTimeout):
		return fmt.Errorf("etcdtest: %s still running %v after SIGKILL", n.name, processTimeout)
	}
	n.mu.Lock()
	n.stopped = false
	n.mu.Unlock()
	return nil
}

// freeze sends SIGSTOP (freeze=true) or SIGCONT and waits until the kernel shows
// the process stopped or running again.
func (n *node) freeze(freeze bool) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.running() {
		return fmt.Errorf("%w: %s", errNotRunning, n.name)
	}
	signal, states, what := signalCont, "RSD", "SIGCONT"
	if freeze {
		signal, states, what = signalStop, "T", "SIGSTOP"
	}
	if err := signal(n.proc); err != nil {
		return fmt.Errorf("etcdtest: %s to %s: %w", what, n.name, err)
	}
	if err := waitState(n.proc.Pid, states, processTimeout); err != nil {
		return err
	}
	n.stopped = freeze
	return nil
}

// exitedWith reports whether a started process has exited, and its exit status.
func (n *node) exitedWith() (bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.exited == nil || n.running() {
		return false, nil
	}
	return true, n.exitErr
}

// etcdEnv is the test's environment without ETCD_* variables, which etcd reads as
// flags and which would otherwise change the cluster a test asked for.
func etcdEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ETCD_") {
			env = append(env, kv)
		}
	}
	return env
}
