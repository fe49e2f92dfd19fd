//go:build linux

package registryha

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/etcdtest"
	"github.com/ibisgo/ibis/registry"
)

// frontEnd is one ibis-registry process serving pools from etcd, on a port of
// 127.0.0.1 that the kernel picked. Its output goes to files in the test's temporary
// directory; the end of its log is shown when the test fails. It is killed at
// t.Cleanup, and by the kernel if the test binary dies first.
type frontEnd struct {
	t       *testing.T
	name    string
	addr    string
	logPath string

	proc    *os.Process
	exited  chan struct{} // closed once the process is reaped
	exitErr error         // its exit status, set before exited is closed
}

// listeningPrefix begins the line on which ibis-registry says where it listens.
const listeningPrefix = "ibis-registry listening on "

// startFrontEnd starts ibis-registry with its pools in the etcd cluster at
// endpoints, with args added to the command line (such as -death-timeout), and
// waits until it serves (waitServing).
func startFrontEnd(t *testing.T, name string, endpoints []string, args ...string) *frontEnd {
	t.Helper()
	exe := registryBinary(t)
	dir := t.TempDir()
	f := &frontEnd{t: t, name: name, logPath: filepath.Join(dir, name+".log")}
	outPath := filepath.Join(dir, name+".out")
	argv := append([]string{"-host", "127.0.0.1", "-port", "0", "-v",
		"-store", "etcd://" + strings.Join(endpoints, ",")}, args...)
	if err := f.start(exe, argv, outPath); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.cleanup)

	deadline := time.Now().Add(testTimeout)
	for {
		out, _ := os.ReadFile(outPath)
		if line, _, ok := bytes.Cut(out, []byte("\n")); ok {
			addr, found := strings.CutPrefix(string(line), listeningPrefix)
			if !found {
				t.Fatalf("front end %s: first line %q, want %q and its address", name, line, listeningPrefix)
			}
			f.addr = addr
			t.Logf("front end %s (pid %d) listens on %s", name, f.pid(), addr)
			f.waitServing()
			return f
		}
		select {
		case <-f.exited:
			t.Fatalf("front end %s exited before it listened (%v); its log:\n%s", name, f.exitErr, f.logTail())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("front end %s does not say where it listens after %v; its log:\n%s", name, testTimeout, f.logTail())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// start runs the process. One goroutine starts, waits for and reaps it, holding its
// OS thread all along: Pdeathsig fires when the thread that forked the child ends,
// so that thread must live as long as the process.
func (f *frontEnd) start(exe string, argv []string, outPath string) error {
	logf, err := os.Create(f.logPath)
	if err != nil {
		return fmt.Errorf("front end %s: %w", f.name, err)
	}
	outf, err := os.Create(outPath)
	if err != nil {
		_ = logf.Close()
		return fmt.Errorf("front end %s: %w", f.name, err)
	}
	cmd := exec.Command(exe, argv...)
	cmd.Stdout, cmd.Stderr = outf, logf
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	f.exited = make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(f.exited)
		defer logf.Close()
		defer outf.Close()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		f.exitErr = cmd.Wait()
	}()
	if err := <-started; err != nil {
		<-f.exited
		return fmt.Errorf("front end %s: start %s: %w", f.name, exe, err)
	}
	f.proc = cmd.Process
	return nil
}

func (f *frontEnd) pid() int { return f.proc.Pid }

// processTimeout bounds the wait for a signalled process to change its state.
const processTimeout = 30 * time.Second

// kill sends SIGKILL and waits until the process is gone.
func (f *frontEnd) kill() {
	f.t.Helper()
	if err := f.proc.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		f.t.Fatalf("front end %s: SIGKILL: %v", f.name, err)
	}
	select {
	case <-f.exited:
	case <-time.After(processTimeout):
		f.t.Fatalf("front end %s still runs %v after SIGKILL", f.name, processTimeout)
	}
	f.t.Logf("front end %s killed", f.name)
}

// stop freezes the process with SIGSTOP, as a hung machine or a paused virtual
// machine would be, and cont resumes it; each waits until the kernel shows the
// process in its new state.
func (f *frontEnd) stop() { f.freeze(true) }
func (f *frontEnd) cont() { f.freeze(false) }

func (f *frontEnd) freeze(stop bool) {
	f.t.Helper()
	sig, name, states := syscall.SIGCONT, "SIGCONT", "RSD"
	if stop {
		sig, name, states = syscall.SIGSTOP, "SIGSTOP", "T"
	}
	if err := f.proc.Signal(sig); err != nil {
		f.t.Fatalf("front end %s: %s: %v", f.name, name, err)
	}
	if err := waitProcState(f.proc.Pid, states); err != nil {
		f.t.Fatalf("front end %s: %v", f.name, err)
	}
	f.t.Logf("front end %s: %s", f.name, name)
}

// waitProcState waits until /proc says process pid is in one of states.
func waitProcState(pid int, states string) error {
	deadline := time.Now().Add(processTimeout)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return fmt.Errorf("state of process %d: %w", pid, err)
		}
		// The state follows the command name, which is in parentheses.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && strings.IndexByte(states, b[i+2]) >= 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d not in state %q after %v", pid, states, processTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// cleanup kills the process, fails the test if the race detector reported a data
// race in it, and shows the end of its log when the test failed.
func (f *frontEnd) cleanup() {
	_ = f.proc.Kill()
	select {
	case <-f.exited:
	case <-time.After(processTimeout):
		f.t.Errorf("front end %s still runs %v after SIGKILL", f.name, processTimeout)
	}
	log, err := os.ReadFile(f.logPath)
	if err != nil {
		f.t.Errorf("front end %s: read its log: %v", f.name, err)
	}
	if i := bytes.Index(log, []byte("WARNING: DATA RACE")); i >= 0 {
		f.t.Errorf("front end %s: the race detector found a data race:\n%s", f.name, log[i:min(len(log), i+8000)])
	}
	if f.t.Failed() {
		f.t.Logf("front end %s: end of its log (%s):\n%s", f.name, f.logPath, f.logTail())
	}
}

// waitServing waits until the front end serves: it has read the pools from etcd and
// takes joins. A probe member joins a pool of its own there and leaves.
func (f *frontEnd) waitServing() {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := registry.Join(ctx, f.addr, "probe-"+f.name)
	if err != nil {
		f.t.Fatalf("front end %s does not serve: %v", f.name, err)
	}
	if err := c.Close(); err != nil {
		f.t.Fatalf("front end %s: probe member: %v", f.name, err)
	}
}

// logTailLines is how much of a front end's log a failed test shows.
const logTailLines = 60

func (f *frontEnd) logTail() string {
	b, err := os.ReadFile(f.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", f.logPath, err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return strings.Join(lines, "\n")
}

// haPool starts what most fault tests begin with: a three-node etcd cluster, front
// ends A and B over it (each given args), and the test's world, whose members list
// both.
func haPool(t *testing.T, args ...string) (eps []string, a, b *frontEnd, w *world) {
	t.Helper()
	eps = etcdtest.StartCluster(t, 3).Endpoints()
	a = startFrontEnd(t, "A", eps, args...)
	b = startFrontEnd(t, "B", eps, args...)
	return eps, a, b, newWorld(t, a, b)
}

// spreadAt returns the members of ms at front end f, failing the test unless Join
// spread ms over more than f.
func spreadAt(t *testing.T, ms []*member, f *frontEnd) []*member {
	t.Helper()
	on := at(ms, f.addr)
	if len(on) == 0 || len(on) == len(ms) {
		t.Fatalf("%d of %d members joined at %s: Join should spread them over both front ends", len(on), len(ms), f.name)
	}
	return on
}
